"""Knowledge records from JSONL lines or Markdown front matter, validated with per-line errors."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .chunking import DEFAULT_CHUNKING, ChunkDraft, ChunkingConfig, chunk_markdown
from .search import ChunkSnapshot

SOURCE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$")
CODE_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
STATUSES = ("active", "inactive")
DEFAULT_SOURCE_TYPE = "biz_derived"  # the seed's knowledge_sources.source_type default
MAX_TITLE_CHARS = 300

KNOWN_FIELDS = frozenset(
    {
        "source_id",
        "title",
        "text",
        "content",
        "doc_type",
        "source_type",
        "version",
        "city_code",
        "lot_codes",
        "effective_from",
        "effective_to",
        "status",
        "locale",
    }
)


@dataclass(frozen=True)
class RecordError:
    """One validation problem: 1-based line number, the field (None for the whole line), why."""

    line: int
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", field '{self.field}'" if self.field else "")
        return f"{where}: {self.message}"


class KnowledgeRecordError(ValueError):
    """Raised with every RecordError found when input cannot be accepted as a whole."""

    def __init__(self, errors: Iterable[RecordError]) -> None:
        self.errors: tuple[RecordError, ...] = tuple(errors)
        shown = "; ".join(str(error) for error in self.errors[:10])
        more = f" (and {len(self.errors) - 10} more)" if len(self.errors) > 10 else ""
        super().__init__(f"{len(self.errors)} invalid knowledge record field(s): {shown}{more}")


@dataclass(frozen=True)
class KnowledgeRecord:
    """A knowledge source document with the metadata retrieval filters on."""

    source_id: str
    title: str
    text: str
    doc_type: str
    source_type: str = DEFAULT_SOURCE_TYPE
    version: int = 1
    city_code: str | None = None
    lot_codes: tuple[str, ...] = ()
    effective_from: datetime | None = None
    effective_to: datetime | None = None
    status: str = "active"
    locale: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class ParsedRecords:
    """Result of parsing JSONL: the valid records and the errors of the invalid lines."""

    records: tuple[KnowledgeRecord, ...]
    errors: tuple[RecordError, ...]

    @property
    def ok(self) -> bool:
        """True when no line had an error."""
        return not self.errors


@dataclass(frozen=True)
class FrontMatter:
    """Parsed `---` front matter: fields, the line each field was on, and the body after it."""

    fields: Mapping[str, Any]
    field_lines: Mapping[str, int]
    body: str
    body_line: int


def derived_source_id(title: str, text: str) -> str:
    """Deterministic source id for records that do not carry one."""
    digest = hashlib.blake2b(f"{title}\n{text}".encode(), digest_size=8).hexdigest()
    return f"src-{digest}"


# The years the API takes (config.serializers): far from datetime's own limits (1 and 9999),
# where moving to UTC or by a day overflows.
MIN_YEAR, MAX_YEAR = 1900, 2999


def _parse_time(value: Any) -> tuple[datetime | None, str | None]:
    if value is None or value == "":
        return None, None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None, f"not an ISO 8601 date-time: {value!r}"
    else:
        return None, f"expected an ISO 8601 string, got {type(value).__name__}"
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        return None, f"must include a UTC offset, e.g. 2025-01-01T00:00:00+08:00 (got {value!r})"
    if not MIN_YEAR <= parsed.year <= MAX_YEAR:
        return None, f"the year must be between {MIN_YEAR} and {MAX_YEAR} (got {value!r})"
    return parsed, None


def _code(value: Any, default: str | None) -> tuple[str | None, str | None]:
    if value is None or value == "":
        if default is None:
            return None, "is required"
        return default, None
    if not isinstance(value, str) or not CODE_RE.match(value):
        return None, f"must be a lowercase code like 'faq' or 'rule_explain', got {value!r}"
    return value, None


def record_from_mapping(
    data: Mapping[str, Any],
    *,
    line: int = 1,
    field_lines: Mapping[str, int] | None = None,
    default_source_type: str = DEFAULT_SOURCE_TYPE,
) -> tuple[KnowledgeRecord | None, list[RecordError]]:
    """Validate one record's fields; returns the record or every error found in it."""
    errors: list[RecordError] = []

    def fail(name: str, message: str) -> None:
        errors.append(RecordError((field_lines or {}).get(name, line), name, message))

    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        fail("title", "is required and must be a non-empty string")
        title = ""
    elif len(title) > MAX_TITLE_CHARS:
        fail("title", f"is longer than {MAX_TITLE_CHARS} characters")
    title = title.strip()

    text, content = data.get("text"), data.get("content")
    if text not in (None, "") and content not in (None, "") and text != content:
        fail("text", "give 'text' or 'content', not both")
    body = text if text not in (None, "") else content
    if not isinstance(body, str) or not body.strip():
        fail("text", "is required ('text' or 'content') and must be a non-empty string")
        body = ""

    source_id = data.get("source_id")
    if source_id in (None, ""):
        source_id = derived_source_id(title, body)
    elif not isinstance(source_id, str) or not SOURCE_ID_RE.match(source_id):
        fail("source_id", "must be 1-128 characters of letters, digits, '.', '_', ':' or '-'")

    doc_type, problem = _code(data.get("doc_type"), None)
    if problem:
        fail("doc_type", problem)
    source_type, problem = _code(data.get("source_type"), default_source_type)
    if problem:
        fail("source_type", problem)

    version = data.get("version", 1)
    if isinstance(version, str) and version.strip().isdigit():
        version = int(version)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        fail("version", f"must be a positive integer, got {data.get('version')!r}")
        version = 1

    city_code = data.get("city_code")
    if isinstance(city_code, int) and not isinstance(city_code, bool):
        city_code = str(city_code)
    if city_code == "":
        city_code = None
    if city_code is not None and not isinstance(city_code, str):
        fail("city_code", "must be a string or null")
        city_code = None

    raw_lots = data.get("lot_codes")
    lot_codes: tuple[str, ...] = ()
    if isinstance(raw_lots, str):
        raw_lots = [part.strip() for part in raw_lots.split(",") if part.strip()]
    if raw_lots is not None:
        if not isinstance(raw_lots, list | tuple) or not all(
            isinstance(code, str) and code.strip() for code in raw_lots
        ):
            fail("lot_codes", "must be a list of non-empty strings")
        else:
            lot_codes = tuple(dict.fromkeys(code.strip() for code in raw_lots))

    effective_from, problem = _parse_time(data.get("effective_from"))
    if problem:
        fail("effective_from", problem)
    effective_to, problem = _parse_time(data.get("effective_to"))
    if problem:
        fail("effective_to", problem)
    if effective_from and effective_to and effective_to <= effective_from:
        fail("effective_to", "must be later than effective_from")

    status = data.get("status") or "active"
    if status not in STATUSES:
        fail("status", f"must be one of {', '.join(STATUSES)}, got {status!r}")

    locale = data.get("locale")
    if locale is not None and (not isinstance(locale, str) or not locale.strip()):
        fail("locale", "must be a language tag like 'en' or 'zh'")
        locale = None

    if errors:
        return None, errors
    metadata = {key: value for key, value in data.items() if key not in KNOWN_FIELDS}
    record = KnowledgeRecord(
        source_id=source_id,
        title=title,
        text=body,
        doc_type=doc_type or "",
        source_type=source_type or default_source_type,
        version=version,
        city_code=city_code,
        lot_codes=lot_codes,
        effective_from=effective_from,
        effective_to=effective_to,
        status=status,
        locale=locale,
        metadata=metadata,
    )
    return record, []


def parse_jsonl_records(
    source: str | Iterable[str], *, default_source_type: str = DEFAULT_SOURCE_TYPE
) -> ParsedRecords:
    """Parse JSONL (one record per line, blank lines skipped); errors carry line and field."""
    lines = source.splitlines() if isinstance(source, str) else source
    records: list[KnowledgeRecord] = []
    errors: list[RecordError] = []
    seen: dict[tuple[str, int], int] = {}
    for number, raw in enumerate(lines, start=1):
        if number == 1:
            raw = raw.removeprefix("\ufeff")  # editors on Windows add a BOM
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            errors.append(
                RecordError(number, None, f"invalid JSON: {exc.msg} at column {exc.colno}")
            )
            continue
        if not isinstance(data, dict):
            errors.append(RecordError(number, None, "each line must be a JSON object"))
            continue
        record, problems = record_from_mapping(
            data, line=number, default_source_type=default_source_type
        )
        if record is None:
            errors.extend(problems)
            continue
        key = (record.source_id, record.version)
        if key in seen:
            errors.append(
                RecordError(
                    number,
                    "source_id",
                    f"duplicate source {record.source_id!r} version {record.version} "
                    f"(first on line {seen[key]})",
                )
            )
            continue
        seen[key] = number
        records.append(record)
    return ParsedRecords(tuple(records), tuple(errors))


def load_jsonl_records(
    source: str | Iterable[str], *, default_source_type: str = DEFAULT_SOURCE_TYPE
) -> list[KnowledgeRecord]:
    """Parse JSONL and raise KnowledgeRecordError listing every error if any line is invalid."""
    parsed = parse_jsonl_records(source, default_source_type=default_source_type)
    if parsed.errors:
        raise KnowledgeRecordError(parsed.errors)
    return list(parsed.records)


_INT_RE = re.compile(r"^-?\d+$")
_KEY_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:(.*)$")


def _scalar(raw: str) -> Any:
    value = raw.strip()
    if value == "" or value in ("null", "~"):
        return None
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if value in ("true", "false"):
        return value == "true"
    if _INT_RE.match(value):
        return int(value)
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [_scalar(part) for part in inner.split(",")] if inner else []
    return value


def parse_front_matter(text: str) -> FrontMatter:
    """Parse a `---` delimited front matter block (flat `key: value`, inline or dash lists)."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        raise KnowledgeRecordError(
            [RecordError(1, None, "missing front matter: the first line must be '---'")]
        )
    fields: dict[str, Any] = {}
    field_lines: dict[str, int] = {}
    errors: list[RecordError] = []
    last_key: str | None = None
    for index in range(1, len(lines)):
        number = index + 1
        line = lines[index]
        if line.strip() == "---":
            if errors:
                raise KnowledgeRecordError(errors)
            return FrontMatter(fields, field_lines, "\n".join(lines[index + 1 :]), number + 1)
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        stripped = line.strip()
        if stripped.startswith("- ") and last_key is not None:
            current = fields.get(last_key)
            if current is None:
                current = fields[last_key] = []
            if isinstance(current, list):
                current.append(_scalar(stripped[2:]))
                continue
        match = _KEY_RE.match(line)
        if match is None:
            errors.append(RecordError(number, None, f"expected 'key: value', got {stripped!r}"))
            continue
        key = match.group(1)
        if key in fields:
            errors.append(
                RecordError(number, key, f"duplicate key (first on line {field_lines[key]})")
            )
            continue
        fields[key] = _scalar(match.group(2))
        field_lines[key] = number
        last_key = key
    errors.append(RecordError(1, None, "front matter is not closed by a '---' line"))
    raise KnowledgeRecordError(errors)


def parse_markdown_record(
    text: str, *, default_source_type: str = "manual", **overrides: Any
) -> KnowledgeRecord:
    """Build a record from a Markdown document with front matter; raises with line numbers."""
    front = parse_front_matter(text)
    data = {**front.fields, **overrides}
    for key in ("text", "content"):
        if key in front.fields:
            raise KnowledgeRecordError(
                [RecordError(front.field_lines[key], key, "the body is the text; do not set it")]
            )
    data["text"] = front.body.strip()
    record, errors = record_from_mapping(
        data,
        line=1,
        field_lines={**front.field_lines, "text": front.body_line},
        default_source_type=default_source_type,
    )
    if record is None:
        raise KnowledgeRecordError(errors)
    return record


def record_chunks(
    record: KnowledgeRecord, config: ChunkingConfig = DEFAULT_CHUNKING
) -> list[ChunkDraft]:
    """Chunk a record's text with ids bound to its source id and version."""
    return chunk_markdown(
        record.text, source_id=record.source_id, version=record.version, config=config
    )


def record_snapshots(
    record: KnowledgeRecord, config: ChunkingConfig = DEFAULT_CHUNKING
) -> list[ChunkSnapshot]:
    """Chunk a record and attach its metadata, ready for an in-memory index."""
    return [
        ChunkSnapshot(
            chunk_id=draft.chunk_id,
            source_id=record.source_id,
            source_version=record.version,
            title=record.title,
            heading=draft.heading,
            text=draft.text,
            doc_type=record.doc_type,
            source_type=record.source_type,
            city_code=record.city_code,
            lot_codes=record.lot_codes,
            effective_from=record.effective_from,
            effective_to=record.effective_to,
            status=record.status,
            ordinal=draft.ordinal,
        )
        for draft in record_chunks(record, config)
    ]
