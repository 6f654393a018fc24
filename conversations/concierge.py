"""The concierge: one interface, two backends, and the contract checks between them.

`rules` (the default) is the deterministic reply the context engine composed. `openai`
(when OPENAI_API_KEY is set) sends the context package to any OpenAI-compatible
endpoint and asks for one JSON object. Whatever the model says is checked before it
counts: an option not offered, a blocked or consent-requiring option, one that ends,
submits or completes anything (only the person chooses those), any option in a reply that
asks a question, malformed JSON, a completed step asked again, or an amount (in any
notation) no tool, citation or rules draft backs. Any violation is audited and the turn
falls back to the rules reply. The model never ends or submits anything by itself.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from workflows.audit import audit_row

from .engine import ResponseContext, build_context_package, validate_response
from .engine.catalog import say, say_in
from .engine.context_package import closing_option_ids
from .engine.recognizers import Span
from .engine.recognizers.numbers import read_amounts, read_quantities
from .engine.replies import ComposedReply
from .llm import ModelUnavailable, model_from_settings

SYSTEM_PROMPT = """You are the concierge of a governed workflow. Answer the person in their language
(Chinese if they write Chinese). Use only facts from the context package: never state a fee,
amount or rule that is not in the tool results or knowledge references given to you, in any
notation (digits, words, 元 or ¥). You may choose at most one option_id, and only from the
AVAILABLE OPTIONS marked eligible; never invent options, never choose an option that requires
consent, and never one that ends, submits or completes anything: only the person does that. When
your reply asks a question, option_id is null. Never ask again a step listed as completed. Reply
with one JSON object exactly in the required response format."""

_CENT = Decimal("0.01")


@dataclass
class Decision:
    reply: ComposedReply
    option_id: str | None = None
    backend: str = "rules"
    violations: list[str] = field(default_factory=list)
    audit: list = field(default_factory=list)  # unsaved audit rows of what the model did


def _completed_questions(state, config) -> list[str]:  # noqa: ANN001
    """The question texts of steps the conversation already completed (procedure or form)."""
    texts = []
    done = set(state.completed_steps) | {a.question_id for a in state.finalized_answers}
    procedure = config.procedure(state.primary_system) if config.diagnostic is not None else None
    for step in procedure.steps if procedure else ():
        if step.id in done:
            texts += [q for q in step.question.values() if q]
    for question in config.form.questions if config.form is not None else ():
        if question.id in done:
            texts += [q for q in question.question.values() if q]
    return texts


def _same_question(reply: str, question: str) -> bool:
    norm = re.sub(r"\W+", " ", reply.lower())
    asked = re.sub(r"\W+", " ", question.lower()).strip()
    return bool(asked) and (asked in norm or difflib.SequenceMatcher(None, asked, norm).find_longest_match().size >= 0.8 * len(asked))


def unbacked_amounts(reply: str, *, backing: Iterable[Any], language: str = "en") -> tuple[Decimal, ...]:
    """The amounts of money a reply states (in any notation the number recognizer reads) that no backing figure
    equals, in order. Backing items are texts or JSON-like values (a tool result); every number in them counts,
    read as a number too, so "46.00" backs "46 yuan" and "四十六元", and "1,250.00" backs "1250"."""
    backed = {figure for item in backing for figure in _figures(item, language)}
    said = (figure for span in read_amounts(reply, language) for figure in _span_figures(span))
    return tuple(dict.fromkeys(figure for figure in said if figure not in backed))


def _figures(item: Any, language: str) -> Iterator[Decimal]:  # noqa: ANN401 - any JSON value
    if isinstance(item, Mapping):
        item = list(item.values())
    if isinstance(item, list | tuple):
        for value in item:
            yield from _figures(value, language)
    elif isinstance(item, str):
        for span in read_quantities(item, language):
            yield from _span_figures(span)
    elif isinstance(item, int | float | Decimal) and not isinstance(item, bool) and (figure := _money(item)) is not None:
        yield figure


def _span_figures(span: Span) -> Iterator[Decimal]:
    quantity = span.value
    for value in (quantity.value, *(quantity.either or ()), *(quantity.range or ()), *(quantity.dual or ())):
        if value is not None and (figure := _money(value)) is not None:
            yield figure


def _money(value: float | int | Decimal) -> Decimal | None:
    """A figure as money, two places rounded half up; None for what is no finite number."""
    try:
        return Decimal(str(value)).quantize(_CENT, rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return None


def _extra_violations(data: dict[str, Any], *, view, state, config, draft: ComposedReply, outcome=None,  # noqa: ANN001
                      language: str = "en") -> list[str]:
    """Contract checks beyond the response schema: consent, completed steps, unbacked amounts, and a
    form answer the engine did not take (answers are understood as `answer` commands, validated and
    applied before the reply; the reply may only word one that was)."""
    problems = []
    if data.get("type") == "form_answer":
        taken = getattr(outcome, "form_answer_finalized", None)
        if taken is None or taken.question_id != data.get("question_id"):
            problems.append(f"form_answer_not_taken:{str(data.get('question_id'))[:40]}")
    reply = str(data.get("reply") or "")
    option_id = data.get("option_id")
    option = next((o for o in view.options if o["option_id"] == option_id), None)
    if option is not None and option.get("requires_consent"):
        problems.append(f"option_requires_consent:{option_id}")
    # the figures a reply may state: the rules' draft, the tool's result and the cited snippets, read as numbers
    backing = [draft.text, view.tool_result or {}, *(c.get("snippet", "") for c in view.citations)]
    problems += [f"unbacked_amount:{amount}" for amount in unbacked_amounts(reply, backing=backing, language=language)]
    if any(_same_question(reply, q) for q in _completed_questions(state, config)):
        problems.append("asks_completed_step")
    return problems


def concierge_reply(*, conversation, run, plan, config, state, outcome, view, draft: ComposedReply, lang: str, user_text: str,  # noqa: ANN001
                    model=None, on_text: Callable[[str], None] | None = None) -> Decision:  # noqa: ANN001
    """The reply that counts for this turn: the model's when it keeps every contract, else the rules'.

    Called with no transaction open (the model may take seconds): the audit rows of what the
    model did ride on the decision, and the caller writes them when it applies it. `on_text`
    is told the reply as the model writes it, before any check (for the page to show).
    """
    model = model or model_from_settings()
    if model is None:
        return Decision(draft)
    person_only = closing_option_ids(plan, view.step_id, view.options)  # what ends, submits or completes
    package = build_context_package(
        state, config=config, title=str(plan.workflow_id), current_question=outcome.question or outcome.next_step_question,
        options=view.options, knowledge=[{"ref_id": c["source_id"], "title": c.get("title", ""), "text": c["snippet"]} for c in view.citations],
        locale=lang, closing_option_ids=person_only,
    )
    facts = "\n".join(f"- {f}" for f in draft.facts) or "- (none)"
    user = f"{package}\n\n## Tool results (business facts)\n{facts}\n\n## Draft answer from the rules backend\n{draft.text}"
    try:
        raw = model.complete_json(SYSTEM_PROMPT, user, on_text=on_text)
    except ModelUnavailable as error:
        # Garbage is a broken contract; a timeout or an error is an outage. Both fall back.
        broken = error.broken_contract
        row = audit_row("contract_violation" if broken else error.fallback_event, run=run, conversation=conversation,
                        actor_label=f"concierge:{model.name}", outcome="fallback_to_rules",
                        payload={"kind": error.kind, "detail": error.detail[:500], "violations": [f"{error.kind}: {error.detail[:200]}"]})
        return Decision(draft, backend="rules", violations=[f"{error.kind}"], audit=[row])
    ctx = ResponseContext.from_options(
        view.options, form=config.form is not None, current_question_id=outcome.form_question_id,
        knowledge_ids=[c["source_id"] for c in view.citations],
        action_option_ids=[o["option_id"] for o in view.options if o.get("requires_consent") or o["option_id"] in view.new_actions],
        closing_option_ids=person_only,
    )
    checked = validate_response(raw, ctx)
    violations = list(checked.violations)
    if checked.ok or not violations:
        violations += _extra_violations(raw, view=view, state=state, config=config, draft=draft, outcome=outcome, language=lang)
    if violations:
        row = audit_row("contract_violation", run=run, conversation=conversation, actor_label=f"concierge:{model.name}",
                        chosen_option_id=str(raw.get("option_id") or "")[:64], outcome="fallback_to_rules",
                        payload={"violations": violations, "model_answer": raw})
        return Decision(draft, backend="rules", violations=violations, audit=[row])
    reply_text = str(raw["reply"]).strip()
    if draft.sources:
        reply_text += "\n\n" + say(lang, "Sources: {sources}", sources=say_in(lang, "list", ", ").join(draft.sources))
    reply = ComposedReply(
        text=reply_text, asks_question=bool(raw.get("asks_question")), kind=raw.get("type", "reply"),
        facts=draft.facts, evidence=draft.evidence, conclusion=draft.conclusion, sources=draft.sources,
        citations=draft.citations,
    )
    option_id = raw.get("option_id")
    chosen = next((o for o in view.options if o["option_id"] == option_id), None)
    if chosen is None or chosen.get("non_advancing"):
        option_id = None
    return Decision(reply, option_id=option_id, backend=model.name)
