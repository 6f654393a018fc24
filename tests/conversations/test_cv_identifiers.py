"""Identifiers of any shape are resolved by lookup, not by the demo's pattern (issue 14)."""

from __future__ import annotations

import pytest

from billing.models import ParkingOrder
from conversations.engine.slots import identifier_candidates

pytestmark = pytest.mark.django_db


@pytest.fixture
def odd_orders(demo):  # noqa: ANN001, ANN201
    template = ParkingOrder.objects.order_by("pk").first()
    for number in ("7734412", "P2026-000871", "kx_77-01"):
        template.pk, template.order_no = None, number
        template.save()


@pytest.mark.parametrize(("locale", "ask", "answer", "found"), [
    ("en", "I want to verify an order", "7734412", "7734412"),
    ("en", "can you verify the fee on my order", "it's P2026-000871.", "P2026-000871"),
    ("en", "verify an order", "the number is kx_77-01 I think", "kx_77-01"),
    ("zh-hans", "核验订单", "订单号是7734412", "7734412"),
    ("zh-hans", "帮我核对一下订单", "P2026-000871", "P2026-000871"),
])
def test_a_bare_answer_to_which_order_is_looked_up(chat, odd_orders, locale, ask, answer, found) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", locale)
    asked = c.say(ask)
    assert asked["reply"]["decision"] == "ask"
    r = c.say(answer)
    assert r["slots"]["order_no"]["value"].upper() == found.upper() and r["slots"]["order_no"]["status"] == "valid"
    assert "billing.fee_verify" in r["execution_path"]["tools_called"]


def test_an_order_nobody_knows_is_said_plainly_and_can_be_corrected(chat, odd_orders) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    c.say("please verify my order")
    missing = c.say("it's P2026-999999")
    assert "P2026-999999" in missing["reply"]["text"] and missing["slots"]["order_no"]["status"] == "invalid"
    fixed = c.say("sorry, P2026-000871")
    assert fixed["slots"]["order_no"]["value"] == "P2026-000871" and fixed["slots"]["order_no"]["status"] == "valid"


@pytest.mark.parametrize(("text", "tokens"), [
    ("订单号是7734412", ["7734412"]),
    ("粤B·D12345 欠费吗", ["粤B·D12345"]),
    ("plate 苏E 9Z8Y7 at 14:00 on 2026-03-02", ["9Z8Y7", "2026-03-02"]),
    ("no digits here", []),
    ("order NO.7781-B", ["NO.7781-B", "7781-B"]),  # the number itself, or "No." before it
    ("my order is 7734412.", ["7734412"]),  # a sentence's full stop is no part of it
    ("abc 1234", ["abc 1234", "1234"]),  # a plate written with a space, whole first
])
def test_identifier_candidates(text, tokens) -> None:  # noqa: ANN001
    assert identifier_candidates(text) == tokens


@pytest.mark.parametrize(("typed", "recorded"), [
    ("KX 77 01", "kx_77-01"), ("kx.77.01", "kx_77-01"), ("p2026 000871", "P2026-000871"), ("P2026_000871", "P2026-000871"),
])
def test_an_order_number_is_compared_without_case_and_separators(odd_orders, typed, recorded) -> None:  # noqa: ANN001
    from billing.selectors import order_lookup

    assert order_lookup(typed) == recorded


def test_two_orders_that_differ_only_by_separators_are_not_guessed(odd_orders) -> None:  # noqa: ANN001
    from billing.selectors import order_lookup

    template = ParkingOrder.objects.get(order_no="kx_77-01")
    template.pk, template.order_no = None, "KX-7701"
    template.save()
    assert order_lookup("kx 77 01") is False  # both are KX7701 once compared: not guessed
    assert order_lookup("KX-7701") == "KX-7701" and order_lookup("kx_77-01") == "kx_77-01"
