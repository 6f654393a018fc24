"""The recognizers (times, quantities, names, identifiers): their test sets read at least as well as when they
landed, nothing read wrong with confidence beyond the floors, and the readings the conversation relies on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conversations.engine.certainty import CERTAIN, GUESS, LIKELY
from conversations.engine.recognizers.identifiers import Records, read_identifiers
from conversations.engine.recognizers.names import read_names
from conversations.engine.recognizers.numbers import read_quantities
from conversations.engine.recognizers.times import read_time
from conversations.recognizer_eval import evaluate, load_cases

# (kind, least share read right or marked not certain, most share read wrong with confidence), in %:
# raise them as the recognizers improve, never lower them to let a change land
FLOORS = {"times": (96.5, 0.0), "numbers": (98.5, 0.0), "names": (97.0, 0.0), "identifiers": (99.0, 0.0)}
NOW = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def report():  # noqa: ANN201
    return evaluate(load_cases())


@pytest.mark.parametrize("kind", sorted(FLOORS))
def test_each_test_set_reads_at_least_its_floor(report, kind) -> None:  # noqa: ANN001
    total = report.total("ours", kind)
    cases = sum(total.values())
    good, wrong = 100 * (total["right"] + total["unsure"]) / cases, 100 * total["wrong"] / cases
    least, most = FLOORS[kind]
    assert cases >= (150 if kind == "times" else 100)
    assert good >= least, f"{kind}: right or not certain {good:.1f}% < {least}%"
    assert wrong <= most, f"{kind}: confidently wrong {wrong:.1f}% > {most}%"


def test_every_language_is_in_every_set() -> None:
    for kind, cases in load_cases().items():
        assert {case["language"] for case in cases} == {"en", "zh", "ru", "es"}, kind


@pytest.mark.parametrize(("text", "expected", "certainty"), [
    ("from 3 to 6:15 today", {"start": "2026-12-02T15:00", "end": "2026-12-02T18:15"}, LIKELY),  # either half: said back
    ("can I park from 3pm to 6:15 tomorrow", {"start": "2026-12-03T15:00", "end": "2026-12-03T18:15"}, CERTAIN),
    ("must be live by 1 March 2027", {"by": "2027-03-01"}, CERTAIN),
    ("春节前搞定", {"by": "2027-02-06"}, CERTAIN),
    ("maybe 6 or 7pm", {"at": "2026-12-02T19:00"}, GUESS),  # two times offered: asked, whichever is read
    ("через две недели", {"date": "2026-12-16"}, CERTAIN),
    ("dos horas y media", {"minutes": 150}, CERTAIN),
    ("tomorrow, the whole day", {"start": "2026-12-03T00:00", "end": "2026-12-04T00:00"}, CERTAIN),
    ("late in the afternoon tomorrow", {"at": "2026-12-03T14:00"}, GUESS),
])
def test_times(text, expected, certainty) -> None:  # noqa: ANN001
    now = NOW.astimezone(__import__("zoneinfo").ZoneInfo("Asia/Shanghai")).replace(hour=10)
    found = read_time(text, now=now)
    assert found is not None and found.value.as_dict() == expected and found.certainty == certainty


@pytest.mark.parametrize(("text", "items", "certainty"), [
    ("110 m²", [{"value": 110, "unit": "sq_m"}], CERTAIN),
    ("two and a half storeys", [{"value": 2.5, "unit": "storey"}], CERTAIN),
    ("六七个人", [{"either": [6, 7], "unit": "person"}], GUESS),
    ("budget 15 to 20k", [{"range": [15000, 20000]}], CERTAIN),
    ("rated 45+5 MFD, reads 41 and 4.2", [{"dual": [45, 5], "unit": "uF"}, {"value": 41}, {"value": 4.2}], CERTAIN),
    ("¥999", [{"value": 999, "currency": "CNY"}], CERTAIN),
    ("a 900 storey tower", [{"value": 900, "unit": "storey"}], GUESS),  # implausible for its unit
    ("order HZ-2611-00731 at 3pm on 2026-11-28", [], CERTAIN),  # an identifier, a time and a date are no quantities
])
def test_quantities(text, items, certainty) -> None:  # noqa: ANN001
    spans = read_quantities(text)
    assert [s.value.as_dict() for s in spans] == items
    assert all(s.certainty == certainty for s in spans)


def test_a_converted_area_keeps_both_units() -> None:
    area = read_quantities("110平方米", "zh")[0].value
    assert round(area.converted("sq_ft")) == 1184


@pytest.mark.parametrize(("text", "names"), [
    ("Siobhan O'Brien-Adeyemi asked for Friday off", ["Siobhan O'Brien-Adeyemi"]),
    ("priya's timekeeping is slipping", ["Priya"]),
    ("他们吵起来了", []),
    ("王经理说不用管", ["王"]),
    ("с Иваном Петровым", ["Иван Петров"]),
])
def test_names(text, names) -> None:  # noqa: ANN001
    assert [s.value for s in read_names(text)] == names


RECORDS = Records.of({"order": ["HZ-2611-00731"], "plate": ["浙A12345", "云A7MK29", "苏B66K88", "浙B66K88"],
                      "lot": {"HZ-WL-01": ["West Lake car park", "西湖停车场"]}, "city": {"HZ": ["Hangzhou", "杭州"]}})


@pytest.mark.parametrize(("text", "items", "certainty"), [
    ("order hz 2611 00731 pls", [{"kind": "order", "value": "HZ-2611-00731"}], CERTAIN),
    ("my car a12345 can't get out", [{"kind": "plate", "value": "浙A12345"}], CERTAIN),  # the one plate it ends
    ("yun A 7MK29", [{"kind": "plate", "value": "云A7MK29"}], CERTAIN),  # the province said in pinyin
    ("plate b66k88", [{"kind": "plate", "value": None, "either": ["苏B66K88", "浙B66K88"]}], GUESS),
    ("order HZ-2611-99999", [{"kind": "order", "value": None, "text": "HZ-2611-99999"}], CERTAIN),  # no such order
    ("parked at west lake car prak in Hangzou", [{"kind": "lot", "value": "HZ-WL-01"}, {"kind": "city", "value": "HZ"}], LIKELY),
    ("I parked in Dali", [{"kind": "city", "value": None, "text": "Dali"}], CERTAIN),  # a city we have no record of
])
def test_identifiers(text, items, certainty) -> None:  # noqa: ANN001
    spans = read_identifiers(text, RECORDS)
    assert [s.value for s in spans] == items
    assert max((s.certainty for s in spans), key=[CERTAIN, LIKELY, GUESS].index) == certainty
