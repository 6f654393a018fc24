"""The engine's sentences come from the project's message catalog: every one is in each compiled catalog,
a Russian or Spanish reply is said in its language, a Chinese one as before, and a sentence the catalog
lacks is said in English."""

from __future__ import annotations

import gettext
import shutil
import subprocess
from pathlib import Path

import pytest

from conversations.engine.catalog import LOCALE_DIR, say, say_n
from conversations.engine.replies import RunView, _verify, fee_decision_text
from conversations.management.commands.makemessages import Command as MakeMessages
from tests.conversations.engine.test_cv_plain_replies import PERMIT, replies

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
