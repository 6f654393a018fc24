"""Knowledge evaluation: replay a query set through retrieval and the help desk, score it.

Metrics (RAG-006): retrieval hit rate (an expected source in the top 5), citation coverage
(tool answers that cite the expected source), empty-retrieval rate (positive queries that
found nothing), tool-call compliance (the tools called are the ones expected, none for
negatives) and answer consistency (the answer states the ground truth: amount, rule and
version, arrears, verification result).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

EXTRA = Path(__file__).resolve().parent / "eval" / "extra_queries.jsonl"
# Thresholds set just under the first honest run (README); CI fails below them.
THRESHOLDS = {"retrieval_hit_rate": 0.95, "citation_coverage": 0.95, "empty_retrieval_rate_max": 0.02,
              "tool_call_compliance": 0.95, "answer_consistency": 0.95}
TOOLS = {"rule_explain": "billing.rule_explain", "arrears_check": "billing.arrears_check", "fee_verify": "billing.fee_verify"}


def scenario_queries() -> list[dict[str, Any]]:
    """The 20 demo scenarios asked in Chinese and in English, with their ground truth."""
    from billing.demo import SCENARIOS

    queries = []
    for scenario in SCENARIOS:
        expect = scenario["expect"]
        tag = scenario["tags"][0]
        texts = [v for k, v in expect.items() if k in ("amount", "total_arrears")]
        if "rule_code" in expect:
            texts.append(expect["rule_code"])
        if expect.get("amount_check_result") == "mismatch":
            texts.append(expect.get("order_amount", ""))
        cite = [f"rule:{expect['rule_code']}:v{expect['version_no']}"] if "rule_code" in expect else ["parking_help_desk.arrears_faq"]
        for lang in ("zh", "en"):
            queries.append({"id": f"{scenario['id']}-{lang}", "kind": "helpdesk", "query": scenario[lang], "lang": lang,
                            "expect_tool": TOOLS[tag], "expect_text": texts, "expect_citation": cite})
    return queries


def load_queries() -> list[dict[str, Any]]:
    extra = [json.loads(line) for line in EXTRA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return scenario_queries() + extra


@dataclass
class EvalReport:
    counts: dict[str, list[int]] = field(default_factory=dict)  # metric -> [hits, total]
    failures: list[str] = field(default_factory=list)

    def add(self, metric: str, ok: bool, what: str) -> None:
        hits, total = self.counts.setdefault(metric, [0, 0])
        self.counts[metric] = [hits + int(ok), total + 1]
        if not ok:
            self.failures.append(f"{metric}: {what}")

    def rate(self, metric: str) -> float:
        hits, total = self.counts.get(metric, [0, 0])
        return hits / total if total else 1.0

    def metrics(self) -> dict[str, float]:
        return {
            "retrieval_hit_rate": self.rate("retrieval_hit"),
            "citation_coverage": self.rate("citation"),
            "empty_retrieval_rate": 1 - self.rate("non_empty"),
            "tool_call_compliance": self.rate("tool_call"),
            "answer_consistency": self.rate("consistency"),
        }

    def below_thresholds(self) -> list[str]:
        m = self.metrics()
        problems = [f"{k} {m[k]:.3f} < {v}" for k, v in THRESHOLDS.items() if not k.endswith("_max") and m[k] < v]
        if m["empty_retrieval_rate"] > THRESHOLDS["empty_retrieval_rate_max"]:
            problems.append(f"empty_retrieval_rate {m['empty_retrieval_rate']:.3f} > {THRESHOLDS['empty_retrieval_rate_max']}")
        return problems


def _filters(spec: dict[str, Any]):  # noqa: ANN202
    from .engine.packs import pack_names, pack_source_ids
    from .engine.search import RetrievalFilters

    spec = dict(spec or {})
    prefix = spec.pop("source_ids_prefix", None)
    if prefix:
        spec["source_ids"] = tuple(sid for name in pack_names() for sid in pack_source_ids(name) if sid.startswith(prefix))
    if spec.get("at_time"):
        spec["at_time"] = datetime.fromisoformat(spec["at_time"])
    return RetrievalFilters(**spec)


def _retrieval(query: dict[str, Any], report: EvalReport) -> None:
    from .services import knowledge_retrieve

    result = knowledge_retrieve(query["query"], filters=_filters(query.get("filters")), top_k=5)
    found = [h.chunk.source_id for h in result.hits]
    report.add("non_empty", bool(found), query["id"])
    report.add("retrieval_hit", any(s in found for s in query["expect_any"]), f"{query['id']}: got {found[:3]}")


def _helpdesk(query: dict[str, Any], user, report: EvalReport) -> None:  # noqa: ANN001
    from conversations import services

    conversation = services.conversation_start(user=user, workflow_id="parking_help_desk",
                                               locale="zh-hans" if query.get("lang") == "zh" else "en")
    _, result = services.conversation_turn(user=user, conversation_id=conversation.pk, text=query["query"])
    tools = result.execution_path["tools_called"]
    expected_tool = query.get("expect_tool")
    report.add("tool_call", tools == ([expected_tool] if expected_tool else []), f"{query['id']}: called {tools}")
    text = result.reply.text
    if query.get("expect_text"):
        missing = [t for t in query["expect_text"] if t and t not in text]
        report.add("consistency", not missing, f"{query['id']}: missing {missing}")
    if query.get("expect_citation"):
        cited = [c["source_id"] for c in result.reply.citations]
        report.add("citation", any(c in cited for c in query["expect_citation"]), f"{query['id']}: cited {cited}")
        report.add("non_empty", bool(cited), query["id"])


def run_evaluation(user) -> EvalReport:  # noqa: ANN001
    """Replay every query; writes conversations like real users would (use a scratch database)."""
    report = EvalReport()
    for query in load_queries():
        if query["kind"] == "retrieval":
            _retrieval(query, report)
        else:
            _helpdesk(query, user, report)
    return report
