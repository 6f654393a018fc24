"""The context package sent to a model and the one response contract every
model must honour, with a strict validator.

Response contract (JSON object, nothing else):

```json
{
  "type": "reply" | "clarifying_question" | "form_answer",
  "reply": "text shown to the person",
  "option_id": "an eligible option_id from Available Options" | null,
  "asks_question": true | false,
  "answer": "form_answer only: the final answer to the current form question",
  "question_id": "form_answer only: the id of the current form question",
  "confidence": 0.0-1.0,
  "citations": ["knowledge reference ids the reply relies on"]
}
```

`type`, `reply`, `option_id`, `asks_question`, `confidence` and `citations` are always
required; `answer` and `question_id` only (and always) for `form_answer`. The validator
also enforces ask-then-act (no option at all in a reply that asks a question), that a
chosen option is eligible in the offered list, and that it is not one only the person may
choose: an option that ends, submits or completes anything (`closing_option_ids`, read from
the plan, never from option names).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._serde import Serializable
from ._text import asks_question, localize
from .config import ConversationConfig
from .forms import add_clarifying_question, finalize_answer
from .state import ContextState

if TYPE_CHECKING:
    from workflows.engine.plan import Edge, Node, Plan

RESPONSE_TYPES = ("reply", "clarifying_question", "form_answer")
REQUIRED_FIELDS = ("type", "reply", "option_id", "asks_question", "confidence", "citations")
FORM_FIELDS = ("answer", "question_id")
ALL_FIELDS = REQUIRED_FIELDS + FORM_FIELDS
MAX_REPLY_CHARS = 4000

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": list(REQUIRED_FIELDS),
    "properties": {
        "type": {"enum": list(RESPONSE_TYPES)},
        "reply": {"type": "string", "minLength": 1, "maxLength": MAX_REPLY_CHARS},
        "option_id": {"type": ["string", "null"]},
        "asks_question": {"type": "boolean"},
        "answer": {"type": "string", "minLength": 1},
        "question_id": {"type": "string"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "citations": {"type": "array", "items": {"type": "string"}},
    },
}


def format_block(form: bool) -> str:
    """The 'Required Response Format' text (form fields only for form plans)."""
    types = " | ".join(f'"{t}"' for t in (RESPONSE_TYPES if form else RESPONSE_TYPES[:2]))
    lines = [
        "Respond with one JSON object and nothing else:",
        "{",
        f'  "type": {types},',
        '  "reply": "what the person will read",',
        '  "option_id": "<an eligible option_id from Available Options>" | null,',
        '  "asks_question": true | false,',
    ]
    if form:
        lines += [
            '  "answer": "<form_answer only: the final answer>",',
            '  "question_id": "<form_answer only: the current form question id>",',
        ]
    lines += [
        '  "confidence": 0.0-1.0,',
        '  "citations": ["<knowledge reference ids you used>"]',
        "}",
    ]
    return "\n".join(lines)


PERSON_ONLY = "[only the person may choose this]"  # how the package marks an option that ends, submits or completes
_RULES = (
    "Choose option_id only from the eligible options listed; never invent one. Use null to keep talking.",
    f"Never choose an option marked {PERSON_ONLY}: only the person ends, submits or completes anything.",
    "Ask, then act: when your reply asks a question, set asks_question to true and leave option_id null (no option at all).",
    "Do not ask again about anything listed as completed or finalized.",
    "Cite only the knowledge reference ids listed; do not claim to see files or images that are not listed.",
)


@dataclass(frozen=True)
class KnowledgeRef(Serializable):
    """A knowledge snippet the model may cite."""

    ref_id: str
    title: str
    text: str
    citation: str | None = None

    @classmethod
    def coerce(cls, item: Any) -> KnowledgeRef:
        """Accept a KnowledgeRef, a mapping (ref_id/source_id/id, title, text/snippet) or an object with to_dict()."""
        if isinstance(item, KnowledgeRef):
            return item
        data = item.to_dict() if hasattr(item, "to_dict") else dict(item)
        ref_id = (
            data.get("ref_id") or data.get("source_id") or data.get("chunk_id") or data.get("id")
        )
        return cls(
            ref_id=str(ref_id),
            title=str(data.get("title") or ""),
            text=str(data.get("text") or data.get("snippet") or data.get("content") or ""),
            citation=data.get("citation"),
        )


def _option_dict(option: Any) -> dict[str, Any]:
    return option.to_dict() if hasattr(option, "to_dict") else dict(option)


def _quote(text: str) -> str:
    # JSON-quoting keeps the person's words from being read as package structure.
    return json.dumps(text, ensure_ascii=False)


def _state_section(state: ContextState) -> list[str]:
    lines = ["## Conversation State", f"- mode: {state.mode} / submode: {state.submode}"]
    if state.current_step_id:
        lines.append(f"- current step: {state.current_step_id}")
    if state.completed_steps:
        lines.append(f"- completed steps (never ask again): {', '.join(state.completed_steps)}")
    usable = state.usable_slots()
    if usable:
        lines.append("- known values: " + ", ".join(f"{k}={v}" for k, v in usable.items()))
    for fact in state.current_facts():
        lines.append(f"- fact {fact.id} ({fact.type}): {fact.value}")
    for hyp in state.hypotheses:
        lines.append(f"- hypothesis {hyp.id}: {hyp.status} ({hyp.confidence}) - {hyp.description}")
    if state.estimate.status != "none":
        lines.append(f"- estimate: {state.estimate.status}, {state.estimate.total_hours} h")
    return lines + [""]


def _threads_section(state: ContextState) -> list[str]:
    lines: list[str] = []
    if state.active_thread and state.active_thread.entries:
        lines.append("## Active Clarifying Discussion")
        for qa in state.active_thread.entries:
            lines.append(f"- Q: {qa.question}")
            if qa.answer is not None:
                lines.append(f"- A: {_quote(qa.answer)}")
        lines.append("")
    return lines


def _archived_section(state: ContextState) -> list[str]:
    if not state.archived_threads:
        return []
    questions = {a.question_id: a.question for a in state.finalized_answers}
    lines = ["## Archived Clarifying Sessions"]
    for thread in state.archived_threads:
        lines.append(
            f"### {thread.question_id} - {questions.get(thread.question_id, '')} Discussion"
        )
        for qa in thread.entries:
            lines.append(f"- Q: {qa.question}")
            lines.append(f"- A: {_quote(qa.answer or '')}")
    return lines + [""]


def _options_section(options: Iterable[Any], person_only: frozenset[str] = frozenset()) -> list[str]:
    lines = ["## Available Options"]
    listed = False
    for option in options:
        data = _option_dict(option)
        listed = True
        status = data.get("eligibility", "eligible")
        blockers = data.get("blockers") or []
        extra = f" (blocked: {'; '.join(blockers)})" if status != "eligible" else ""
        consent = " [requires consent]" if data.get("requires_consent") else ""
        own = f" {PERSON_ONLY}" if data.get("option_id") in person_only else ""
        lines.append(
            f"- `{data.get('option_id')}` {status}{extra}{consent}{own}: {data.get('label', '')} - {data.get('effects_summary', '')}"
        )
    if not listed:
        lines.append("- (none: keep the conversation going with option_id null)")
    return lines + [""]


def _knowledge_section(knowledge: Iterable[KnowledgeRef]) -> list[str]:
    refs = list(knowledge)
    lines = ["## Knowledge References"]
    if not refs:
        lines.append("- (none)")
    for ref in refs:
        cite = f" ({ref.citation})" if ref.citation else ""
        lines.append(f"### [{ref.ref_id}] {ref.title}{cite}")
        lines.append(ref.text.strip())
    return lines + [""]


def build_context_package(
    state: ContextState,
    *,
    config: ConversationConfig,
    title: str,
    current_question: str | None = None,
    options: Iterable[Any] = (),
    knowledge: Iterable[Any] = (),
    locale: str | None = None,
    closing_option_ids: Iterable[str] = (),
) -> str:
    """The markdown context package for one model call (its sections, then the options; those only the
    person may choose, `closing_option_ids`, are marked so)."""
    locale = locale or state.locale
    lines = [f"# {title} - Context Package", ""]
    lines += _state_section(state)
    if config.form is not None:
        lines.append("## Project History (Completed Form Questions)")
        if not state.finalized_answers:
            lines.append("- (none yet)")
        for i, answer in enumerate(state.finalized_answers, 1):
            lines.append(f"{i}. **{answer.question_id} - {answer.question}**: {answer.answer}")
        lines.append("")
    question = current_question
    if question is None and config.form is not None and state.current_step_id:
        spec = config.form.question(state.current_step_id)
        question = localize(spec.question, locale) if spec else None
    lines += [
        "## Current Question",
        f"**{state.current_step_id or '-'}**: {question or '(none)'}",
        "",
    ]
    lines += _threads_section(state)
    if state.latest_user_text is not None:
        lines += ["## Latest User Response", _quote(state.latest_user_text), ""]
    lines += _archived_section(state)
    lines += _knowledge_section(KnowledgeRef.coerce(k) for k in knowledge)
    if config.form is not None:
        lines.append("## Form Structure")
        for spec in config.form.questions:
            lines.append(f"- {spec.id}: {localize(spec.question, locale)} ({spec.answer_type})")
        lines.append("")
    lines += _options_section(options, frozenset(closing_option_ids))
    lines += ["## Rules"] + [f"- {rule}" for rule in _RULES] + [""]
    lines += ["## Required Response Format", format_block(config.form is not None)]
    return "\n".join(lines)


# -- what only the person may choose ---------------------------------------------------------
def closing_option_ids(plan: Plan, step_id: str, options: Iterable[Any]) -> tuple[str, ...]:
    """The offered options that end, submit or complete anything: taking one, with the steps the engine then
    takes by itself, reaches an end step or an action step, runs an effect or changes the workflow. Read from
    the plan's graph (plans are data: their option ids differ), so a model is kept from them on any plan."""
    edges = {edge.option_id: edge for edge in plan.edges_from(step_id)}
    offered = (_option_dict(o)["option_id"] for o in options)
    return tuple(oid for oid in offered if oid in edges and _closes(plan, edges[oid]))


def _closes(plan: Plan, edge: Edge) -> bool:
    todo, seen = [edge], set()
    while todo:
        taken = todo.pop()
        if taken.effect or taken.change_workflow:
            return True  # a registered effect acts outside the conversation; another workflow ends this one
        if taken.target is None or taken.target in seen:
            continue
        seen.add(taken.target)
        node = plan.node(taken.target)
        if node.type in ("end", "action"):
            return True
        todo += _unattended(plan, node)
    return False


def _unattended(plan: Plan, node: Node) -> list[Edge]:
    """The edges the engine takes from a step with no one choosing: its automatic ones, and at a gate the
    outcome it decides by itself. None from a conversation step: there the person is back in the conversation."""
    if node.type == "conversation_step":
        return []
    decided = node.gate.auto_outcome if node.gate is not None else None
    return [e for e in plan.edges_from(node.id) if e.kind == "auto" or (decided is not None and e.outcome == decided)]


# -- the response contract -----------------------------------------------------------------
@dataclass(frozen=True)
class ConciergeResponse(Serializable):
    """A model response that passed validation."""

    type: str
    reply: str
    option_id: str | None
    asks_question: bool
    confidence: float
    citations: tuple[str, ...] = ()
    answer: str | None = None
    question_id: str | None = None


@dataclass(frozen=True)
class ResponseContext(Serializable):
    """What a response is checked against."""

    eligible_option_ids: tuple[str, ...] = ()
    blocked_option_ids: tuple[str, ...] = ()
    action_option_ids: tuple[str, ...] = ()  # options that act (need ask-then-act to hold)
    non_advancing_option_ids: tuple[str, ...] = ()
    closing_option_ids: tuple[str, ...] = ()  # options that end, submit or complete: only the person chooses them
    allowed_types: tuple[str, ...] = ("reply", "clarifying_question")
    current_question_id: str | None = None
    knowledge_ids: tuple[str, ...] = ()
    max_reply_chars: int = MAX_REPLY_CHARS

    @classmethod
    def from_options(
        cls,
        options: Iterable[Any],
        *,
        form: bool = False,
        current_question_id: str | None = None,
        knowledge_ids: Iterable[str] = (),
        action_option_ids: Iterable[str] | None = None,
        closing_option_ids: Iterable[str] = (),
    ) -> ResponseContext:
        """Derive from an options list (dicts or objects with to_dict()); actions default to consent options;
        `closing_option_ids` are those only the person may choose (see `closing_option_ids()`)."""
        data = [_option_dict(o) for o in options]
        eligible = tuple(
            d["option_id"] for d in data if d.get("eligibility", "eligible") == "eligible"
        )
        blocked = tuple(
            d["option_id"] for d in data if d.get("eligibility", "eligible") != "eligible"
        )
        actions = (
            tuple(action_option_ids)
            if action_option_ids is not None
            else tuple(d["option_id"] for d in data if d.get("requires_consent"))
        )
        return cls(
            eligible_option_ids=eligible,
            blocked_option_ids=blocked,
            action_option_ids=actions,
            non_advancing_option_ids=tuple(d["option_id"] for d in data if d.get("non_advancing")),
            closing_option_ids=tuple(closing_option_ids),
            allowed_types=RESPONSE_TYPES if form else ("reply", "clarifying_question"),
            current_question_id=current_question_id,
            knowledge_ids=tuple(knowledge_ids),
        )


@dataclass(frozen=True)
class ResponseValidation(Serializable):
    """Validator verdict: ok, every violation found, and the parsed response when ok."""

    ok: bool
    violations: tuple[str, ...]
    response: ConciergeResponse | None = None


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _load(raw: str | Mapping[str, Any]) -> tuple[Any, str | None]:
    if isinstance(raw, Mapping):
        return dict(raw), None
    text = raw.strip()
    if fence := _FENCE.match(text):
        text = fence.group(1)  # one fenced block is tolerated; any other prose is not
    try:
        return json.loads(text), None
    except (json.JSONDecodeError, TypeError):
        return None, "not_json"


def _field_violations(data: Mapping[str, Any]) -> list[str]:
    violations = [f"unknown_field:{key}" for key in data if key not in ALL_FIELDS]
    violations += [f"missing_field:{key}" for key in REQUIRED_FIELDS if key not in data]
    checks = {
        "type": lambda v: isinstance(v, str),
        "reply": lambda v: isinstance(v, str),
        "option_id": lambda v: v is None or isinstance(v, str),
        "asks_question": lambda v: isinstance(v, bool),
        "confidence": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "citations": lambda v: isinstance(v, list) and all(isinstance(c, str) for c in v),
        "answer": lambda v: v is None or isinstance(v, str),
        "question_id": lambda v: v is None or isinstance(v, str),
    }
    violations += [
        f"wrong_type:{key}" for key, ok in checks.items() if key in data and not ok(data[key])
    ]
    return violations


def _semantic_violations(data: Mapping[str, Any], ctx: ResponseContext) -> list[str]:
    violations: list[str] = []
    kind, reply, option = data["type"], data["reply"], data["option_id"]
    if kind not in RESPONSE_TYPES:
        violations.append("invalid_type")
    elif kind not in ctx.allowed_types:
        violations.append(f"type_not_allowed:{kind}")
    if not reply.strip():
        violations.append("empty_reply")
    if len(reply) > ctx.max_reply_chars:
        violations.append("reply_too_long")
    asking = data["asks_question"] or asks_question(reply)
    if asks_question(reply) and not data["asks_question"]:
        violations.append("asks_question_mismatch")
    if option is not None:
        if option in ctx.blocked_option_ids:
            violations.append(f"option_blocked:{option}")
        elif option not in ctx.eligible_option_ids:
            violations.append(f"option_not_available:{option}")
        if option in ctx.closing_option_ids:
            violations.append(f"option_ends_or_submits:{option}")
        if asking:  # no option at all in a reply that asks: the person answers first
            violations.append(f"{'action' if option in ctx.action_option_ids else 'option'}_while_asking:{option}")
    if kind == "clarifying_question":
        if not data["asks_question"]:
            violations.append("clarifying_question_must_ask")
        if option is not None and option not in ctx.non_advancing_option_ids:
            violations.append(f"clarifying_question_with_advancing_option:{option}")
    if kind == "form_answer":
        if not (data.get("answer") or "").strip():
            violations.append("form_answer_missing_answer")
        if data.get("question_id") != ctx.current_question_id:
            violations.append("question_id_mismatch")
    elif data.get("answer") is not None or data.get("question_id") is not None:
        violations.append("form_fields_outside_form_answer")
    if not 0.0 <= float(data["confidence"]) <= 1.0:
        violations.append("confidence_out_of_range")
    violations += [f"unknown_citation:{c}" for c in data["citations"] if c not in ctx.knowledge_ids]
    return violations


def validate_response(raw: str | Mapping[str, Any], ctx: ResponseContext) -> ResponseValidation:
    """Parse and strictly validate a model response; every violation is reported."""
    data, error = _load(raw)
    if error:
        return ResponseValidation(False, (error,))
    if not isinstance(data, Mapping):
        return ResponseValidation(False, ("not_an_object",))
    violations = _field_violations(data)
    if violations:
        return ResponseValidation(False, tuple(violations))
    violations = _semantic_violations(data, ctx)
    if violations:
        return ResponseValidation(False, tuple(violations))
    response = ConciergeResponse(
        type=data["type"],
        reply=data["reply"].strip(),
        option_id=data["option_id"],
        asks_question=data["asks_question"],
        confidence=float(data["confidence"]),
        citations=tuple(data["citations"]),
        answer=data.get("answer"),
        question_id=data.get("question_id"),
    )
    return ResponseValidation(True, (), response)


def apply_model_response(
    state: ContextState,
    response: ConciergeResponse,
    *,
    config: ConversationConfig,
    turn: int | None = None,
    locale: str | None = None,
) -> ContextState:
    """Fold a validated response into the state: grow the clarifying thread or finalize an answer."""
    turn = state.turn_index if turn is None else turn
    locale = locale or state.locale
    if response.type == "clarifying_question":
        return add_clarifying_question(state, response.reply, turn=turn)
    if response.type == "form_answer" and config.form is not None and response.answer:
        spec = config.form.question(response.question_id)
        if spec is not None:
            return finalize_answer(
                state, spec, response.answer, turn=turn, locale=locale, form=config.form
            )
    return state


def response_types_for(config: ConversationConfig) -> Sequence[str]:
    """The response types a plan accepts (form_answer only where there is a form)."""
    return RESPONSE_TYPES if config.form is not None else ("reply", "clarifying_question")
