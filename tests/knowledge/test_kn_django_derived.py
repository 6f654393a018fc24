"""Knowledge derived from billing (billing/knowledge.py): rule explanations regenerate when a
version is added, scenario FAQs, the demo seed is idempotent, and Chinese questions find the right rule."""

from __future__ import annotations

import io
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from billing.knowledge import scenario_faq_records
from billing.services import billing_rule_version_add
from conversations.knowledge.demo import seed
from conversations.knowledge.engine import RetrievalFilters
from conversations.knowledge.models import KnowledgeChunk, KnowledgeSource
from conversations.knowledge.services import index, retrieval
from workflows.models import AuditEvent

pytestmark = pytest.mark.django_db
SH = ZoneInfo("Asia/Shanghai")

PAYLOAD = [
    {"name": "day", "type": "periodic", "time_window": {"start": "08:00", "end": "20:00"},
     "unit_minutes": 30, "unit_price": 3, "free_minutes": 15, "max_charge": 30},
    {"name": "night", "type": "free", "time_window": {"start": "20:00", "end": "08:00"}},
]


@pytest.fixture(autouse=True)
def _fresh_index():  # noqa: ANN202
    index.invalidate_index()
    yield
    index.invalidate_index()


def _add_version(effective_from: str, effective_to: str | None = None, price: int = 3) -> None:
    payload = [dict(PAYLOAD[0], unit_price=price), PAYLOAD[1]]
    billing_rule_version_add(
        data={
            "rule_code": "BJ-CY-TEST",
            "name": "朝阳测试停车场 日间计费 (Chaoyang test lot: day rate)",
            "scope": {"city_code": "110100", "lot_codes": ["BJ-CY-001"]},
            "version": {"effective_from": effective_from, "effective_to": effective_to, "rule_payload": payload},
        }
    )


@pytest.mark.parametrize(
    ("cap_period", "zh", "en"),
    [
        (None, "跨零点的时段在零点分成两天", "split at midnight into two calendar days"),
        ("calendar_day", "每天最高收费10.00元", "capped at ¥10.00 per day for this segment (per calendar day)"),
        ("window", "每个时段（整段，如一整夜）最高收费10.00元", "a window that crosses midnight is one period"),
    ],
)
def test_rule_explanation_says_what_one_cap_period_is(django_capture_on_commit_callbacks, cap_period, zh, en) -> None:  # noqa: ANN001
    night = {"name": "night", "type": "periodic", "time_window": {"start": "20:00", "end": "08:00"},
             "unit_minutes": 60, "unit_price": 1, "max_charge": 10}
    if cap_period:
        night["cap_period"] = cap_period
    with django_capture_on_commit_callbacks(execute=True):
        billing_rule_version_add(data={
            "rule_code": "BJ-NIGHT-TEST", "name": "夜间封顶 (night cap)",
            "scope": {"city_code": "110100", "lot_codes": ["BJ-CY-009"]},
            "version": {"effective_from": "2026-01-01T00:00:00+08:00", "effective_to": None, "rule_payload": [night]},
        })
    content = KnowledgeSource.objects.get(source_id="rule:BJ-NIGHT-TEST:v1").content
    assert zh in content and en in content


def test_rule_explanations_regenerate_when_a_version_is_added(django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    from billing import knowledge

    knowledge.connect()  # a second wiring (BillingConfig.ready() made the first) adds no second receiver
    with django_capture_on_commit_callbacks(execute=True):
        _add_version("2026-01-01T00:00:00+08:00", "2026-06-01T00:00:00+08:00")
    ingested = AuditEvent.objects.filter(event_type="knowledge_source_ingested", payload__source_id="rule:BJ-CY-TEST:v1")
    assert ingested.count() == 1  # one receiver: the explanation is written once
    v1 = KnowledgeSource.objects.get(source_id="rule:BJ-CY-TEST:v1")
    assert (v1.doc_type, v1.source_type, v1.city_code, v1.lot_codes, v1.version) == (
        "rule_explain", "biz_derived", "110100", ["BJ-CY-001"], 1)
    assert v1.effective_from == datetime(2026, 1, 1, tzinfo=SH) and v1.effective_to == datetime(2026, 6, 1, tzinfo=SH)
    assert v1.source == "billing:BJ-CY-TEST:v1"
    # Both languages, the caps and free minutes, and examples computed by the fee engine.
    assert "每30分钟3.00元" in v1.content and "¥3.00 per 30 minutes" in v1.content
    assert "前15分钟免费" in v1.content and "capped at ¥30.00 per day" in v1.content
    assert "例1：1月1日 10:00 入场，10:16 出场，共停车16分钟，应收3.00元" in v1.content
    # The long example: day one capped at 30.00, one more hour (6.00) the next morning.
    assert "total ¥36.00 (segment 'day' 780 min ¥36.00, capped, 15 free minutes" in v1.content
    v1_updated = v1.updated_at

    with django_capture_on_commit_callbacks(execute=True):
        _add_version("2026-06-01T00:00:00+08:00", price=4)
    v2 = KnowledgeSource.objects.get(source_id="rule:BJ-CY-TEST:v2")
    assert v2.version == 2 and v2.effective_from == datetime(2026, 6, 1, tzinfo=SH) and v2.effective_to is None
    assert "每30分钟4.00元" in v2.content and "6月1日" in v2.content
    assert KnowledgeSource.objects.get(source_id="rule:BJ-CY-TEST:v1").updated_at == v1_updated  # untouched
    # Retrieval at a moment picks the version in force then.
    at = retrieval.knowledge_retrieve(
        "朝阳测试停车场怎么收费",
        filters=RetrievalFilters(doc_type="rule_explain", at_time=datetime(2026, 7, 1, tzinfo=SH)),
    )
    assert {h.chunk.source_id for h in at.hits} == {"rule:BJ-CY-TEST:v2"}


def test_scenario_faqs_cover_every_intent() -> None:
    records = {r.source_id: r for r in scenario_faq_records()}
    assert len(records) == 20
    assert "应收 4.00 元" in records["faq:SCN-001"].text
    assert "沪B88888" in records["faq:SCN-009"].text and "13.00" in records["faq:SCN-009"].text
    assert "转主管人工复核" in records["faq:SCN-020"].text
    assert records["faq:SCN-018"].lot_codes == ("SH-HP-009",) and records["faq:SCN-018"].doc_type == "faq"


@pytest.fixture
def first_seed(no_demo_data):  # noqa: ANN001, ANN201
    """What the knowledge seed reports into a database without knowledge (the billing demo data first)."""
    from billing.demo import seed as billing_seed

    out = io.StringIO()
    billing_seed(out)  # the billing data and the knowledge derived from it
    seed(out)  # the knowledge packs
    return out.getvalue()


def test_demo_seed_is_idempotent(first_seed) -> None:  # noqa: ANN001
    assert "knowledge packs: " in first_seed and "scenario FAQs: 20 created" in first_seed
    sources = {s.source_id: s.updated_at for s in KnowledgeSource.objects.all()}
    chunks = set(KnowledgeChunk.objects.values_list("pk", flat=True))
    events = AuditEvent.objects.count()
    assert {"rule:SH-PD-DAY:v1", "rule:SH-PD2-DAYNIGHT:v2", "faq:SCN-020", "parking_help_desk.billing_basics_zh"} <= set(sources)
    from billing.knowledge import seed as billing_knowledge_seed

    out = io.StringIO()
    billing_knowledge_seed(out)
    seed(out)
    assert out.getvalue().count("0 created, 0 updated") == 3  # packs, rule explanations, scenario FAQs
    assert {s.source_id: s.updated_at for s in KnowledgeSource.objects.all()} == sources
    assert set(KnowledgeChunk.objects.values_list("pk", flat=True)) == chunks
    assert AuditEvent.objects.count() == events


@pytest.mark.parametrize(
    ("query", "filters", "expected"),
    [
        ("浦东一号停车场怎么收费", {}, "rule:SH-PD-DAY:v1"),
        ("浦东一号停车场怎么收费", {"doc_type": "rule_explain"}, "rule:SH-PD-DAY:v1"),
        ("徐汇一号停车场收费标准", {"doc_type": "rule_explain"}, "rule:SH-XH-FREE30:v1"),
        ("静安一号停车场阶梯计费", {"doc_type": "rule_explain"}, "rule:SH-JA-TIERED:v1"),
        ("How does the Xuhui lot charge?", {}, "rule:SH-XH-FREE30:v1"),
        ("车牌沪B88888有没有欠费", {}, "faq:SCN-009"),
        ("浦东二号停车场怎么收费", {"doc_type": "rule_explain", "at_time": datetime(2026, 3, 1, tzinfo=SH)},
         "rule:SH-PD2-DAYNIGHT:v1"),
        ("浦东二号停车场怎么收费", {"doc_type": "rule_explain", "at_time": datetime(2026, 5, 1, tzinfo=SH)},
         "rule:SH-PD2-DAYNIGHT:v2"),
    ],
)
def test_questions_find_the_right_source(demo, query, filters, expected) -> None:  # noqa: ANN001
    result = retrieval.knowledge_retrieve(query, filters=RetrievalFilters(**filters), top_k=5)
    assert result.hits[0].chunk.source_id == expected
    assert result.citations[0].source_id == expected
