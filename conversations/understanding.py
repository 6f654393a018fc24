"""The interpret phase of a turn: the model as a command generator, checked command by command.

With a model configured, the model reads the message with the conversation's state, the
pending question and what the plan allows, and answers with commands (Structured Outputs,
a JSON Schema built from the plan and this turn: its intents, slot names, question ids,
option ids). Every command is validated (`engine.commands.validate_commands`): refused
ones are audited and dropped, accepted ones go to the engine, and the model's reading is the
reading (the rules add no cancel, handoff, form answer or action it did not give). It never chooses an
option that ends, submits or completes anything: only the person's own choice (a click, the REST API)
does that, so such options are not offered to it and a choice of one is refused. A failed call, or an
answer whose every command was refused, leaves the turn to the rules alone. No transaction is
open here: the model may take seconds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workflows.audit import audit_row
from workflows.selectors import run_decision_point

from .engine import ContextState, ConversationConfig
from .engine._serde import FrozenDict
from .engine._text import localize
from .engine.action_prefs import action_slot_types
from .engine.ask_then_act import actions_open_to_request
from .engine.commands import (
    FORM_SLOT,
    Command,
    CommandContext,
    QuestionRef,
    Refusal,
    command_schema,
    command_to_dict,
    commands_from_json,
    validate_commands,
)
from .engine.context_package import closing_option_ids
from .llm import ModelUnavailable

SYSTEM_PROMPT = """You read one message a person wrote to a governed workflow assistant and say
what it means as commands, in the JSON format required. You never answer the person here.
Use only the names the schema allows. Commands:
- start_intent(intent): the person asks for one of the workflow's intents.
- set_slot(slot, value) / correct_slot(slot, value): a detail the person gives, or a correction of
  one given earlier ("no, I meant ..."). Values in the slot's type: numbers as digits, times as
  ISO 8601 with the offset of the conversation's time zone, identifiers exactly as written.
- answer(question_id, value): the answer to the PENDING question, or a correction of one answered
  before ("no, I meant 3 storeys"); never a question not asked yet; a choice answer is one of
  the allowed values; never answer when the person is unsure, asks something or changes topic.
- side_question(side_kind, topic): where is / what is / how to / a knowledge question.
- report_evidence(text): a new observation or measurement.
- confirm / deny: yes or no to what was just asked or proposed.
- choose_option(option_id): the person explicitly picks one of the listed options (never one that ends, submits or
  completes anything: the person chooses those on the page themselves).
- decline_action(action_id): the person does not want that action ("no email, a call instead").
- request_action(action_id): the person asks for an action (drafting an email, scheduling a call);
  a call's day and time, when said, are set_slot(call_day, YYYY-MM-DD) and set_slot(call_time, HH:MM).
- cancel, human_handoff (the person asks for a human), chitchat, clarify(candidates), cannot_handle.
Every command says how sure the reading is: "certain" when the words say it plainly; "likely" when one
reading fits best but the words leave room (an hour with no am/pm, "about 950"); "guess" when two readings
fit or the person is unsure ("maybe 6 or 7", "I think it clicks"). A guess is asked, never stored.
Give no command for what the message does not say. An empty list is a valid answer."""


@dataclass
class Understanding:
    """What the interpret phase produced for one message, and at which conversation version."""

    version: int
    generator: str = "rules"
    accepted: tuple[Command, ...] = ()
    refused: tuple[Refusal, ...] = ()
    failure: ModelUnavailable | None = None
    audit: list = field(default_factory=list)

    @property
    def model_down(self) -> bool:
        """The endpoint itself failed (not just a bad answer): the reply phase skips it too."""
        return self.failure is not None and not self.failure.broken_contract

    def summary(self) -> dict[str, Any]:
        return {
            "generator": self.generator,
            "accepted": [command_to_dict(c) for c in self.accepted],
            "refused": [{**command_to_dict(r.command), "reason": r.reason} for r in self.refused],
        }


def command_context(*, run, plan, config: ConversationConfig, state: ContextState,  # noqa: ANN001
                    lookups: Mapping[str, Callable[..., Any]], lang: str) -> CommandContext:
    """What a command may name on this turn: the plan's intents, slots and questions, the options on offer."""
    return _context(run=run, plan=plan, config=config, state=state, lookups=lookups, lang=lang)[0]


def _context(*, run, plan, config: ConversationConfig, state: ContextState,  # noqa: ANN001
             lookups: Mapping[str, Callable[..., Any]], lang: str) -> tuple[CommandContext, frozenset[str]]:
    """The command context, and the eligible consent-free options only the person may choose (they end, submit
    or complete anything): those are not offered to the model."""
    dp = run_decision_point(run, locale=lang)
    eligible = [o for o in dp.options if o.eligible and not o.non_advancing]
    person_only = frozenset(closing_option_ids(plan, dp.step_id, [o for o in eligible if not o.requires_consent]))
    slot_names = list(config.slots) + [n for i in config.intents for n in (*i.required_slots, *i.optional_slots)]
    slot_types = {n: config.slot_spec(n).extractor for n in dict.fromkeys(slot_names)} | action_slot_types(config)
    # a form question's slot: a fact given before its question is asked is said as the slot (typed by the question)
    slot_types |= {q.slot: f"{FORM_SLOT}{q.id}" for q in (config.form.questions if config.form else ())
                   if q.slot and q.slot not in slot_types}
    questions = _questions(config, state)
    return CommandContext(
        intents=frozenset(i.name for i in config.intents),
        slot_types=FrozenDict(slot_types),
        questions=FrozenDict(questions),
        pending_question_id=state.current_step_id if state.current_step_id in questions else None,
        options=frozenset(o.option_id for o in eligible if not o.requires_consent and o.option_id not in person_only),
        consent_options=frozenset(o.option_id for o in eligible if o.requires_consent),
        known_actions=frozenset(a.id for a in config.actions),
        actions=actions_open_to_request(config.actions, state),
        lookups=FrozenDict(lookups),
        known_slots=FrozenDict(state.usable_slots()),
    ), person_only


SYSTEM_QUESTION = "system"  # the diagnostic plan's "which system?", answered with a procedure or system id


def _questions(config: ConversationConfig, state: ContextState) -> dict[str, QuestionRef]:
    questions: dict[str, QuestionRef] = {}
    if config.form is not None:
        for q in config.form.questions:  # a final answer may be corrected
            final = state.finalized(q.id) is not None
            questions[q.id] = QuestionRef(q.id, q.answer_type, tuple(c.value for c in q.choices), q.unit, final=final,
                                          set_aside=q.id in state.skipped_steps, other=q.other, low=q.min, high=q.max,
                                          pattern=q.answer_pattern, ignore_case=q.ignore_case)
    if config.diagnostic is not None and state.primary_system is None:
        # which system the complaint is about: the model may classify it (the rules' patterns stand otherwise)
        systems = tuple(s.id for s in (*config.diagnostic.procedures, *config.diagnostic.other_systems))
        questions[SYSTEM_QUESTION] = QuestionRef(SYSTEM_QUESTION, "choice", systems)
    procedure = config.procedure(state.primary_system) if config.diagnostic is not None else None
    for step in procedure.steps if procedure else ():
        if step.id not in state.completed_steps:
            questions[step.id] = QuestionRef(step.id, "text")
    return questions


def _prompt(text: str, ctx: CommandContext, state: ContextState, config: ConversationConfig, lang: str) -> str:
    pending = None
    if ctx.pending_question_id and config.form is not None and (spec := config.form.question(ctx.pending_question_id)):
        pending = localize(spec.question, lang)
    known = {name: slot.value for name, slot in state.slots.items()}
    return "\n".join([
        f"Conversation language: {lang}",
        f"Pending question ({ctx.pending_question_id or 'none'}): {pending or state.last_question or '(none)'}",
        f"Details known so far: {json.dumps(known, ensure_ascii=False)}",
        f"Active request: {state.active_intent or '(none)'}",
        "",
        "The person's message:",
        text,
    ])


def understand(*, conversation, run, plan, config: ConversationConfig, state: ContextState, text: str,  # noqa: ANN001
               model, lookups: Mapping[str, Callable[..., Any]], lang: str) -> Understanding:
    """Ask the model for commands and validate them (no transaction open; never raises for the model)."""
    result = Understanding(version=conversation.version, generator=model.name)
    ctx, person_only = _context(run=run, plan=plan, config=config, state=state, lookups=lookups, lang=lang)
    try:
        raw = model.complete_json(SYSTEM_PROMPT, _prompt(text, ctx, state, config, lang),
                                  schema=command_schema(ctx), schema_name="commands")
    except ModelUnavailable as error:
        result.failure = error
        result.audit.append(audit_row(
            "contract_violation" if error.broken_contract else error.fallback_event, run=run, conversation=conversation,
            actor_label=f"concierge:{model.name}", outcome="fallback_to_rules",
            payload={"phase": "understanding", "kind": error.kind, "detail": error.detail}))
        return result
    commands, malformed = commands_from_json(raw)
    commands, for_the_person = _person_only_choices(commands, person_only)
    checked = validate_commands(commands, ctx)
    result.accepted, result.refused = checked.accepted, tuple(malformed) + for_the_person + checked.refused
    if result.refused:
        result.audit.append(audit_row(
            "command_refused", run=run, conversation=conversation, actor_label=f"concierge:{model.name}",
            outcome="refused", payload={"phase": "understanding", **result.summary()}))
    return result


def _person_only_choices(commands: list[Command], person_only: frozenset[str]) -> tuple[list[Command], tuple[Refusal, ...]]:
    """The commands less each choice of an option only the person may choose (refused, with that reason: it ends,
    submits or completes anything); any other choice is validated as usual."""
    chosen = [c for c in commands if c.kind == "choose_option" and c.option_id in person_only]
    return [c for c in commands if c not in chosen], tuple(Refusal(c, f"person_only_option:{c.option_id}") for c in chosen)
