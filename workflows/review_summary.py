"""What a supervisor reads on a review: its subject in words and its signals beside the gate's thresholds.

Plain Python (no Django): the admin renders what these functions return. The thresholds are the
engine's own constants (workflows/engine/gates.py), so the page cannot drift from the policy
that computed the gate's kind.

Workflows knows no subject of its own: an app that opens reviews about its records registers a
reader for them (billing registers the fee mismatch at start-up, as it registers its step
handlers); any other subject reads as a table of labels and values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workflows.engine.gates import CONFIDENCE_THRESHOLD, GATE_SIGNALS, UNRECOGNISED_INTENTS

# Keys whose plain-words label is not just the key with spaces.
LABELS = {
    "run_id": "Run", "conversation_id": "Conversation",
    "qa_pass": "QA check", "missing_critical": "Critical information",
    "intent_class": "Intent class", "policy_risk": "Policy risk", "semantic_uncertainty": "Semantic uncertainty",
}
# Shown as links beside the summary, not as numbers in it.
LINKED_KEYS = frozenset({"run_id", "conversation_id"})
_QA_WORDING = re.compile(r"\bQA\b")


def label_for(key: str) -> str:
    """A key as a person reads it: 'intent_class' → 'Intent class', 'goal_date' → 'Goal date'."""
    return LABELS.get(key) or key.replace("_", " ").strip().capitalize()


def readable(value: Any) -> str:
    """Any stored value in words: no braces, brackets, quotes or snake_case keys."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return ", ".join(readable(item) for item in value)
    if isinstance(value, Mapping):
        return "; ".join(f"{label_for(str(k))}: {readable(v)}" for k, v in value.items() if v not in (None, ""))
    return str(value)


def readable_rows(mapping: Mapping[str, Any], *, skip: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(label, value) for each key of a mapping, for a plain two-column table."""
    skipped = set(skip)
    return [(label_for(key), readable(value)) for key, value in mapping.items() if key not in skipped]


# --- subjects an app knows: read by the reader it registered ------------------------------


@dataclass(frozen=True)
class CheckWording:
    """How the signals table words a step's own check (its qa_pass) when no QA node of the plan ran."""

    name: str
    held_against: str
    passed: str = "passed"
    failed: str = "did not pass"


STEP_CHECK = CheckWording("Step's check", "must pass")

SummaryHtml = Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True)
class SubjectReader:
    """How a supervisor reads one kind of subject: its summary, its own signals and the check its step ran."""

    kind: str
    recognizes: Callable[[Mapping[str, Any]], bool]
    summary_html: SummaryHtml | None = None  # the subject in words, in place of the table of its fields
    check: CheckWording = STEP_CHECK
    labels: Mapping[str, str] = field(default_factory=dict)  # its own signals' keys in words
    expected: Mapping[str, Any] = field(default_factory=dict)  # its own signal → the value the gate wants

    def label_for(self, key: str) -> str:
        return self.labels.get(key) or label_for(key)


GENERIC_READER = SubjectReader("generic", recognizes=lambda subject: True)
_READERS: dict[str, SubjectReader] = {}


def subject_reader(
    kind: str, *, recognizes: Callable[[Mapping[str, Any]], bool], check: CheckWording = STEP_CHECK,
    labels: Mapping[str, str] | None = None, expected: Mapping[str, Any] | None = None,
) -> Callable[[SummaryHtml], SummaryHtml]:
    """Register the function that says a kind of subject in words (billing registers the fee mismatch).

    Keyed by the subject's kind rather than the review's: the same fee mismatch reaches a supervisor
    as a billing review and as a plan's gate, and reads the same on both.
    """

    def register(fn: SummaryHtml) -> SummaryHtml:
        _READERS[kind] = SubjectReader(kind, recognizes, fn, check, dict(labels or {}), dict(expected or {}))
        return fn

    return register


def reader_for(subject: Mapping[str, Any]) -> SubjectReader:
    """The registered reader that recognizes this subject, or the generic one (a table of labels and values)."""
    return next((reader for reader in _READERS.values() if reader.recognizes(subject)), GENERIC_READER)


def step_label(plan_definition: Mapping[str, Any], step_id: str, locale: str = "en") -> str:
    """A plan node's own label (English unless asked), or its id in words when the plan has no such node."""
    node = next((n for n in plan_definition.get("nodes", ()) if n.get("id") == step_id), None)
    label = (node or {}).get("label")
    if isinstance(label, Mapping):
        label = label.get(locale) or next(iter(label.values()), None)
    return str(label) if label else step_id.replace("_", " ").capitalize()


def qa_step_ran(plan_definition: Mapping[str, Any], completed_steps: Iterable[str]) -> bool:
    """Whether the run went through one of its plan's QA nodes: only then may a page speak of QA."""
    qa_nodes = {node.get("id") for node in plan_definition.get("nodes", ()) if node.get("type") == "qa"}
    return bool(qa_nodes & set(completed_steps))


def reasons_shown(reasons: Iterable[str], *, qa_ran: bool) -> list[str]:
    """The recommendation's reasons, without QA wording when no QA step ran.

    A gate without QA (a fee check) still carries the engine's generic "QA did not pass"
    because its task reports its own check as qa_pass; that is not what happened.
    """
    return [reason for reason in reasons if qa_ran or not _QA_WORDING.search(reason)]


@dataclass(frozen=True)
class SignalRow:
    name: str
    value: str
    held_against: str
    met: bool | None  # None: no threshold applies to this signal


def _confidence_row(value: Any) -> SignalRow:
    threshold = f"≥ {CONFIDENCE_THRESHOLD:.2f}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return SignalRow("Confidence", "not reported", threshold, False)
    return SignalRow("Confidence", f"{value:.2f}", threshold, value >= CONFIDENCE_THRESHOLD)


def _intent_row(value: Any) -> SignalRow:
    unrecognised = " or ".join(sorted(i for i in UNRECOGNISED_INTENTS if i))
    recognised = isinstance(value, str) and value.lower() not in UNRECOGNISED_INTENTS
    shown = value.replace("_", " ") if isinstance(value, str) and value else "not reported"
    return SignalRow("Intent class", shown, f"a recognised class (not {unrecognised})", recognised)


def _check_row(value: Any, *, qa_ran: bool, check: CheckWording) -> SignalRow | None:
    """qa_pass in the words of the check that set it; None when nothing reported it."""
    if value is None and not qa_ran:
        return None
    if qa_ran:
        shown = {True: "passed", False: "did not pass"}.get(value, "no result")
        return SignalRow("QA check", shown, "must pass", value is True)
    return SignalRow(check.name, check.passed if value else check.failed, check.held_against, value is True)


def _missing_row(value: Any) -> SignalRow:
    shown = {False: "nothing missing", True: "something is missing"}.get(value, "not reported")
    return SignalRow("Critical information", shown, "nothing critical missing", value is False)


def _flag_row(name: str, value: Any) -> SignalRow | None:
    if value is None:
        return None
    return SignalRow(name, "present" if value else "none", "none, or a person decides", not value)


def _other_row(key: str, value: Any, reader: SubjectReader) -> SignalRow:
    if key in reader.expected:
        return SignalRow(reader.label_for(key), readable(value), readable(reader.expected[key]), value == reader.expected[key])
    return SignalRow(reader.label_for(key), readable(value), "—", None)


def signal_rows(signals: Mapping[str, Any], *, qa_ran: bool, reader: SubjectReader = GENERIC_READER) -> list[SignalRow]:
    """Each signal with its value and what the gate held it against, gate signals first.

    The reader of the review's subject words its step's check and its own signals.
    """
    if not signals:
        return []
    gate_rows: list[SignalRow | None] = []
    if any(key in signals for key in GATE_SIGNALS):
        gate_rows = [
            _confidence_row(signals.get("confidence")),
            _check_row(signals.get("qa_pass"), qa_ran=qa_ran, check=reader.check),
            _missing_row(signals.get("missing_critical")),
            _intent_row(signals.get("intent_class")),
            _flag_row("Policy risk", signals.get("policy_risk")),
            _flag_row("Semantic uncertainty" if qa_ran else "Uncertainty", signals.get("semantic_uncertainty")),
        ]
    others = [_other_row(key, value, reader) for key, value in signals.items() if key not in GATE_SIGNALS]
    return [row for row in gate_rows if row is not None] + others
