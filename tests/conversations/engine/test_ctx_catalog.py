"""The engine's sentences come from the project's message catalog: every one is in each compiled catalog,
a Russian or Spanish reply is said in its language, a Chinese one as before, and a sentence the catalog
lacks is said in English."""

from __future__ import annotations

import gettext
import shutil
import subprocess
from pathlib import Path

import pytest

from conversations.engine import ContextState, ConversationConfig, load_example
from conversations.engine.action_prefs import describe_when, understood_line
from conversations.engine.catalog import LOCALE_DIR, say, say_n
from conversations.engine.forms import answers_listing
from conversations.engine.replies import RunView, _verify, fee_decision_text
from conversations.engine.state import VALID, SlotValue
from conversations.management.commands.makemessages import Command as MakeMessages
from conversations.packs.project_plan import draft_project_plan, render_project_plan
from tests.conversations.engine.test_cv_plain_replies import PERMIT, greeted, replies

ROOT = Path(__file__).resolve().parents[3]


def _sources() -> list[str]:
    """The project's modules that say sentences through the catalog."""
    return sorted(str(path.relative_to(ROOT)) for path in ROOT.glob("*/**/*.py")
                  if not {".venv", "tests"} & set(path.parts) and "catalog import" in path.read_text(encoding="utf-8"))


def _keys(compiled: Path) -> set[str]:
    """A compiled catalog's messages as gettext keys them ("context\\x04text"; a plural by its singular)."""
    with compiled.open("rb") as file:
        catalog = gettext.GNUTranslations(file)._catalog  # noqa: SLF001
    return {key[0] if isinstance(key, tuple) else key for key in catalog if key}


def _said_by_the_code(tmp_path: Path) -> set[str]:
    """Every message the code says, collected as makemessages collects it (each its own translation, so msgfmt keeps it)."""
    keywords = [option for option in MakeMessages.xgettext_options if option.startswith("--keyword")]
    pot, english, compiled = tmp_path / "engine.pot", tmp_path / "engine.po", tmp_path / "engine.mo"
    subprocess.run(["xgettext", "--language=Python", "--from-code=UTF-8", *keywords, "-o", str(pot), *_sources()], cwd=ROOT, check=True)
    template = pot.read_text(encoding="utf-8").replace("charset=CHARSET", "charset=UTF-8")
    pot.write_text(template.replace("nplurals=INTEGER; plural=EXPRESSION;", "nplurals=2; plural=(n != 1);"), encoding="utf-8")
    subprocess.run(["msgen", "-o", str(english), str(pot)], check=True)
    subprocess.run(["msgfmt", "-o", str(compiled), str(english)], check=True)
    return _keys(compiled)


@pytest.mark.parametrize("folder", ["zh_Hans", "ru", "es"])
def test_every_message_the_engine_says_is_translated(folder: str, tmp_path: Path) -> None:
    if not all(shutil.which(tool) for tool in ("xgettext", "msgen", "msgfmt")):
        pytest.skip("gettext is not installed")
    said = _said_by_the_code(tmp_path)
    assert len(said) > 150
    missing = said - _keys(LOCALE_DIR / folder / "LC_MESSAGES" / "django.mo")  # a .mo holds translated messages only
    assert sorted(missing) == [], "run makemessages, translate the new messages, then compilemessages"


@pytest.mark.parametrize(("locale", "recorded", "number"), [("ru", "Записал: ", "3 этажа"), ("es", "Anotado: ", "3 plantas")])
def test_a_russian_or_spanish_form_reply_is_in_its_language(locale: str, recorded: str, number: str) -> None:
    said = replies(PERMIT, locale, ["residential", "3 storeys"])
    assert said[0].startswith(recorded) and "Noted" not in said[0]
    assert number in said[1]


def test_a_fee_review_is_said_in_spanish() -> None:
    decision = {"order": {"order_no": "A1001", "total_amount": "5.00", "arrears_amount": "0.00"}, "outcome": "waive"}
    assert fee_decision_text(decision, "es") == (
        "Revisión resuelta: un supervisor condonó lo que quedaba pendiente en el pedido A1001. Ahora queda pendiente 0.00.")


def test_a_chinese_reply_is_as_it_was() -> None:
    said = replies(PERMIT, "zh-hans", ["住宅", "3层"])
    assert "已记下建筑类型：住宅。" in said[0] and "已记下层数：3层。" in said[1]


VERIFIED = {"order": {"order_no": "A1001", "plate_no": "沪A10019", "lot_code": "SH-A01", "entry_time": "2026-03-02T08:00:00+08:00",
                      "exit_time": "2026-03-02T10:00:00+08:00"},
            "rule_code": "SH-DAY", "version_no": 1, "order_total_amount": "5.00", "simulated_total_amount": "6.00",
            "amount_check_result": "mismatch", "breakdown": [{"segment_name": "day", "minutes": 120, "amount": "6.00"}]}


@pytest.mark.parametrize(("lang", "row"), [("zh", "  第1段：120分钟 → 6.00元"), ("en", "  day: 120 min → 6.00"),
                                           ("ru", "  day: 120 мин → 6.00")])
def test_a_verified_fee_row_names_its_segment_as_the_language_can(lang: str, row: str) -> None:
    facts, _conclusion, _sources = _verify(VERIFIED, RunView(step_id="verify"), lang)
    assert facts[-1] == row  # a Chinese reply leaves a key such as `day` out: the row goes by its number


@pytest.mark.parametrize(("count", "said"), [(1, "1 этаж"), (3, "3 этажа"), (5, "5 этажей"), (21, "21 этаж"), (12, "12 этажей")])
def test_a_russian_count_takes_its_plural_form(count: int, said: str) -> None:
    assert say_n("ru", "{n} storey", "{n} storeys", count) == said


def test_placeholders_are_filled_after_translation() -> None:
    assert say("zh", "Hello! I'm the {name}. {description}", name="经理助手", description="说明。") == "您好！我是经理助手。说明。"
    assert say("es", "Progress: {steps}.", steps="A → B") == "Avance: A → B."


def test_a_message_without_a_translation_is_said_in_english() -> None:
    assert say("ru", "A sentence no catalog has: {value}.", value=7) == "A sentence no catalog has: 7."
    assert say("fr", "Cause isolated: {finding}.", finding="X") == "Cause isolated: X."  # a language without a catalog
    assert say_n("es", "{n} thing nobody translated", "{n} things nobody translated", 2) == "2 things nobody translated"


# --- the sentences that were built per language in code (the actions' line, the project plan, the answers listing) ---

MANAGER = ConversationConfig.from_dict(load_example("manager_assistant"))


def _slots(**values: str) -> ContextState:
    return ContextState().evolve(slots={name: SlotValue(name=name, value=value, source_turn=1, raw=value, status=VALID)
                                        for name, value in values.items()}, preferred_action="draft_email")


@pytest.mark.parametrize(("lang", "said"), [
    ("en", "Friday 27 November at 14:00"), ("zh", "11月27日（周五）14:00"),
    ("ru", "в пятницу, 27 ноября, в 14:00"), ("es", "el viernes 27 de noviembre a las 14:00")])
def test_a_calls_day_and_time_in_each_language(lang: str, said: str) -> None:
    assert describe_when("2026-11-27", "14:00", lang) == said


@pytest.mark.parametrize(("lang", "said"), [("en", "at 9:30"), ("zh", "9:30"), ("ru", "в 9:30"), ("es", "a las 9:30")])
def test_a_calls_time_alone(lang: str, said: str) -> None:
    assert describe_when(None, "9:30", lang) == said


@pytest.mark.parametrize(("lang", "said"), [
    ("en", "Understood: no email; a call with Sarah on Tuesday 24 November at 14:00 instead."),
    ("zh", "明白：不要邮件，改为与Sarah通话，时间：11月24日（周二）14:00。"),
    ("ru", "Понятно: без письма; вместо этого звонок (Sarah) во вторник, 24 ноября, в 14:00."),
    ("es", "Entendido: sin correo; una llamada con Sarah el martes 24 de noviembre a las 14:00 en su lugar."),
])
def test_the_actions_understood_line_in_each_language(lang: str, said: str) -> None:
    state = _slots(employee_name="Sarah", call_day="2026-11-24", call_time="14:00").evolve(preferred_action=None)
    assert understood_line(state, MANAGER, wanted="schedule_call", declined=("draft_email",), when_changed=False, language=lang) == said


@pytest.mark.parametrize(("lang", "said"), [
    ("en", "Understood: a call too, after an email. The call lasts 45 minutes."),
    ("zh", "明白：通话，在邮件之后。通话时长45分钟。"),
    ("ru", "Понятно: также звонок, после письма. Звонок длится 45 минут."),
    ("es", "Entendido: además, una llamada después del correo. La llamada dura 45 minutos."),
])
def test_a_second_action_and_a_corrected_detail(lang: str, said: str) -> None:
    state = _slots(call_minutes="45")
    assert understood_line(state, MANAGER, wanted="schedule_call", declined=(), when_changed=False, language=lang,
                           changed=("call_minutes",)) == said


@pytest.mark.parametrize(("lang", "said"), [("ru", "Понятно: звонок теперь в 15:00."), ("es", "Entendido: la llamada ahora es a las 15:00.")])
def test_a_moved_call(lang: str, said: str) -> None:
    assert understood_line(_slots(call_time="15:00"), MANAGER, wanted=None, declined=(), when_changed=True, language=lang,
                           corrected=("call_time",)) == said


@pytest.mark.parametrize(("lang", "heading", "phase", "question"), [
    ("ru", "# План проекта", "1. **Исследование** (недели 1–2): ", "- Какой бюджет доступен?"),
    ("es", "# Plan del proyecto", "1. **Descubrimiento** (semanas 1–2): ", "- ¿Qué presupuesto hay disponible?"),
])
def test_a_project_plan_in_russian_or_spanish(lang: str, heading: str, phase: str, question: str) -> None:
    plan = draft_project_plan({"summary": "A booking app", "goal": "fewer phone calls", "users": "patients"},
                              intent_class="web_app", language=lang, intake_version=1)
    text = render_project_plan(plan)
    assert plan["language"] == lang and text.startswith(heading)
    assert phase in text and question in text and "Discovery" not in text and "What budget" not in text


def test_the_answers_listing_takes_the_languages_colon() -> None:
    d = greeted(PERMIT, "es")
    for text in ("residential", "3 storeys"):
        d.say(text)
    assert "2. " in answers_listing(d.state, PERMIT.form, "es") and ": 3 plantas" in answers_listing(d.state, PERMIT.form, "es")
    assert "：3层" in answers_listing(d.state, PERMIT.form, "zh")


@pytest.mark.parametrize("lang", ["ru", "es"])
def test_the_handoff_and_sources_sentences_are_translated(lang: str) -> None:
    for message in ("Your message is with the member of staff handling this conversation; they will answer here.",
                    "The concierge is back: a member of staff handed this conversation back. How can I help?"):
        assert say(lang, message) != message
    assert say(lang, "Sources: {sources}", sources="SH-DAY v1") != "Sources: SH-DAY v1"
