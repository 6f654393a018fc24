"""Text cleaning shared by chunking, embedding and lexical search: whitespace, Markdown noise, scripts."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# Han (incl. extension A and compatibility), kana and Hangul: scripts written without spaces,
# where one character carries roughly what a short word does in English.
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_SEGMENT_RE = re.compile(f"(?P<cjk>[{_CJK_CLASS}]+)|(?P<word>(?:(?![{_CJK_CLASS}])[^\\W_])+)")

# Zero-width characters and the BOM are invisible noise that breaks tokenisation.
_INVISIBLE_RE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_SPACES_RE = re.compile(r"[ \t\f\v\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_MANY_BLANK_LINES_RE = re.compile(r"\n{3,}")

_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_HR_RE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_BULLET_RE = re.compile(r"^(\s*)[*+\-]\s+(\[[ xX]\]\s+)?")
_BLOCKQUOTE_RE = re.compile(r"^\s{0,3}(>\s?)+")
_IMAGE_RE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK_RE = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)")
_REF_LINK_RE = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_LINK_DEF_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+.*$")
_FOOTNOTE_RE = re.compile(r"\[\^[^\]]+\]")
_AUTOLINK_RE = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_HTML_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(\s[^<>]*)?/?>")
_BOLD_RE = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR_RE = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])")
_ITALIC_UNDERSCORE_RE = re.compile(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])")
_STRIKE_RE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_INLINE_CODE_RE = re.compile(r"`+([^`]+?)`+")
_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")

# Sentence ends: Latin terminators need following whitespace (so 3.5 and a.m. stay whole),
# CJK terminators end a sentence on their own; a newline always does.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;])[\"')\]]*\s+|(?<=[。！？；…])[”’」』）)]*\s*|\n+")
_ABBREVIATIONS = frozenset(
    {"e.g.", "i.e.", "etc.", "vs.", "no.", "approx.", "fig.", "sec.", "mr.", "ms.", "dr.", "st."}
)


def is_cjk(char: str) -> bool:
    """True when the single character belongs to a CJK script (Han, kana, Hangul)."""
    return bool(CJK_RE.match(char))


def has_cjk(text: str) -> bool:
    """True when the text contains at least one CJK character."""
    return CJK_RE.search(text) is not None


def weighted_length(text: str, cjk_weight: int = 2) -> int:
    """Length in size units: a CJK character counts `cjk_weight`, anything else counts one."""
    if cjk_weight == 1:
        return len(text)
    cjk = len(CJK_RE.findall(text))
    return len(text) + cjk * (cjk_weight - 1)


def normalize_whitespace(text: str) -> str:
    """Unify newlines and spaces, drop invisible characters, keep at most one blank line."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _INVISIBLE_RE.sub("", text)
    lines = [_SPACES_RE.sub(" ", line).strip() for line in text.split("\n")]
    return _MANY_BLANK_LINES_RE.sub("\n\n", "\n".join(lines)).strip()


def normalize_for_match(text: str) -> str:
    """NFKC + casefold so full-width Latin letters and digits match their ASCII forms."""
    return unicodedata.normalize("NFKC", text).casefold()


def strip_inline_markdown(line: str) -> str:
    """Remove inline Markdown markup (links, emphasis, code ticks, HTML) keeping the words."""
    line = _IMAGE_RE.sub(r"\1", line)
    line = _LINK_RE.sub(r"\1", line)
    line = _REF_LINK_RE.sub(r"\1", line)
    line = _FOOTNOTE_RE.sub("", line)
    line = _AUTOLINK_RE.sub(r"\1", line)
    line = _HTML_TAG_RE.sub("", line)
    line = _INLINE_CODE_RE.sub(r"\1", line)
    line = _BOLD_RE.sub(r"\2", line)
    line = _ITALIC_STAR_RE.sub(r"\1", line)
    line = _ITALIC_UNDERSCORE_RE.sub(r"\1", line)
    line = _STRIKE_RE.sub(r"\1", line)
    return _ESCAPE_RE.sub(r"\1", line)


def parse_heading(line: str) -> tuple[int, str] | None:
    """Return (level, plain title) when the line is an ATX Markdown heading."""
    match = _HEADING_RE.match(line)
    if match is None:
        return None
    title = strip_inline_markdown(match.group(2)).strip()
    return (len(match.group(1)), title) if title else None


def is_fence(line: str) -> bool:
    """True when the line opens or closes a fenced code block."""
    return _FENCE_RE.match(line) is not None


def strip_markdown_lines(lines: list[str]) -> list[str]:
    """Strip block-level and inline Markdown from lines; headings stay as plain lines."""
    out: list[str] = []
    in_fence = False
    for raw in lines:
        if is_fence(raw):
            # Fence markers are noise; the code inside is kept verbatim as content.
            in_fence = not in_fence
            continue
        if in_fence:
            out.append(raw.rstrip())
            continue
        line = raw.rstrip()
        if _HR_RE.match(line) or _TABLE_SEPARATOR_RE.match(line) or _LINK_DEF_RE.match(line):
            continue
        heading = parse_heading(line)
        if heading is not None:
            out.append(heading[1])
            continue
        line = _BLOCKQUOTE_RE.sub("", line)
        line = _BULLET_RE.sub(r"\1- ", line)
        stripped = line.strip()
        if stripped.startswith("|") or stripped.endswith("|"):
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            line = " | ".join(cell for cell in cells if cell)
        out.append(strip_inline_markdown(line))
    return out


def strip_markdown(text: str) -> str:
    """Remove Markdown noise from a whole document, keeping headings as plain lines."""
    text = _HTML_COMMENT_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return "\n".join(strip_markdown_lines(text.split("\n")))


def clean_text(text: str, *, markdown: bool = True) -> str:
    """Clean text for indexing: strip Markdown noise (optional) then normalise whitespace."""
    if markdown:
        text = strip_markdown(text)
    return normalize_whitespace(text)


def split_sentences(text: str) -> list[str]:
    """Split into sentences on Latin and CJK terminators and newlines, keeping terminators."""
    sentences: list[str] = []
    pending = ""
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        piece = text[start : match.end()]
        start = match.end()
        candidate = pending + piece
        last_word = candidate.rstrip().rsplit(None, 1)[-1].lower() if candidate.strip() else ""
        # "e.g. " is not a sentence end: keep accumulating.
        if last_word in _ABBREVIATIONS and "\n" not in match.group(0):
            pending = candidate
            continue
        pending = ""
        if candidate.strip():
            sentences.append(candidate.strip())
    tail = (pending + text[start:]).strip()
    if tail:
        sentences.append(tail)
    return sentences


def iter_segments(text: str) -> Iterator[tuple[str, str]]:
    """Yield ("cjk", run) and ("word", token) segments of NFKC-casefolded text."""
    for match in _SEGMENT_RE.finditer(normalize_for_match(text)):
        kind = match.lastgroup or "word"
        yield kind, match.group(0)
