"""Knowledge packs: Markdown files with front matter shipped per workflow under knowledge/packs/."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .chunking import DEFAULT_CHUNKING, ChunkingConfig
from .embedder import Embedder
from .records import KnowledgeRecord, KnowledgeRecordError, parse_markdown_record, record_snapshots
from .search import ChunkSnapshot, KnowledgeIndex

PACKS_ROOT = Path(__file__).resolve().parent.parent / "packs"


class PackError(ValueError):
    """A pack file is invalid; the message names the file and every line/field problem."""


@dataclass(frozen=True)
class PackDocument:
    """One pack file: the pack it belongs to, its path relative to the packs root, its record."""

    pack: str
    path: str
    record: KnowledgeRecord


def pack_names(root: Path = PACKS_ROOT) -> list[str]:
    """Names of the packs (sub-directories holding Markdown files), sorted."""
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.md")))


def load_pack(name: str, root: Path = PACKS_ROOT) -> list[PackDocument]:
    """Parse every Markdown file of a pack, sorted by file name; source ids must be `<pack>.<slug>`."""
    directory = root / name
    if not directory.is_dir():
        raise PackError(f"unknown knowledge pack {name!r} (looked in {root})")
    documents: list[PackDocument] = []
    for path in sorted(directory.glob("*.md")):
        relative = path.relative_to(root).as_posix()
        try:
            record = parse_markdown_record(path.read_text(encoding="utf-8"))
        except KnowledgeRecordError as exc:
            problems = "; ".join(str(error) for error in exc.errors)
            raise PackError(f"{relative}: {problems}") from exc
        if not record.source_id.startswith(f"{name}."):
            raise PackError(f"{relative}: source_id {record.source_id!r} must start with '{name}.'")
        documents.append(PackDocument(pack=name, path=relative, record=record))
    return documents


def load_packs(names: Iterable[str] | None = None, root: Path = PACKS_ROOT) -> list[PackDocument]:
    """Documents of the named packs (all packs by default); source ids must be unique."""
    documents: list[PackDocument] = []
    seen: dict[tuple[str, int], str] = {}
    for name in names if names is not None else pack_names(root):
        for document in load_pack(name, root):
            key = (document.record.source_id, document.record.version)
            if key in seen:
                raise PackError(
                    f"{document.path}: source_id {key[0]!r} v{key[1]} also in {seen[key]}"
                )
            seen[key] = document.path
            documents.append(document)
    return documents


def pack_source_ids(name: str, root: Path = PACKS_ROOT) -> tuple[str, ...]:
    """Source ids of one pack, for scoping retrieval to a workflow with `source_ids`."""
    return tuple(document.record.source_id for document in load_pack(name, root))


def pack_snapshots(
    names: Iterable[str] | None = None,
    *,
    root: Path = PACKS_ROOT,
    config: ChunkingConfig = DEFAULT_CHUNKING,
) -> list[ChunkSnapshot]:
    """Chunk snapshots of the named packs, ready for a KnowledgeIndex."""
    snapshots: list[ChunkSnapshot] = []
    for document in load_packs(names, root):
        snapshots.extend(record_snapshots(document.record, config))
    return snapshots


def build_pack_index(
    names: Iterable[str] | None = None,
    *,
    embedder: Embedder | None = None,
    root: Path = PACKS_ROOT,
    config: ChunkingConfig = DEFAULT_CHUNKING,
) -> KnowledgeIndex:
    """An in-memory index over packs (embedded when an embedder is given), e.g. for offline runs."""
    return KnowledgeIndex.build(pack_snapshots(names, root=root, config=config), embedder)
