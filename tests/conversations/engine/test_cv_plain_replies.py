"""Replies read like a person wrote them, in the conversation's language: no message said back whole, a yes or
no as a sentence, values in the person's language with their question's name, a greeting without a doubled word,
a choice's note and a review's outcome in plain words, and no internal codes or English words in Chinese."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conversations.engine import ConversationConfig, load_example
from conversations.engine.forms import answers_listing
from conversations.engine.plain_words import (
    ChoiceTaken,
    choice_note,
    introduces,
    is_account,
    yes_no_said,
)
from conversations.engine.replies import (
    RunView,
    compose_reply,
    fee_decision_text,
    opening_text,
    review_decided_text,
)
from conversations.engine.simulate import Dialogue
from conversations.engine.turn import opening_question, record_reply

PLANS = Path(__file__).resolve().parents[3] / "workflows" / "plans"
PERMIT = ConversationConfig.from_dict(json.loads((PLANS / "permit_form.json").read_text())["conversation"])
MANAGER = ConversationConfig.from_dict(load_example("manager_assistant"))
NOW = datetime(2026, 2, 12, 2, tzinfo=UTC)
ENGLISH_WORD = re.compile(r"[A-Za-z]{2,}")


def greeted(config: ConversationConfig, locale: str) -> Dialogue:
    """A new conversation as the service starts it: a form's greeting asks its first question."""
    d = Dialogue(config, NOW, locale=locale)
    if (opening := opening_question(d.state, config)) is not None:
        d.state = record_reply(d.state, text=opening[0], action=opening[1])
    return d


def replies(config: ConversationConfig, locale: str, messages: list[str]) -> list[str]:
    """The rules backend's reply to each message, composed as the service composes it."""
    d = greeted(config, locale)
    said = []
    for text in messages:
        outcome = d.say(text)
        said.append(compose_reply(outcome, RunView(step_id="collect_answers"), config, locale=locale).text)
    return said


# --- accounts are acknowledged, never said back --------------------------------------------


@pytest.mark.parametrize(("locale", "message"), [
    ("zh-hans", "我的员工王芳这周迟到了三次。"),
    ("en", "My employee Dana has been late three times this week."),
    ("en", "So my employee Carlos has been showing up 20 minutes late almost every day for two weeks now."),
])
def test_an_account_is_acknowledged_not_echoed(locale: str, message: str) -> None:
    reply = replies(MANAGER, locale, [message])[0]
    assert message.rstrip("。.") not in reply and "Recorded" not in reply and "已记下：我的" not in reply
    assert "Noted:" not in reply and "已记录" not in reply
    assert reply.splitlines()[0].startswith(("Thanks", "Got it", "明白了", "好的", "谢谢")), reply


def test_what_was_picked_out_of_an_account_is_said() -> None:
    assert "员工姓名：王芳" in replies(MANAGER, "zh-hans", ["我的员工王芳这周迟到了三次。"])[0]
    assert "employee's name: Dana" in replies(MANAGER, "en", ["My employee Dana has been late three times this week."])[0]


def test_a_value_is_still_confirmed() -> None:
    assert is_account("My employee Dana has been late three times this week.", "My employee Dana has been late three times this week.")
    assert not is_account("wood frame", "wood frame") and not is_account("灭火器和烟雾报警器", "灭火器和烟雾报警器")
    assert not is_account("no budget limit", "no budget limit, but it has to be GDPR compliant, and the data stays in the EU")


# --- yes / no as a sentence ------------------------------------------------------------------


@pytest.mark.parametrize(("locale", "message", "said"), [
    ("zh-hans", "还没有和她谈过", "好的，您还没有尝试联系过对方。"),
    ("zh-hans", "打过电话，没人接", "好的，您已经尝试联系过对方了。"),
    ("en", "no, not yet", "OK, you haven't tried to contact them yet."),
    ("en", "I called twice, straight to voicemail", "OK, you've already tried to contact them."),
])
def test_a_yes_or_no_is_said_with_its_questions_meaning(locale: str, message: str, said: str) -> None:
    reply = replies(MANAGER, locale, ["我的员工王芳这周迟到了三次。" if locale != "en" else "My employee Dana was late three times.", message])[1]
    assert said in reply and "Noted: no" not in reply and "已记下：否" not in reply and "已记下：是" not in reply


@pytest.mark.parametrize(("question", "value", "lang", "said"), [
    ("Will there be any secondary occupancies or mixed uses?", "no", "en", "OK, there won't be any secondary occupancies or mixed uses."),
    ("Will there be any secondary occupancies or mixed uses?", "yes", "en", "OK, there will be secondary occupancies or mixed uses."),
    ("Is there a basement?", "no", "en", "OK, there is no basement."),
    ("Do you rent the building?", "no", "en", "OK, you don't rent the building."),
    ("Has this happened before?", "yes", "en", "OK, this has happened before."),
    ("是否有次要用途或混合用途？", "no", "zh", "好的，没有次要用途或混合用途。"),
    ("是否有次要用途或混合用途？", "yes", "zh", "好的，有次要用途或混合用途。"),
    ("有没有地下室？", "no", "zh", "好的，没有地下室。"),
    ("您需要停车位吗？", "no", "zh", "好的，您不需要停车位。"),
    ("What about the roof?", "yes", "en", "Got it, thanks."),  # no statement to be made of it: a plain acknowledgement
    ("屋顶呢？", "no", "zh", "好的，明白了。"),
])
def test_yes_no_said(question: str, value: str, lang: str, said: str) -> None:
    spec = PERMIT.form.question("3.2.2")
    spec = type(spec)(**{**{f: getattr(spec, f) for f in ("id", "answer_type", "choices")}, "question": {lang: question}})
    assert yes_no_said(spec, value, lang) == said


# --- values in the conversation's language ---------------------------------------------------

ZH_ANSWERS = ["住宅", "3层", "1200平方英尺", "我们一家自己住", "C组", "没有", "6人", "木结构", "灭火器和烟雾报警器"]


def test_a_chinese_form_says_values_in_chinese_with_their_questions_name() -> None:
    said = replies(PERMIT, "zh-hans", ZH_ANSWERS)
    assert "已记下建筑类型：住宅。" in said[0]
    assert "已记下层数：3层。" in said[1]
    assert "已记下面积：1200平方英尺。" in said[2]
    assert "已记下住宅类型：单户住宅。" in said[3]
    assert "住宅" in said[4] and "Group" not in said[4]  # the plan's Chinese label, or the engine's own for a plan without one
    assert "好的，没有次要用途或混合用途。" in said[5]
    assert "已记下人数：6人。" in said[6]
    for reply in said:
        assert not ENGLISH_WORD.search(reply), reply  # no English word in a Chinese reply (the plan's data is all in Chinese)
    assert "2. 建筑有几层：3层" in said[-1] and "6. 是否有次要用途或混合用途：否" in said[-1]


def test_an_english_form_keeps_its_values() -> None:
    said = replies(PERMIT, "en", ["residential", "3 storeys", "1200 sq ft"])
    assert "Noted the building type: residential." in said[0] and "Noted: 3 storeys." in said[1] and "Noted: 1200 sq ft." in said[2]


def test_a_change_says_both_values_in_chinese() -> None:
    d = greeted(PERMIT, "zh-hans")
    for text in ZH_ANSWERS:
        d.say(text)
    assert "2. 建筑有几层：3层" in answers_listing(d.state, PERMIT.form, "zh")
    outcome = d.say("不对，应该是4层")
    reply = compose_reply(outcome, RunView(step_id="review_form"), PERMIT, locale="zh-hans").text
    assert "已将层数从“3层”改为“4层”。" in reply and "storeys" not in reply


def test_two_choices_named_are_asked_about_in_chinese_labels() -> None:
    said = replies(PERMIT, "zh-hans", ["住宅", "两层", "1200平方英尺", "我们一家自己住", "主要是办公，也有一部分商铺"])
    assert not ENGLISH_WORD.search(said[-1]), said[-1]


# --- the greeting ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "lang", "introduced"), [
    ("经理助手", "zh", "经理助手"), ("停车收费咨询", "zh", "停车收费咨询助手"), ("售后客服", "zh", "售后客服"),
    ("Manager assistant", "en", "Manager assistant"), ("Front desk concierge", "en", "Front desk concierge"),
    ("Parking help desk", "en", "Parking help desk concierge"), ("Диагностика", "ru", "Диагностика"),
])
def test_the_greeting_names_the_concierge_once(name: str, lang: str, introduced: str) -> None:
    assert introduces(name, lang) == introduced
    hello = opening_text(MANAGER, name, "", lang, None)
    assert "助手助手" not in hello and "assistant concierge" not in hello and "客服助手" not in hello


# --- a choice's note ---------------------------------------------------------------------------


@pytest.mark.parametrize(("taken", "lang", "said"), [
    (ChoiceTaken(ended=True, end_label="Closed"), "en",
     "Closed. Thank you — if you need anything else, you can start a new conversation from the start page."),
    (ChoiceTaken(ended=True, end_label="已结束"), "zh", "已结束。谢谢您！如有其他需要，可以在首页开始新的对话。"),
    (ChoiceTaken(documents=("Email draft (.eml)",), step_label="Talk it through"), "en",
     "I've prepared the email draft: you can open it under Documents."),
    (ChoiceTaken(documents=("邮件草稿（.eml）",), step_label="沟通情况"), "zh", "已为您准备好邮件草稿，可以在“文档”中打开。"),
    (ChoiceTaken(step_label="Describe the project"), "en", "OK — next: describe the project."),
    (ChoiceTaken(step_label="描述项目"), "zh", "好的，下一步：描述项目。"),
    (ChoiceTaken(waiting_review=True, step_label="Fee review"), "en", "A supervisor will review this now; I'll post their decision here."),
    (ChoiceTaken(moved=False, step_label="Talk it through"), "en", "OK — go ahead, I'm listening."),
    (ChoiceTaken(then_asks=True, step_label="Answer the questions"), "zh", "好的。"),
])
def test_a_choice_note_says_what_happened(taken: ChoiceTaken, lang: str, said: str) -> None:
    note = choice_note(taken, lang)
    assert note == said
    assert not any(word in note for word in ("Done:", "Now at", "当前步骤", "已执行"))


# --- a review's outcome and the fee tools' words --------------------------------------------


def test_a_review_decision_is_said_by_its_label() -> None:
    assert review_decided_text("调整为模拟金额", "规则版本正确", "zh") == "主管已作出决定：调整为模拟金额。理由：规则版本正确。"
    assert review_decided_text("Keep the order's amount", "the gate was open", "en") == \
        "A supervisor decided: keep the order's amount. Their reason: the gate was open."
    assert "adjust_to_simulated" not in review_decided_text("", "ok", "en")
    decision = {"order": {"order_no": "A1", "total_amount": "5.00", "arrears_amount": "0.00"}, "outcome": "refund_partly"}
    assert "refund_partly" not in fee_decision_text(decision, "zh") and "refund_partly" not in fee_decision_text(decision, "en")


def _tool_reply(result: dict, lang: str) -> str:
    config = ConversationConfig.from_dict(load_example("parking_help_desk"))
    d = Dialogue(config, NOW, locale=lang)
    outcome = d.say("车牌沪B88888有没有欠费" if lang == "zh" else "does plate 沪B88888 owe anything")
    return compose_reply(outcome, RunView(step_id="answer", tool_result=result), config, locale=lang).text


ARREARS = {"tool": "arrears_check", "plate_no": "沪B88888", "total_arrears": "7.00", "orders": [
    {"order_no": "SCN-009-B", "lot_code": "SH-PD-001", "entry_time": "2026-03-04T09:00:00+08:00", "exit_time": "2026-03-04T12:00:00+08:00",
     "total_amount": "12.00", "paid_amount": "5.00", "arrears_amount": "7.00"}]}
MATCH = {"tool": "fee_verify", "rule_code": "SH-PD-DAY", "version_no": 1, "order_total_amount": "4.00", "simulated_total_amount": "4.00",
         "amount_check_result": "match", "breakdown": [{"segment_name": "day", "minutes": 60, "amount": "4.00"}],
         "order": {"order_no": "SCN-001", "plate_no": "沪A12345", "lot_code": "SH-PD-001",
                   "entry_time": "2026-03-04T09:00:00+08:00", "exit_time": "2026-03-04T10:00:00+08:00"}}


def test_fee_tool_replies_leak_no_codes_or_english_in_chinese() -> None:
    arrears = _tool_reply(ARREARS, "zh")
    assert "订单 SCN-009-B" in arrears and "order SCN" not in arrears and "order(s)" not in arrears
    verify = _tool_reply(MATCH, "zh")
    assert "60分钟" in verify and " min" not in verify and "auto" not in verify and "自动通过" not in verify
    english = _tool_reply(ARREARS, "en")
    assert "one unpaid order" in english and "order(s)" not in english
    assert "auto-pass" not in _tool_reply(MATCH, "en")


def test_a_choice_without_a_chinese_label_is_said_from_the_engines_table() -> None:
    from conversations.engine.config import ChoiceSpec
    from conversations.engine.plain_words import choice_label

    english_only = ChoiceSpec(value="Group C", label={"en": "Group C - residential"})
    assert choice_label(english_only, "zh") == "C组（住宅）" and choice_label(english_only, "en") == "Group C - residential"
    assert choice_label(ChoiceSpec(value="shed", label={"en": "Shed"}), "zh") == "Shed"  # nothing to say it with: the plan's own word


@pytest.mark.parametrize(("lang", "said"), [
    ("ru", "Готово: итоговый отчёт. Его можно открыть в разделе «Документы»."),
    ("es", "Listo: informe final. Puede abrirlo en Documentos."),
])
def test_a_choice_note_in_russian_and_spanish_has_no_english(lang: str, said: str) -> None:
    label = {"ru": "Итоговый отчёт", "es": "Informe final"}[lang]
    note = choice_note(ChoiceTaken(documents=(label,), ended=True), lang)
    assert note.startswith(said)
    assert "Thank" not in note and "prepared" not in note and "Documents" not in note
