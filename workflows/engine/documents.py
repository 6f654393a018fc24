"""Documents and staleness: a new upstream version makes downstream stale."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from .state import DocumentState, RunState


def stale_documents(documents: Mapping[str, DocumentState]) -> dict[str, str]:
    """Each stale document with the reason, following dependencies transitively."""
    reasons: dict[str, str] = {}

    def visit(key: str, trail: frozenset[str]) -> str | None:
        if key in reasons:
            return reasons[key]
        doc = documents.get(key)
        if doc is None or key in trail:
            return None
        for upstream, used in sorted(doc.upstream_versions.items()):
            current = documents.get(upstream)
            if current is not None and current.version > used:
                reasons[key] = f"'{key}' v{doc.version} was built on '{upstream}' v{used}; '{upstream}' is now v{current.version}"
                return reasons[key]
            if visit(upstream, trail | {key}):
                reasons[key] = f"'{key}' depends on stale '{upstream}'"
                return reasons[key]
        return None

    for key in sorted(documents):
        visit(key, frozenset())
    return reasons


def document_add_version(state: RunState, key: str, depends_on: Iterable[str] = ()) -> RunState:
    """A copy of the run with a new version of `key`, built on the current upstream versions."""
    previous = state.documents.get(key)
    upstream = {u: state.documents[u].version for u in depends_on if u in state.documents}
    doc = DocumentState(key=key, version=(previous.version + 1) if previous else 1, upstream_versions=upstream)
    return replace(state, documents={**state.documents, key: doc})
