"""Run state: where a run stands, as a frozen value with a JSON round-trip."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

ACTIVE = "active"
WAITING_REVIEW = "waiting_review"
COMPLETED = "completed"
RUN_STATUSES = (ACTIVE, WAITING_REVIEW, COMPLETED)


@dataclass(frozen=True)
class DocumentState:
    """One document of a run: its current version and the upstream versions it was built on."""

    key: str
    version: int
    upstream_versions: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "version": self.version, "upstream_versions": dict(self.upstream_versions)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DocumentState:
        return cls(data["key"], int(data["version"]), dict(data.get("upstream_versions", {})))


@dataclass(frozen=True)
class RunState:
    current_step: str
    status: str = ACTIVE
    completed_steps: tuple[str, ...] = ()
    visits: Mapping[str, int] = field(default_factory=dict)
    qa_failures: Mapping[str, int] = field(default_factory=dict)
    signals: Mapping[str, Any] = field(default_factory=dict)
    documents: Mapping[str, DocumentState] = field(default_factory=dict)
    consents: tuple[str, ...] = ()
    path: tuple[str, ...] = ()
    # Supervisor reviews opened for this run's gates; None for runs stored before it was
    # counted (unknown: look them up). Lets readers skip the review table for most runs.
    reviews_opened: int | None = None

    @classmethod
    def start(cls, start_step: str) -> RunState:
        return cls(current_step=start_step, visits={start_step: 1}, path=(start_step,), reviews_opened=0)

    def with_signals(self, **signals: Any) -> RunState:
        """A copy whose persisted signals include these values."""
        return replace(self, signals={**self.signals, **signals})

    def to_dict(self) -> dict[str, Any]:
        return {
            "current_step": self.current_step,
            "status": self.status,
            "completed_steps": list(self.completed_steps),
            "visits": dict(self.visits),
            "qa_failures": dict(self.qa_failures),
            "signals": dict(self.signals),
            "documents": {k: d.to_dict() for k, d in self.documents.items()},
            "consents": list(self.consents),
            "path": list(self.path),
            "reviews_opened": self.reviews_opened,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunState:
        return cls(
            current_step=data["current_step"],
            status=data.get("status", ACTIVE),
            completed_steps=tuple(data.get("completed_steps", ())),
            visits=dict(data.get("visits", {})),
            qa_failures=dict(data.get("qa_failures", {})),
            signals=dict(data.get("signals", {})),
            documents={k: DocumentState.from_dict(d) for k, d in data.get("documents", {}).items()},
            consents=tuple(data.get("consents", ())),
            path=tuple(data.get("path", ())),
            reviews_opened=data.get("reviews_opened"),
        )
