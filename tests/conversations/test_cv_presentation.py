"""What the chat pages show a person: the page in the conversation's language (the message
catalog is complete and compiled), labels and formatted values instead of slot keys and ISO
times, blockers as sentences, progress as it happened, documents in the page."""

from __future__ import annotations

import gettext
import shutil
import subprocess
from pathlib import Path

import pytest
from django.utils import translation

from conversations import presentation
from conversations.models import Conversation
from workflows.models import RunDocument

LOCALE = Path(__file__).resolve().parents[2] / "locale"
LANGUAGES = ("zh_Hans", "ru", "es")


def _entries(po: Path) -> list[tuple[str, str, bool]]:
    """(msgid, msgstr, fuzzy) of each entry of a .po file (the header left out)."""
    entries, msgid, msgstr, fuzzy, field = [], [], [], False, None
    for line in [*po.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("#,") and "fuzzy" in line:
            fuzzy = True
        elif line.startswith("msgid "):
            msgid, msgstr, field = [line[6:]], [], "id"
        elif line.startswith("msgstr"):
            msgstr, field = [line.split(" ", 1)[1]], "str"
        elif line.startswith('"') and field:
            (msgid if field == "id" else msgstr).append(line)
        elif not line.strip() and field:
            entry = ("".join(s[1:-1] for s in msgid), "".join(s[1:-1] for s in msgstr), fuzzy)
            if entry[0]:
                entries.append(entry)
            msgid, msgstr, fuzzy, field = [], [], False, None
    return entries


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_message_is_translated_and_none_is_fuzzy(language: str) -> None:
    entries = _entries(LOCALE / language / "LC_MESSAGES" / "django.po")
    assert len(entries) > 80
    assert [e[0] for e in entries if not e[1]] == []
    assert [e[0] for e in entries if e[2]] == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_compiled_catalog_is_the_one_the_po_file_gives(language: str, tmp_path: Path) -> None:
    if shutil.which("msgfmt") is None:
        pytest.skip("msgfmt (gettext) is not installed")
    folder = LOCALE / language / "LC_MESSAGES"
    subprocess.run(["msgfmt", "--check-format", "-o", str(tmp_path / "fresh.mo"), str(folder / "django.po")], check=True)
    with (folder / "django.mo").open("rb") as committed, (tmp_path / "fresh.mo").open("rb") as fresh:
        assert gettext.GNUTranslations(committed)._catalog == gettext.GNUTranslations(fresh)._catalog, (  # noqa: SLF001
            "run `python manage.py compilemessages` and commit the .mo files")


def _yes_no_question():  # noqa: ANN202
    from conversations.engine.config import FormQuestionSpec

    return FormQuestionSpec(id="contacted", answer_type="yes_no", slot="contacted", question={"en": "Did you call?"})


def test_a_moment_and_a_length_read_as_people_write_them() -> None:
    with translation.override("zh-hans"):
        assert presentation.format_value("at_time", "2026-11-29T10:00:00+08:00", None, "zh") == "2026年11月29日（星期日） 10:00"
        assert presentation.format_value("duration_minutes", "150", None, "zh") == "2小时30分钟"
        assert presentation.format_value("contacted", "no", _yes_no_question(), "zh") == "否"
    with translation.override("en"):
        assert presentation.format_value("at_time", "2026-11-29T10:00:00+08:00", None, "en") == "Sun 29 Nov 2026, 10:00"
        assert presentation.format_value("duration_minutes", "60", None, "en") == "1 h"
        assert presentation.format_value("visit_day", "2026-12-06", None, "en") == "Sun 6 Dec 2026"  # a day alone, in words
        assert presentation.format_value("plate_no", "沪A10019", None, "en") == "沪A10019"


@pytest.mark.django_db
def test_blockers_are_sentences_in_the_conversations_language(plans) -> None:  # noqa: ANN001
    from conversations.selectors import conversation_config
    from workflows.selectors import plan_by_id, plan_latest

    config = conversation_config(plan_by_id(plan_latest("parking_help_desk").pk))
    blockers = ["one_action_per_turn:draft_email: only one action is offered at a time", "slots.plate_no is missing",
                "stale input: intake_document v2 is newer", "reply_asks_question: the concierge is still asking a question; too_early"]
    with translation.override("zh-hans"):
        said = presentation.blocker_sentences(blockers, config, "zh")
    assert said == ["一次只做一件事：先做另一项操作。", "还需要您提供车牌号。", "它依据的文档已有更新，需要先重新生成。",
                    "我还有一个问题要先问您。", "请先多说一点情况。"]
    assert not any(code in " ".join(said) for code in ("one_action", "plate_no", "stale", "too_early"))



@pytest.fixture
def signed_in(client, person, demo):  # noqa: ANN001, ANN201
    client.force_login(person)
    return client


def _start(client, workflow_id: str, locale: str) -> int:  # noqa: ANN001
    response = client.post(f"/c/start/{workflow_id}/", {"locale": locale})
    return int(response["Location"].strip("/").split("/")[-1])


@pytest.mark.django_db
def test_a_chinese_conversation_page_is_chinese_whatever_the_browser_asks(signed_in) -> None:  # noqa: ANN001
    cid = _start(signed_in, "parking_help_desk", "zh-hans")
    signed_in.post(f"/c/{cid}/send", {"text": "浦东一号停车场明天上午十点到十二点多少钱"})
    page = signed_in.get(f"/c/{cid}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="zh-Hans">' in page
    for chinese in ("您的消息", "发送", "进度", "已了解的信息", "车场编码", "退出登录"):
        assert chinese in page
    for english in ("Your message", "Sign out", "What I know", "lot_code", "at_time", "T10:00:00", "(done)"):
        assert english not in page


@pytest.mark.django_db
def test_a_gate_passed_without_a_review_is_not_shown_as_a_review_done(signed_in) -> None:  # noqa: ANN001
    cid = _start(signed_in, "parking_help_desk", "en")
    signed_in.post(f"/c/{cid}/send", {"text": "please verify order SCN-019"})  # the amounts match: no review
    page = signed_in.get(f"/c/{cid}/").content.decode()
    assert "Fee review <span class=\"muted\">(not needed)</span>" in page


@pytest.mark.django_db
def test_a_document_is_shown_in_the_page_with_its_download_beside_it(signed_in) -> None:  # noqa: ANN001
    cid = _start(signed_in, "parking_help_desk", "en")
    run_id = Conversation.objects.get(pk=cid).run_id
    RunDocument.objects.create(run_id=run_id, key="intake_document", version=1,
                               content={"summary": "A <script>alert(1)</script> app", "goal": "**bold** goal"})
    page = signed_in.get(f"/c/{cid}/documents/intake_document/page").content.decode()
    assert "<h1>Intake document</h1>" not in page  # one heading: the page's own
    assert "<p><strong>Summary:</strong> A" in page and "<p><strong>Goal:</strong>" in page  # a paragraph each
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page  # text, never markup
    assert f'href="/c/{cid}/documents/intake_document" download' in page


@pytest.mark.django_db
def test_an_email_draft_is_shown_as_an_email(signed_in) -> None:  # noqa: ANN001
    cid = _start(signed_in, "manager_assistant", "zh-hans")
    run_id = Conversation.objects.get(pk=cid).run_id
    RunDocument.objects.create(run_id=run_id, key="email_draft", version=1,
                               content={"to": "liu@example.com", "subject": "跟进一下", "body": "你好，\n想约你聊聊。"})
    page = signed_in.get(f"/c/{cid}/documents/email_draft/page").content.decode()
    assert "收件人" in page and "liu@example.com" in page and "主题" in page and "跟进一下" in page
    assert "<p>你好，<br>想约你聊聊。</p>" in page and "尚未发送" in page
    other = signed_in.get(f"/c/{cid}/documents/calendar_invite/page")
    assert other.status_code == 404


def test_the_walks_find_an_engine_code_in_any_language_but_not_operator_data() -> None:
    from tests.support.language import internal_codes

    page = "不能办理：too_early: 请稍后；one_action_per_turn:draft_email；lot_code SH-PD-001；分段 night_free；tom@example.com"
    assert internal_codes(page) == ["too_early", "one_action_per_turn", "draft_email", "lot_code", "night_free"]
    assert internal_codes(page, ["night_free"])[-1] == "lot_code"  # a segment an operator named so is data
    assert internal_codes("Note: the stay is 2 h. Total: 6.00") == []
