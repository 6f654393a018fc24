"""Form stages of a turn (seed 003): the pending question's answer, corrections, clarifying threads."""

from __future__ import annotations

from ._text import localize
from .config import ConversationConfig, FormQuestionSpec
from .forms import (
    FormEvaluation,
    answer_clarifying_question,
    clarify_prompt,
    current_question,
    evaluate_answer,
    finalize_answer,
    find_correction,
    form_complete,
    open_thread,
    prefill_from_slots,
)
from .loop_guard import FALLBACK, QUESTION, ProposedAction, may_fallback
from .slots import ABORT, has_content
from .state import ContextState
from .turn_work import CANCEL_MEANING, FALLBACK_TEXT, HANDOFF_MEANING, SIDE_QUESTION, TurnWork


def _command_answer(t: TurnWork, spec: FormQuestionSpec) -> str | None:
    """The value an `answer` command gives this form question, in the form's own format."""
    answer = next((c for c in t.commands if c.kind == "answer" and c.question_id == spec.id), None)
    if answer is None or answer.value is None:
        return None
    if spec.answer_type == "number" and spec.unit:
        return f"{answer.value} {spec.unit}"
    return answer.value


def fill_form(state: ContextState, t: TurnWork, config: ConversationConfig) -> ContextState:
    """Answer the clarifying thread, finalize when the answer is good enough, else clarify."""
    form = config.form
    assert form is not None
    asked = form.question(state.current_step_id)  # the question put to the person before this turn
    state, prefilled = prefill_from_slots(state, form, turn=t.turn, locale=t.language)
    if prefilled:
        t.trace.append("prefilled: " + ", ".join(prefilled))
    if t.meaning == CANCEL_MEANING:  # the answers stay; the question in progress is asked again
        return _form_next(state, t, config, current_question(state, form))
    if t.meaning in (SIDE_QUESTION, HANDOFF_MEANING):
        return _form_next(state, t, config, form.question(state.current_step_id), returning=True)
    about_actions = bool(t.action_requested or t.actions_declined or {"call_day", "call_time"} & set(t.slots_changed))
    pending = asked if asked is not None and state.finalized(asked.id) is None else None
    if about_actions and (pending is None and state.finalized_answers or pending is not None and not pending.required):
        # "make it 3:30" / "set up a call instead" speaks of the action, not of an earlier answer
        return _form_next(state, t, config, current_question(state, form))
    if (corrected := find_correction(state, form, t.text, t.language)) is not None:
        target, value = corrected
        before = state.finalized(target.id).answer
        state = finalize_answer(state, target, value, turn=t.turn, locale=t.language, form=form)
        t.form_changed_question = target.id
        t.form_changed_from = before
        t.form_changed_to = value
        t.trace.append(f"form answer {target.id} corrected: {before} -> {value}")
        return _form_next(state, t, config, current_question(state, form))
    spec = asked if asked is not None and state.finalized(asked.id) is None else None
    if asked is None and form.kind == "interview" and has_content(t.text):
        # an interview's opening message answers its first question
        spec = current_question(state, form)
    if spec is None:
        return _form_next(state, t, config, current_question(state, form))
    state = open_thread(state, spec.id)
    state = answer_clarifying_question(state, t.text, turn=t.turn)
    given = _command_answer(t, spec)
    verdict = FormEvaluation(True, given) if given else evaluate_answer(t.text, spec, t.language, state.active_thread)
    if verdict.accepted:
        state = finalize_answer(
            state, spec, verdict.value or t.text, turn=t.turn, locale=t.language, form=form
        )
        t.form_answer_finalized = state.finalized(spec.id)
        return _form_next(state, t, config, current_question(state, form))
    asked = len(state.active_thread.entries) if state.active_thread else 0
    prompt = clarify_prompt(spec, asked, t.language) if asked < form.max_clarify else None
    if prompt is not None:
        t.ask(prompt, "form_clarify")
        t.reply_action = "form_clarify"
        t.action = ProposedAction("clarification", step_id=spec.id, topic=spec.id)
        t.form_question_id = spec.id
        t.clarify_form_question_id = spec.id
        return state
    if has_content(t.text):  # out of clarifying questions: take the answer, flag it for review
        state = finalize_answer(
            state,
            spec,
            t.text.strip(),
            turn=t.turn,
            locale=t.language,
            form=form,
            needs_review=True,
        )
        t.form_answer_finalized = state.finalized(spec.id)
        return _form_next(state, t, config, current_question(state, form))
    return _form_reask(state, t, config, spec)


def _form_reask(
    state: ContextState, t: TurnWork, config: ConversationConfig, spec: FormQuestionSpec
) -> ContextState:
    """Nothing usable and nothing left to clarify: fall back once, then re-ask, never loop."""
    guard = config.loop_guard
    if may_fallback(state, guard):
        t.ask(FALLBACK_TEXT.get(t.language, FALLBACK_TEXT["en"]), "fallback")
        t.reply_action, t.action = "fallback", ProposedAction(FALLBACK, step_id=spec.id)
        return state.evolve(current_step_id=spec.id)
    if state.step_repeat_counts.get(spec.id, 0) >= guard.max_step_repeats:
        t.decision, t.reply_action = ABORT, "abort"
        t.loop_violations = (f"step_repeat_limit:{spec.id}",)
        return state
    return _form_next(state, t, config, spec)


def _form_next(
    state: ContextState,
    t: TurnWork,
    config: ConversationConfig,
    spec: FormQuestionSpec | None,
    returning: bool = False,
) -> ContextState:
    """Point at the next form question (or say the form is complete)."""
    form = config.form
    assert form is not None
    done = form_complete(state, form)
    t.form_complete = done
    if spec is None:
        if not returning:
            t.reply_action = "form_complete" if done else t.reply_action
        return state.evolve(current_step_id=None)
    t.form_question_id = spec.id
    t.next_step_id = spec.id
    t.next_step_question = localize(spec.question, t.language)
    if not returning:
        t.reply_action = "form_next"
        t.action = ProposedAction(QUESTION, step_id=spec.id, topic=spec.id)
    return state.evolve(current_step_id=spec.id)
