"""Split Markdown or plain text into heading-aware, size-bounded, overlapping chunks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .cleaning import (
    is_cjk,
    is_fence,
    normalize_whitespace,
    parse_heading,
    split_sentences,
    strip_markdown_lines,
    weighted_length,
)

HEADING_SEPARATOR = " > "


@dataclass(frozen=True)
class ChunkingConfig:
    """Chunk size limits in weighted characters (a CJK character counts `cjk_weight`)."""

    max_chars: int = 800
    overlap_chars: int = 80
    cjk_weight: int = 2

    def __post_init__(self) -> None:
        if self.max_chars < 40:
            raise ValueError("max_chars must be at least 40")
        if not 0 <= self.overlap_chars <= self.max_chars // 2:
            raise ValueError("overlap_chars must be between 0 and max_chars / 2")
        if self.cjk_weight < 1:
            raise ValueError("cjk_weight must be at least 1")


DEFAULT_CHUNKING = ChunkingConfig()


@dataclass(frozen=True)
class ChunkDraft:
    """One chunk of a source before it is stored: text, heading path, position, stable id."""

    chunk_id: str
    source_id: str
    ordinal: int
    heading_path: tuple[str, ...]
    text: str

    @property
    def heading(self) -> str:
        """Heading path joined for display and storage, e.g. "Roof AC > Capacitor"."""
        return HEADING_SEPARATOR.join(self.heading_path)


@dataclass(frozen=True)
class Section:
    """The lines under one heading path (the path is empty before the first heading)."""

    heading_path: tuple[str, ...]
    lines: tuple[str, ...]


@dataclass(frozen=True)
class _Unit:
    text: str
    paragraph: int
    line: int


def make_chunk_id(source_id: str, ordinal: int, text: str, *, version: int | None = None) -> str:
    """Stable chunk id: blake2b of source id, version (when given), ordinal and text."""
    key = f"{source_id}\x1f{'' if version is None else version}\x1f{ordinal}\x1f{text}"
    return hashlib.blake2b(key.encode("utf-8"), digest_size=16).hexdigest()


def split_sections(markdown: str) -> list[Section]:
    """Group Markdown lines by their heading path; headings inside code fences are ignored."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if any(line.strip() for line in current):
            sections.append(Section(tuple(title for _, title in stack), tuple(current)))
        current.clear()

    for line in markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if is_fence(line):
            in_fence = not in_fence
        heading = None if in_fence else parse_heading(line)
        if heading is None:
            current.append(line)
            continue
        flush()
        level, title = heading
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    flush()
    return sections


def _joiner(left: str, right: str) -> str:
    # CJK text has no spaces between sentences; Latin text needs one.
    if (
        left
        and right
        and (is_cjk(left[-1]) or left[-1] in "。！？；，、：）」』”")
        and is_cjk(right[0])
    ):
        return ""
    return " "


def _hard_split(text: str, limit: int, cjk_weight: int) -> list[str]:
    """Cut a sentence longer than `limit` units, preferring whitespace in Latin text."""
    pieces: list[str] = []
    start = 0
    while start < len(text):
        used = 0
        end = start
        while end < len(text):
            step = cjk_weight if is_cjk(text[end]) else 1
            if used + step > limit:
                break
            used += step
            end += 1
        if end < len(text):
            space = text.rfind(" ", start, end)
            if space > start + (end - start) // 2:
                end = space
        piece = text[start:end].strip()
        if piece:
            pieces.append(piece)
        start = max(end, start + 1)
    return pieces


def _tail(text: str, limit: int, cjk_weight: int) -> str:
    """The end of `text` within `limit` units: whole sentences if they fit, else whole words."""
    if limit <= 0:
        return ""
    sentences = split_sentences(text)
    picked: list[str] = []
    used = 0
    for sentence in reversed(sentences):
        size = weighted_length(sentence, cjk_weight) + (1 if picked else 0)
        if used + size > limit:
            break
        picked.insert(0, sentence)
        used += size
    if picked:
        out = picked[0]
        for sentence in picked[1:]:
            out += _joiner(out, sentence) + sentence
        return out
    used = 0
    start = len(text)
    while start > 0:
        step = cjk_weight if is_cjk(text[start - 1]) else 1
        if used + step > limit:
            break
        used += step
        start -= 1
    tail = text[start:]
    clause = min(
        (i for i in (tail.find(p) for p in "，、,;；：") if 0 <= i < len(tail) - 1), default=-1
    )
    if start > 0 and clause >= 0:
        # Start after a clause break rather than in the middle of a phrase.
        return tail[clause + 1 :].strip()
    if start > 0 and not is_cjk(text[start - 1]) and not text[start - 1].isspace():
        # Started mid-word: drop the partial word so the overlap reads cleanly.
        space = tail.find(" ")
        tail = tail[space + 1 :] if space >= 0 else ""
    return tail.strip()


def _units(body: str, config: ChunkingConfig) -> list[_Unit]:
    """Break a section into packable units: paragraphs, else lines, else sentences, else pieces."""
    units: list[_Unit] = []
    line_no = 0
    for index, paragraph in enumerate(p.strip() for p in body.split("\n\n")):
        if not paragraph:
            continue
        if weighted_length(paragraph, config.cjk_weight) <= config.max_chars:
            units.append(_Unit(paragraph, index, line_no))
            line_no += 1
            continue
        # Lines first: list items and table rows are natural boundaries worth keeping.
        for line in paragraph.split("\n"):
            line_no += 1
            if weighted_length(line, config.cjk_weight) <= config.max_chars:
                units.append(_Unit(line, index, line_no))
                continue
            for sentence in split_sentences(line):
                if weighted_length(sentence, config.cjk_weight) <= config.max_chars:
                    units.append(_Unit(sentence, index, line_no))
                else:
                    units.extend(
                        _Unit(piece, index, line_no)
                        for piece in _hard_split(sentence, config.max_chars, config.cjk_weight)
                    )
    return units


def _separator(previous: _Unit, unit: _Unit, text: str) -> str:
    if unit.paragraph != previous.paragraph:
        return "\n\n"
    if unit.line != previous.line:
        return "\n"
    return _joiner(text, unit.text)


def pack_section(body: str, config: ChunkingConfig = DEFAULT_CHUNKING) -> list[str]:
    """Pack one section's cleaned body into chunk texts no longer than `max_chars` units."""

    def size(value: str) -> int:
        return weighted_length(value, config.cjk_weight)

    chunks: list[str] = []
    text = ""
    previous: _Unit | None = None
    for unit in _units(body, config):
        if previous is not None:
            sep = _separator(previous, unit, text)
            if size(text + sep + unit.text) <= config.max_chars:
                text += sep + unit.text
                previous = unit
                continue
            chunks.append(text)
            # Overlap: repeat the end of the previous chunk so a cut passage keeps context.
            room = config.max_chars - size(unit.text) - len(sep)
            overlap = _tail(text, min(config.overlap_chars, room), config.cjk_weight)
            text = overlap + sep + unit.text if overlap else unit.text
        else:
            text = unit.text
        previous = unit
    if text:
        chunks.append(text)
    return chunks


def chunk_markdown(
    markdown: str,
    *,
    source_id: str,
    version: int | None = None,
    config: ChunkingConfig = DEFAULT_CHUNKING,
) -> list[ChunkDraft]:
    """Split Markdown by headings, then paragraphs and sentences, into ordered chunk drafts."""
    drafts: list[ChunkDraft] = []
    for section in split_sections(markdown):
        body = normalize_whitespace("\n".join(strip_markdown_lines(list(section.lines))))
        for text in pack_section(body, config):
            ordinal = len(drafts)
            drafts.append(
                ChunkDraft(
                    chunk_id=make_chunk_id(source_id, ordinal, text, version=version),
                    source_id=source_id,
                    ordinal=ordinal,
                    heading_path=section.heading_path,
                    text=text,
                )
            )
    return drafts
