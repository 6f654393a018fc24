"""Issue 14 in the RV diagnostic: systems with no procedure, typed side questions, "not yet", yes / no, start over."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conversations.engine import ConversationConfig, load_example
from conversations.engine.simulate import Dialogue

CONFIG = ConversationConfig.from_dict(load_example("rv_diagnostic"))
NOW = datetime(2026, 2, 12, 2, tzinfo=UTC)


@pytest.mark.parametrize(("text", "system"), [
    ("the propane fridge stopped getting cold", "refrigerator"),  # "cold"/"cooling" must not pull it into the roof AC
    ("fridge isnt cooling on propane", "refrigerator"),
    ("fridge works on gas but not on ac", "refrigerator"),  # "on ac" is the fridge's power mode
    ("冰箱不制冷了", "refrigerator"),
    ("холодильник не охлаждает", "refrigerator"),
    ("la nevera no enfría", "refrigerator"),
    ("water heater wont light", "water_heater"),
    ("my furnace won't ignite", "furnace"),
    ("furnace fan runs but it won't light", "furnace"),
    ("lights dim and the 12 volt stuff cuts out when we're plugged in", "electrical_12v"),
    ("water pump runs but nothing comes out of the faucets", "water_pump"),
    ("slide out is stuck halfway", "slide_out"),
    ("generator won't start", "generator"),
])
def test_each_system_gets_its_own_checks_never_another_systems(text: str, system: str) -> None:
    d = Dialogue(CONFIG, NOW)
    out = d.say(text)
    assert d.state.primary_system == system and out.next_step_id is not None
    assert out.next_step_id in {step.id for step in CONFIG.procedure(system).steps}


@pytest.mark.parametrize("text", ["the awning won't roll back in", "the leveling jacks won't retract", "stove top won't light"])
def test_a_system_without_a_procedure_is_said_plainly_never_another_systems_checks(text: str) -> None:
    d = Dialogue(CONFIG, NOW)
    out = d.say(text)
    assert d.state.primary_system is None and out.next_step_id is None
    assert out.reply_action == "no_procedure" and out.decision == "ask"
    assert d.state.complaint is None  # the next message describes the fault to diagnose
    out = d.say("ok then the roof ac, it blows warm air")
    assert d.state.primary_system == "roof_ac" and out.next_step_id == "check_power"


def test_mid_diagnosis_another_system_keeps_the_check_or_switches() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("roof ac not cooling")
    out = d.say("the awning is also out")
    assert out.reply_action == "no_procedure" and out.next_step_id == "check_power"
    assert "check_power" not in d.state.completed_steps
    out = d.say("the roof vent fan also doesn't work now")  # another fault as well: noted, this one first
    assert d.state.primary_system == "roof_ac" and "switch to the roof vent fan" in out.notice
    d.say("ok switch to the roof vent fan")
    assert d.state.primary_system == "roof_vent_fan"


@pytest.mark.parametrize(("said", "language"), [
    ("not the AC, it's the roof vent fan", "en"),
    ("it's the vent fan, not the ac", "en"),
    ("不是空调，是排气扇", "zh"),
    ("это не кондиционер, а вентилятор на крыше", "ru"),
    ("no es el aire acondicionado, es el extractor del techo", "es"),
])
def test_not_this_system_switches_and_facts_stay_with_their_system(said: str, language: str) -> None:
    """Issue 16: "not the AC" switches even after isolation; the AC's facts stay with the AC and count
    again when the technician comes back to it."""
    d = Dialogue(CONFIG, NOW, locale=language)
    for text in ("roof ac not cooling", "118 V", "compressor hums, won't start", "capacitor reads 20 uF rated 45"):
        d.say(text)
    assert d.state.isolation_complete and d.state.isolation_finding == "bad_capacitor"
    d.say(said)
    assert d.state.primary_system == "roof_vent_fan" and not d.state.isolation_complete
    assert all(h.status == "active" for h in d.state.hypotheses)
    assert {f.system for f in d.state.facts if f.key != "note"} == {"roof_ac"}
    d.say("back to the ac, switch to the roof ac")
    assert d.state.primary_system == "roof_ac" and d.state.isolation_complete


def test_not_this_system_alone_asks_which_one() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("roof ac not cooling")
    out = d.say("actually it's not the ac at all")
    assert d.state.primary_system is None and out.question_kind == "system"


def test_typed_side_question_and_not_yet_leave_the_check_open() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("ac hums and blows warm")
    d.say("121 V")
    d.say("compressor hums but won't start")
    out = d.say("wheres the capacitor?")
    assert out.side_question is not None and out.side_question.topic == "capacitor"
    out = d.say("haven't measured it yet")
    assert out.next_step_id == "test_capacitor" and "test_capacitor" not in d.state.completed_steps
    assert not [f for f in d.state.facts if f.key == "note"]


def test_bare_yes_no_answers_a_check_that_says_what_they_mean() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("roof vent fan is dead")
    d.say("12.6 V at the connector")
    out = d.say("nope")
    assert out.isolation_completed and d.state.isolation_finding == "fan_motor_failed"


def test_start_over_drops_the_system_but_keeps_what_was_said() -> None:
    d = Dialogue(CONFIG, NOW)
    d.say("roof vent fan stopped working")
    out = d.say("start over")
    assert d.state.primary_system is None and out.question_kind == "system"
    assert d.state.facts  # remembered
    out = d.say("the air conditioner is dead")
    assert d.state.primary_system == "roof_ac" and out.next_step_id == "check_power"
