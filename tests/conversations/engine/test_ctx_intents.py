"""Intent router: built-in intents in four languages, domain intents from config, language detection."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversations.engine import ConversationConfig, load_example
from conversations.engine._text import detect_language, is_non_answer
from conversations.engine.intents import BUILTIN_INTENTS, DomainIntent, route_intent

PARKING = ConversationConfig.from_dict(load_example("parking_help_desk"))


@pytest.mark.parametrize(
    ("text", "intent", "language"),
    [
        # LOCATE
        ("Where exactly would the run capacitor be on a Dometic unit?", "LOCATE", "en"),
        ("I can't find the reset button anywhere", "LOCATE", "en"),
        ("which panel hides the control board", "LOCATE", "en"),
        ("Подскажите, где стоит предохранитель вентилятора?", "LOCATE", "ru"),
        ("Не могу найти контактор", "LOCATE", "ru"),
        ("¿En qué parte del techo va el condensador?", "LOCATE", "es"),
        ("No encuentro el fusible del ventilador", "LOCATE", "es"),
        ("保险丝装在哪个位置", "LOCATE", "zh"),
        ("接触器找不到啊", "LOCATE", "zh"),
        # EXPLAIN
        ("What's a contactor for?", "EXPLAIN", "en"),
        ("Could you explain the purpose of the thermistor", "EXPLAIN", "en"),
        ("Что значит «тепловое реле»?", "EXPLAIN", "ru"),
        ("¿Qué significa capacitor de arranque?", "EXPLAIN", "es"),
        ("热敏电阻有什么用", "EXPLAIN", "zh"),
        ("这个继电器是干嘛的", "EXPLAIN", "zh"),
        # HOWTO
        ("How should I go about testing the thermostat?", "HOWTO", "en"),
        ("walk me through checking the relay", "HOWTO", "en"),
        ("Как правильно прозвонить обмотку?", "HOWTO", "ru"),
        ("¿Cómo se mide el amperaje del compresor?", "HOWTO", "es"),
        ("继电器应该如何测量", "HOWTO", "zh"),
        ("教我测一下电压", "HOWTO", "zh"),
        # NEW_EVIDENCE
        ("Just noticed a scorched wire at the terminal block", "NEW_EVIDENCE", "en"),
        ("update: there is frost all over the suction line", "NEW_EVIDENCE", "en"),
        ("Я заметил трещину на трубке испарителя", "NEW_EVIDENCE", "ru"),
        ("Acabo de ver una mancha de aceite en la tubería", "NEW_EVIDENCE", "es"),
        ("刚才看到接线端子有烧焦的痕迹", "NEW_EVIDENCE", "zh"),
        # DISPUTE
        ("Are you sure? That doesn't make any sense to me", "DISPUTE", "en"),
        ("I don't think so, it was working yesterday", "DISPUTE", "en"),
        ("Вы уверены? Это не может быть конденсатор", "DISPUTE", "ru"),
        ("No estoy de acuerdo con ese diagnóstico", "DISPUTE", "es"),
        ("这个结论不合理吧", "DISPUTE", "zh"),
        # CONFIRMATION
        ("Yep, go ahead", "CONFIRMATION", "en"),
        ("sounds good to me", "CONFIRMATION", "en"),
        ("Да, согласен", "CONFIRMATION", "ru"),
        ("Sí, de acuerdo", "CONFIRMATION", "es"),
        ("没问题，就这样", "CONFIRMATION", "zh"),
        # UNCLEAR
        ("blue", "UNCLEAR", "en"),
        ("12.6", "UNCLEAR", "en"),
    ],
)
def test_builtin_intents_in_four_languages(text: str, intent: str, language: str) -> None:
    result = route_intent(text)
    assert result.intent == intent, (text, result)
    assert result.language == language
    if intent != "UNCLEAR":
        assert result.pattern and result.confidence > 0.5 and result.kind == "builtin"


def test_priority_evidence_beats_confirmation_and_side_question() -> None:
    assert route_intent("yes, and I also found a crack in the line").intent == "NEW_EVIDENCE"
    assert route_intent("no, that's wrong, where did you get that?").intent == "DISPUTE"


def test_confirmation_value_is_hours_or_accept() -> None:
    assert route_intent("2.5 hours is fine").confirmation_value == "2.5"
    assert route_intent("okay").confirmation_value == "accept"


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("How is parking charged at lot SH-A01 on weekends?", "rule_explain"),
        ("how much does it cost to park at the airport lot", "rule_explain"),
        ("SH-A01停车场是怎么收费的", "rule_explain"),
        ("Как считается оплата на этой парковке?", "rule_explain"),
        ("¿Cuánto cuesta estacionar en SH-A01?", "rule_explain"),
        ("Do I owe anything for 沪B7K2Q9?", "arrears_check"),
        ("帮我看看沪AD12345有没有未缴的停车费", "arrears_check"),
        ("Есть ли долг по номеру А123ВС?", "arrears_check"),
        ("¿Tengo deudas de estacionamiento?", "arrears_check"),
        ("I think order SCN-020 overcharged me", "fee_verify"),
        ("这笔订单金额不对，帮我核实一下", "fee_verify"),
        ("Please verify this order", "fee_verify"),
        ("Me cobraron de más en el pedido ORD-7", "fee_verify"),
    ],
)
def test_domain_intents_from_config(text: str, intent: str) -> None:
    result = route_intent(text, domain_intents=PARKING.intents)
    assert result.intent == intent, (text, result)
    assert result.kind == "domain" and result.pattern


def test_domain_intents_beat_builtins_and_ambiguity_is_reported() -> None:
    # "wrong amount" is a DISPUTE too, but the workflow's own vocabulary wins.
    assert route_intent("the amount is wrong", domain_intents=PARKING.intents).intent in (
        "fee_verify",
        "DISPUTE",
    )
    result = route_intent("check the arrears and verify the fee", domain_intents=PARKING.intents)
    assert result.ambiguous and {"arrears_check", "fee_verify"} <= set(result.candidates)
    assert result.confidence == 0.5


def test_domain_intent_declared_as_data() -> None:
    intent = DomainIntent.from_dict(
        {"name": "refund", "patterns": ["\\brefund\\b", "退款"], "required_slots": ["order_no"]}
    )
    assert route_intent("I want a refund", domain_intents=[intent]).intent == "refund"
    assert route_intent("我要退款", domain_intents=[intent]).intent == "refund"
    assert DomainIntent.from_dict(intent.to_dict()) == intent


def test_follow_up_phrasing() -> None:
    assert route_intent("what about tomorrow at 9?").follow_up
    assert route_intent("那明天上午呢？").follow_up
    assert route_intent("¿y para mañana?").follow_up


@pytest.mark.parametrize("text", ["hmm what about B88888", "ok, so what if I leave at 6", "oh and what about the other one",
                                  "well... how about friday", "um, if I stay 2 hours"])
def test_a_follow_up_may_open_with_a_filler_word(text: str) -> None:
    assert route_intent(text).follow_up


@pytest.mark.parametrize("text", ["okay thanks", "so the burner does not light", "well it is broken"])
def test_a_filler_word_alone_makes_no_follow_up(text: str) -> None:
    assert not route_intent(text).follow_up


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("check arrears for 沪A12345 please", "en"),
        ("查询沪A12345的欠费", "zh"),
        ("Проверьте заказ", "ru"),
        ("¿Dónde está?", "es"),
    ],
)
def test_language_detection(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_language_default_when_no_words() -> None:
    assert detect_language("SCN-020", "zh") == "zh"
    assert detect_language("12345", "ru") == "ru"


@pytest.mark.parametrize(
    "text", ["hmm", "idk", "I don't know", "??", "не знаю", "no sé", "不知道", "嗯嗯"]
)
def test_non_answers(text: str) -> None:
    assert is_non_answer(text)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=120))
def test_router_is_total_and_deterministic(text: str) -> None:
    first = route_intent(text, domain_intents=PARKING.intents)
    assert first == route_intent(text, domain_intents=PARKING.intents)
    assert first.intent in BUILTIN_INTENTS or PARKING.intent(first.intent) is not None
    assert 0.0 <= first.confidence <= 1.0


def _naive_first_match(text: str, patterns, language):  # noqa: ANN001, ANN202
    from conversations.engine._text import compile_pattern, iter_patterns

    for lang, pattern in iter_patterns(patterns, language):
        match = compile_pattern(pattern).search(text)
        if match:
            return lang, pattern, match.span()
    return None


_ALL_PATTERN_SETS = [i.patterns for i in PARKING.intents] + [
    {"any": (r"(ab)\1", r"plain")},  # a backreference: its group number would shift if joined
    {"any": (r"(b)", r"(x)?(?(1)y|z)")},  # a conditional on a group number: the same
    {"en": (r"(?x) spaced \s+ out",), "zh": (r"欠费",)},  # a global flag: cannot be joined
    {"en": (r"(?P<n>x)", r"(?P<n>y)")},  # the same group name twice: cannot be joined
]


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("abxy 沪B8欠费钱多少 verifyorde SCN-019 unpaid?lot platespacedout")), max_size=40),
       which=st.integers(min_value=0, max_value=len(_ALL_PATTERN_SETS) - 1), language=st.sampled_from(["en", "zh", None]))
def test_first_match_and_count_agree_with_trying_each_pattern(text: str, which: int, language) -> None:  # noqa: ANN001
    """The one-scan shortcut for pattern sets never changes which pattern matches, or how many."""
    from conversations.engine._text import (
        compile_pattern,
        count_matches,
        first_match,
        iter_patterns,
    )

    patterns = _ALL_PATTERN_SETS[which]
    hit = first_match(text, patterns, language)
    found = (hit[0], hit[1], hit[2].span()) if hit else None
    assert found == _naive_first_match(text, patterns, language)
    assert count_matches(text, patterns) == sum(1 for _, p in iter_patterns(patterns) if compile_pattern(p).search(text))


def test_patterns_that_cannot_be_joined_still_match_alone() -> None:
    from conversations.engine._text import first_match

    assert first_match("abab", {"any": (r"zz(q)", r"(ab)\1")})[1] == r"(ab)\1"
    assert first_match("spacedout", {"en": (r"(?x) spaced \s* out",)}) is not None
