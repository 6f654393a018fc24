"""Words read by lexicon data, not phrase patches: small talk, dropping a request, places said not to be
meant, names after words that as often introduce a common word, and a negated check's negative finding."""

from __future__ import annotations

import pytest

from conversations.engine._text import asks_to_cancel, chitchat_kind
from conversations.engine.certainty import CERTAIN, GUESS
from conversations.engine.config import EvidenceRule
from conversations.engine.evidence import match_evidence
from conversations.engine.named_values import find_named_values
from conversations.engine.recognizers.names import read_names


@pytest.mark.parametrize(("text", "kind"), [
    ("great, thanks!", "thanks"), ("好的谢谢啦", "thanks"), ("明白了，谢谢", "thanks"), ("perfecto, muchas gracias", "thanks"),
    ("ладно, спасибо большое", "thanks"), ("cheers, bye", "goodbye"), ("hi there", "greeting"),
    ("ok", None), ("great", None), ("好的", None), ("yes thanks", None), ("thanks, how much is lot A", None),
])
def test_small_talk_is_a_message_made_only_of_the_lexicon_s_small_talk(text: str, kind: str | None) -> None:
    assert chitchat_kind(text) == kind


@pytest.mark.parametrize(("text", "language", "cancels"), [
    ("actually forget it, I'll deal with this another day", "en", True),
    ("算了，这件事先不聊了", "zh", True),
    ("olvídalo, lo hago yo mismo otro día", "es", True),
    ("забудь, потом разберусь", "ru", True),
    ("forget it, how much is the airport lot later?", "en", False),  # a new question, not a dropped one
    ("never mind, it's 3 hours later", "en", False),
    ("算了，不查了", "zh", True),
])
def test_a_request_dropped_then_put_off_is_a_cancel(text: str, language: str, cancels: bool) -> None:
    assert asks_to_cancel(text, language) is cancels


def _finder(text: str, language: str) -> list[dict]:
    places = {"northport": {"city_code": "100"}, "lakeside": {"city_code": "200"},
              "harbour station": {"lot_code": "HS", "city_code": "100"},
              "airport": [{"lot_code": "N-AIR", "city_code": "100"}, {"lot_code": "L-AIR", "city_code": "200"}]}
    hits = []
    for words, slots in places.items():
        if words in text.casefold():
            at = text.casefold().index(words)
            hits += [{"slots": s, "raw": text[at:at + len(words)], "labels": {}} for s in (slots if isinstance(slots, list) else [slots])]
    return hits


def test_words_that_name_one_thing_are_kept_beside_another_city_said() -> None:
    """"not lakeside any more, harbour station": the lot is named whole; the city said not to be is no choice."""
    text = "I'm not going to lakeside any more, how much is harbour station"
    named = find_named_values(text, "en", [_finder], names=["city_code", "lot_code"], stated={}, remembered={},
                              denied=lambda words: words.casefold() == "lakeside")
    assert named.settled == {"city_code": ("100", "harbour station"), "lot_code": ("HS", "harbour station")}
    both = find_named_values("lakeside, harbour station", "en", [_finder], names=["city_code", "lot_code"], stated={}, remembered={})
    assert set(both.ambiguous) == {"city_code"}  # two cities said and neither denied: asked, not chosen


def test_a_city_said_chooses_among_the_things_a_shared_word_names() -> None:
    named = find_named_values("the airport car park in lakeside", "en", [_finder], names=["city_code", "lot_code"],
                              stated={}, remembered={})
    assert named.settled["lot_code"][0] == "L-AIR" and not named.ambiguous


def test_a_name_after_a_word_that_as_often_opens_a_common_word_is_a_guess() -> None:
    spans = read_names("One of my servers, Kayla, refused to come get me when a customer asked to speak to a manager.")
    assert [(s.value, s.certainty) for s in spans] == [("Kayla", CERTAIN), ("Speak", GUESS)]
    assert [(s.value, s.certainty) for s in read_names("I'm worried about priya's timekeeping")][-1][0] == "Priya"
    assert all(s.certainty == GUESS for s in read_names("she never came back from lunch"))


BLOWER_RUNS = EvidenceRule(id="blower_runs", patterns={"en": [r"\bblower\b[^.]{0,20}\b(?:runs|starts|comes\s+on)\b"],
                                                      "es": [r"ventilador[^.]{0,20}(?:arranca|funciona)"]},
                           excludes=("blower_dead",), negated="blower_dead")
BLOWER_DEAD = EvidenceRule(id="blower_dead", patterns={"en": [r"\bblower\b[^.]{0,10}\bdead\b"]}, excludes=("blower_runs",))


@pytest.mark.parametrize(("text", "language", "read"), [
    ("the blower never starts", "en", ["blower_dead"]),
    ("el ventilador nunca arranca", "es", ["blower_dead"]),
    ("the blower runs fine", "en", ["blower_runs"]),
    ("blower is dead", "en", ["blower_dead"]),
])
def test_a_negated_observation_records_the_negative_its_rule_names(text: str, language: str, read: list[str]) -> None:
    assert [m.rule_id for m in match_evidence(text, [BLOWER_RUNS, BLOWER_DEAD], language)] == read


def test_a_negated_observation_without_a_named_negative_records_nothing() -> None:
    runs = EvidenceRule(id="compressor_runs", patterns={"en": [r"\bcompressor\b[^.]{0,20}\bruns\b"]})
    assert match_evidence("the compressor never runs", [runs], "en") == []


@pytest.mark.parametrize(("text", "language", "wanted"), [
    ("we don't need a labor estimate", "en", "skip"),
    ("смету пропускаем", "ru", "skip"),
    ("工时估算不用了，跳过", "zh", "skip"),
    ("doy por buena esa hora", "es", "confirm"),
    ("the estimate looks good", "en", "confirm"),
    ("what does the estimate include?", "en", None),
])
def test_the_estimate_is_skipped_or_accepted_in_the_person_s_words(text: str, language: str, wanted: str | None) -> None:
    """The walk: each of these was ignored and the draft labor went into the report."""
    from conversations.engine.estimate import estimate_request

    assert estimate_request(text, language) == wanted


@pytest.mark.parametrize(("text", "language", "hours"), [
    ("按一个半小时算，确认", "zh", 1.5), ("подтверждаю, полтора часа", "ru", 1.5), ("confirm at 0,75 h", "en", 0.75),
    ("confirm the estimate", "en", None),
])
def test_hours_confirmed_in_words_are_the_hours_said(text: str, language: str, hours: float | None) -> None:
    """"按一个半小时算" had been confirmed at the draft's 2 h."""
    from conversations.engine.estimate import confirm_estimate
    from conversations.engine.state import ContextState

    assert confirm_estimate(ContextState(), text, turn=3, language=language).estimate.confirmed_hours == hours


@pytest.mark.parametrize(("text", "language", "skips"), [
    ("I don't own a manometer, sorry. Can we skip that one?", "en", True), ("sáltate esa comprobación", "es", True),
    ("пропусти эту проверку", "ru", True), ("这个跳过吧", "zh", True),
    ("haven't checked yet, no meter on me", "en", False),  # not checked yet: the check stays the one asked
])
def test_a_check_is_skipped_when_the_person_asks_to(text: str, language: str, skips: bool) -> None:
    from conversations.engine._text import asks_to_skip_check

    assert asks_to_skip_check(text, language) is skips


def test_a_fault_in_one_of_two_is_not_overruled_by_the_other_being_fine() -> None:
    """The walk: "один из двух сгорел, второй целый" had been recorded as fuses intact; white deposit on a tight
    terminal as clean connections."""
    import json
    from pathlib import Path

    plan = Path(__file__).resolve().parents[3] / "workflows/plans/rv_diagnostic/systems/electrical_12v.json"
    rules = [EvidenceRule(**e) for e in json.loads(plan.read_text(encoding="utf-8"))["evidence"]]
    read = [m.rule_id for m in match_evidence("Один из двух предохранителей сгорел, второй целый", rules, "ru")]
    assert read == ["elec_rp_fuse_blown"]
    assert "elec_connection_bad" in [m.rule_id for m in match_evidence("Клеммы затянуты, но на плюсовой белый налёт", rules, "ru")]
    assert [m.rule_id for m in match_evidence("предохранители целые", rules, "ru")] == ["elec_rp_fuses_ok"]
