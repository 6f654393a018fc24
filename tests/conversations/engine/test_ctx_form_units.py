"""A form question's unit is any word of a unit the recognizers know (issue 33): the engine names no plan's unit,
and a plan that says "floors" or "people" gets what one saying "storeys" or "persons" gets."""

from __future__ import annotations

import pytest

from conversations.engine import ConversationConfig
from conversations.engine.units import measure_of, number_in, unit_id
from tests.conversations.engine.test_cv_plain_replies import replies


def _form(unit: str, plausible: list[int] | None = None) -> ConversationConfig:
    question = {"id": "q1", "question": {"en": "How many?", "zh": "多少？"}, "answer_type": "number", "unit": unit,
                "slot": "count", **({"plausible": plausible} if plausible else {})}
    return ConversationConfig.from_dict({"form": {"questions": [question]}})


@pytest.mark.parametrize(("unit", "known"), [("storeys", "storey"), ("floors", "storey"), ("levels", "storey"),
                                             ("sq ft", "sq_ft"), ("square feet", "sq_ft"), ("m2", "sq_m"), ("m²", "sq_m"),
                                             ("persons", "person"), ("people", "person"), ("boxes", None)])
def test_a_units_words_name_it(unit: str, known: str | None) -> None:
    assert unit_id(unit) == known


def test_a_unit_is_said_in_the_persons_language_whatever_word_the_plan_used() -> None:
    assert number_in("floors", "3", 3, "zh") == number_in("storeys", "3", 3, "zh") == "3层"
    assert number_in("people", "4", 4, "ru") == number_in("persons", "4", 4, "ru")
    assert measure_of("square feet", "zh") == measure_of("m2", "zh") != ""
    assert number_in("boxes", "3", 3, "zh") is None and measure_of("boxes", "en") == ""


def test_a_plan_counting_floors_reads_storeys_and_asks_between_two_and_a_half() -> None:
    said = replies(_form("floors"), "en", ["two and a half storeys"])
    assert "2" in said[0] and "3" in said[0] and "?" in said[0]  # between two of them, asked, never 2 stored
    said = replies(_form("floors"), "zh-hans", ["三层"])
    assert "3层" in said[0]


def test_a_floor_area_in_square_metres_is_kept_in_the_plans_unit() -> None:
    said = replies(_form("square feet", [10, 100000]), "en", ["110 m²"])
    assert "1184" in said[0].replace(",", "")
