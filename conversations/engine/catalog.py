"""The engine's sentences in the person's language, from the project's one message catalog.

The pages and the engine read the same compiled catalogs (`locale/<lang>/LC_MESSAGES/django.mo`):
Django's runtime for the pages, the standard library's gettext here, since the engine imports no
Django. A message is English with `{name}` placeholders, filled after translation; `makemessages`
collects the calls (`conversations/management/commands/makemessages.py` adds the keywords), so a
message must be a string literal. A message without a translation is said in English.
"""

from __future__ import annotations

import gettext
from functools import cache
from pathlib import Path
from typing import Any

LOCALE_DIR = Path(__file__).resolve().parents[2] / "locale"

# The engine's language codes and the catalog folders that hold them (English is the msgids themselves).
_CATALOG_FOLDERS = {"zh": "zh_Hans", "ru": "ru", "es": "es"}


def catalog_folder(lang: str) -> str | None:
    """The catalog folder of an engine language or page locale ("zh", "zh-hans" -> "zh_Hans"); None for English."""
    code = lang.lower()
    return _CATALOG_FOLDERS.get("zh" if code.startswith("zh") else code[:2])


@cache
def _translations(folder: str | None) -> gettext.NullTranslations:
    if folder is None:
        return gettext.NullTranslations()
    return gettext.translation("django", localedir=LOCALE_DIR, languages=[folder], fallback=True)


def _filled(text: str, message: str, values: dict[str, Any]) -> str:
    """`{name}` placeholders filled; a translation that cannot be filled is said as the English message."""
    if not message:
        return ""  # gettext's translation of "" is the catalog's header
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError):
        return message.format(**values)


def marked(message: str, /) -> str:
    """A message kept in a table and said later with `say`: marks the literal for `makemessages`."""
    return message


def say(lang: str, message: str, /, **values: Any) -> str:
    """`message` in `lang`, its `{name}` placeholders filled from `values`."""
    return _filled(_translations(catalog_folder(lang)).gettext(message), message, values)


def say_in(lang: str, context: str, message: str, /, **values: Any) -> str:
    """`say` for a message that needs another translation in another place (a separator, a word)."""
    return _filled(_translations(catalog_folder(lang)).pgettext(context, message), message, values)


def say_n(lang: str, singular: str, plural: str, count: int, /, **values: Any) -> str:
    """`say` for a sentence about `count` things, in the plural form `lang` uses for it (Russian has several);
    `{n}` is the count unless `values` say it otherwise (a number as written: "1,200")."""
    english = singular if count == 1 else plural
    return _filled(_translations(catalog_folder(lang)).ngettext(singular, plural, count), english, {"n": count, **values})


__all__ = ["LOCALE_DIR", "catalog_folder", "marked", "say", "say_in", "say_n"]
