"""The understanding set (tests/understanding) and how a reading of it is judged."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from conversations.engine.commands import Command
from conversations.understanding_eval import CASES_DIR, KINDS, judge, load_cases

SLOT = {"command": "set_slot", "slot": "until_time", "value": "re:T18:15"}


def test_a_reading_with_every_expected_command_as_sure_as_expected_is_right() -> None:
    produced = [Command("set_slot", slot="until_time", value="2026-03-04T18:15:00+08:00"), Command("chitchat")]
    assert judge([SLOT], [], produced).verdict == "right"


def test_a_certain_command_with_another_value_is_confidently_wrong() -> None:
    produced = [Command("set_slot", slot="until_time", value="2026-03-05T06:15:00+08:00")]
    assert judge([SLOT], [], produced).verdict == "wrong"


def test_a_guess_stored_as_certain_is_confidently_wrong_and_asked_back_is_not() -> None:
    wanted = [{**SLOT, "certainty": "guess"}]
    stored = [Command("set_slot", slot="until_time", value="2026-03-04T18:15:00+08:00")]
    asked = [Command("set_slot", slot="until_time", value="2026-03-04T18:15:00+08:00", certainty="guess")]
    assert judge(wanted, [], stored).verdict == "wrong"
    assert judge(wanted, [], asked).verdict == "right"


def test_a_forbidden_reading_held_as_certain_is_wrong_but_as_a_guess_is_not() -> None:
    forbidden = [{"command": "human_handoff"}]
    assert judge([], forbidden, [Command("human_handoff")]).verdict == "wrong"
    assert judge([{"command": "chitchat"}], forbidden, [Command("human_handoff", certainty="likely")]).verdict == "asked"


def test_a_reading_that_drops_a_fact_without_asking_is_missed() -> None:
    assert judge([SLOT], [], [Command("chitchat")]).verdict == "missed"
    assert judge([SLOT], [], [Command("cannot_handle")]).verdict == "asked"


def test_the_set_is_large_varied_and_well_formed() -> None:
    cases = load_cases()
    assert len(cases) >= 600
    assert {c["locale"] for c in cases} == {"en", "zh-hans", "ru", "es"}
    assert {c["workflow"] for c in cases} == {"parking_help_desk", "permit_form", "project_intake", "manager_assistant",
                                               "rv_diagnostic"}
    assert {c["kind"] for c in cases} == set(KINDS)
    assert len({(c["file"], c["id"]) for c in cases}) == len(cases)
    for case in cases:
        assert case["message"].strip() and case.get("why"), case["id"]
        for wanted in (*case.get("reading", ()), *case.get("not", ())):
            for value in wanted.values():
                if isinstance(value, str) and value.startswith("re:"):
                    re.compile(value[3:])


# The shares the rules reach today, file by file, less a point: they may only get better (confidently wrong at
# most, right or asked back at least, in %). The targets are 0-1 % and 97 % (all files: 97.2 % on 2026-12-03).
FLOORS = {
    "manager_assistant_en.json": (0.1, 97.2),
    "manager_assistant_zh.json": (0.1, 97.1),
    "parking_help_desk_en.json": (0.1, 94.7),
    "parking_help_desk_zh.json": (0.1, 97.5),
    "permit_form_en.json": (0.1, 98.9),
    "permit_form_zh.json": (0.1, 98.9),
    "project_intake_en.json": (0.1, 98.9),
    "project_intake_zh.json": (0.1, 87.7),
    "rv_diagnostic_en.json": (0.1, 95.9),
    "rv_diagnostic_es.json": (0.1, 93.7),
    "rv_diagnostic_ru.json": (0.1, 95.4),
    "rv_diagnostic_zh.json": (0.1, 97.1),
}


def test_every_file_of_the_set_has_its_floor() -> None:
    assert set(FLOORS) == {path.name for path in CASES_DIR.glob("*.json")}


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(FLOORS))
def test_each_file_reads_no_worse_than_its_floor(demo, name: str) -> None:  # noqa: ANN001
    max_wrong, min_good = FLOORS[name]
    out = io.StringIO()
    try:
        call_command("eval_understanding", str(CASES_DIR / name), "--max-wrong", str(max_wrong),
                     "--min-right-or-asked", str(min_good), stdout=out)
    except CommandError as failed:
        pytest.fail(f"{failed}\n{out.getvalue()}")
    assert re.search(r"^all\s+\d+", out.getvalue(), re.MULTILINE), out.getvalue()
