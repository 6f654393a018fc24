"""Answers that use knowledge cite it: source, version, effective range, snippet."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def _sources(reply: dict) -> list[str]:
    return [c["source_id"] for c in reply["reply"]["citations"]]


def test_rule_and_cost_questions_cite_the_rule_version(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", "zh-hans")
    r = c.say("浦东一号停车场SH-PD-001 3月2日10点怎么收费？")
    assert _sources(r) == ["rule:SH-PD-DAY:v1"]
    citation = r["reply"]["citations"][0]
    assert citation["version"] == 1 and citation["effective_from"].startswith("2026-01-01T00:00:00+08:00") and citation["snippet"]
    # cited by the source's title in the reply's language, never by its id
    assert "依据" in r["reply"]["text"] and "计费规则说明 SH-PD-DAY v1》第1版" in r["reply"]["text"]
    assert "rule:SH-PD-DAY:v1" not in r["reply"]["text"] and "how rule" not in r["reply"]["text"]
    assert r["execution_path"]["retrieval_hits"][0]["source_id"] == "rule:SH-PD-DAY:v1"


def test_a_version_change_cites_the_version_in_force(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    before = c.say("How is parking charged at lot SH-PD-002 on 2026-03-31 at 10:00?")
    assert _sources(before) == ["rule:SH-PD2-DAYNIGHT:v1"]
    after = c.say("and on 2026-04-02 at 10:00?")
    assert _sources(after) == ["rule:SH-PD2-DAYNIGHT:v2"]
    assert after["reply"]["citations"][0]["effective_from"].startswith("2026-04-01T08:00:00+08:00")


def test_verification_cites_the_rule_it_used(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    assert _sources(c.say("verify order SCN-019")) == ["rule:SH-PD-DAY:v1"]


def test_rv_part_location_cites_the_rv_pack(chat) -> None:  # noqa: ANN001
    c = chat("rv_diagnostic")
    c.say("Roof AC isn't cooling")
    r = c.say("Where is the capacitor?")
    assert _sources(r)[0].startswith("rv_diagnostic.") and "(Source: " in r["reply"]["text"]
    assert "rv_diagnostic." not in r["reply"]["text"]


def test_form_requirement_cites_the_code_book(chat) -> None:  # noqa: ANN001
    c = chat("permit_form")
    r = c.say("What are the setback requirements for the side yard?")
    assert r["reply"]["citations"] and _sources(r)[0] == "permit_form.setbacks"


def test_a_side_question_mid_form_is_answered_from_the_code_book(chat) -> None:  # noqa: ANN001
    c = chat("permit_form")
    c.say("It's for my business")
    c.say("Mostly offices, about 50 people")
    r = c.say("What are the setback requirements?")
    assert _sources(r)[0] == "permit_form.setbacks"
    assert "[Demo Residential Code - setbacks and lot coverage, version 1" in r["reply"]["text"]
    assert "permit_form.setbacks" not in r["reply"]["text"] and "storeys" in r["reply"]["text"]  # then back to the question
