"""Ingest knowledge from Markdown files with front matter, directories of them, or JSONL.

Every input is parsed and validated first; if any file or line is invalid, every problem is
listed (file, line, field) and nothing is written. Otherwise the sources are chunked, embedded
and upserted in one transaction, or with --background staged and embedded by a Celery task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.errors import ApplicationError
from conversations.knowledge.engine import (
    KnowledgeRecord,
    KnowledgeRecordError,
    parse_jsonl_records,
    parse_markdown_record,
)
from conversations.knowledge.services.ingestion import knowledge_ingest, knowledge_ingest_background

SUFFIXES = (".md", ".markdown", ".jsonl")


def expand(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Files to read (directories expand to their Markdown and JSONL files, sorted); errors."""
    files: list[Path] = []
    errors: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
            if not found:
                errors.append(f"{raw}: no .md or .jsonl files in this directory")
            files.extend(found)
        elif path.is_file():
            if path.suffix.lower() not in SUFFIXES:
                errors.append(f"{raw}: not a Markdown (.md) or JSONL (.jsonl) file")
            else:
                files.append(path)
        else:
            errors.append(f"{raw}: no such file or directory")
    return list(dict.fromkeys(files)), errors


def parse_files(
    files: list[Path], *, source_type: str | None
) -> tuple[list[KnowledgeRecord], dict[str, str], list[str]]:
    """Records, their origin by source id, and every problem as 'file:line: field: message'."""
    records: list[KnowledgeRecord] = []
    origins: dict[str, str] = {}
    errors: list[str] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            errors.append(f"{path}: cannot read: {error}")
            continue
        if path.suffix.lower() == ".jsonl":
            parsed = parse_jsonl_records(text, default_source_type=source_type or "biz_derived")
            errors.extend(_located(path, e.line, e.field, e.message) for e in parsed.errors)
            found = list(parsed.records)
        else:
            try:
                found = [parse_markdown_record(text, default_source_type=source_type or "manual")]
            except KnowledgeRecordError as error:
                errors.extend(_located(path, e.line, e.field, e.message) for e in error.errors)
                continue
        for record in found:
            if record.source_id in origins:
                errors.append(f"{path}: source_id {record.source_id!r} is also in {origins[record.source_id]}")
                continue
            origins[record.source_id] = str(path)
            records.append(record)
    return records, origins, errors


def _located(path: Path, line: int, field: str | None, message: str) -> str:
    return f"{path}:{line}: " + (f"{field}: " if field else "") + message


class Command(BaseCommand):
    help = "Ingest knowledge from Markdown (front matter) files, directories of them, or JSONL."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--background", action="store_true", help="queue the embedding as a Celery task")
        parser.add_argument("--source-type", help="source_type for records that do not set one")
        parser.add_argument("--dry-run", action="store_true", help="validate only; write nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        files, errors = expand(options["paths"])
        records, origins, problems = parse_files(files, source_type=options.get("source_type"))
        errors.extend(problems)
        if errors:
            shown = "\n".join(f"  {e}" for e in errors)
            raise CommandError(f"{len(errors)} problem(s); nothing was written:\n{shown}")
        if not records:
            raise CommandError("no knowledge records found; nothing was written")
        self.stdout.write(f"{len(records)} record(s) from {len(files)} file(s) are valid.")
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing was written.")
            return
        try:
            if options["background"]:
                report = knowledge_ingest_background(records, origins=origins)
            else:
                report = knowledge_ingest(records, origins=origins, progress=self._progress(options["verbosity"]))
        except ApplicationError as error:
            raise CommandError(f"{error.message} {error.details or ''}".strip()) from error
        self.stdout.write(self.style.SUCCESS(f"Knowledge ingested: {report.summary()}."))

    def _progress(self, verbosity: int):  # noqa: ANN202
        def report(source_id: str, done: int, total: int) -> None:
            if verbosity >= 2 or (done == total and verbosity >= 1):
                self.stdout.write(f"  {source_id}: {done}/{total} chunks embedded")

        return report
