"""Form stages of a turn (seed 003): the pending question's answer, corrections, clarifying threads."""

from __future__ import annotations

from ._text import chitchat_kind, localize
from .config import ConversationConfig, FormQuestionSpec
from .forms import (
    FormEvaluation,
    answer_clarifying_question,
    answers_listing,
    choices_named,
    clarify_prompt,
    current_question,
    edit_target,
    evaluate_answer,
    finalize_answer,
    find_correction,
    form_complete,
    mentions_unit,
    names_question,
    open_thread,
    prefill_from_slots,
    value_in_own_unit,
    wants_edit,
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
        state = state.evolve(form_editing=None)  # a change dropped leaves the answer as it was
        return _form_next(state, t, config, current_question(state, form))
    if t.meaning in (SIDE_QUESTION, HANDOFF_MEANING):
        if state.form_editing is not None:  # then back to the change in progress
            t.next_step_question = _edit_question(state, form, t.language)
            t.form_question_id = state.form_editing if state.form_editing != "?" else None
            return state
        return _form_next(state, t, config, form.question(state.current_step_id), returning=True)
    if chitchat_kind(t.text) and not t.commands:  # "hello", "thanks!": answered in kind, the question asked again
        if state.form_editing is not None:
            t.next_step_question = _edit_question(state, form, t.language)
            return state
        return _form_next(state, t, config, form.question(state.current_step_id) or current_question(state, form))
    if (edited := _edit_answer(state, t, config)) is not None:
        return edited
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
    done = form_complete(state, form) and state.form_editing is None  # not while an answer is being changed
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


# --- changing a final answer (the review's "Change an answer") ---------------------------------

EDIT_TEXT = {
    "which": ("Which answer would you like to change?", "您想修改哪一项答案？"),
    "listing": ("Your answers so far:", "目前的答案："),
    "current": ("The answer to “{question}” is now {answer}. What should it be?", "“{question}”目前的答案是 {answer}。应改为什么？"),
    "kept": ("I've kept {answer} for now.", "暂时保留 {answer}。"),
    "same": ("“{question}” already says {answer}; nothing changed.", "“{question}”的答案已经是 {answer}，没有改动。"),
}


def _say(key: str, lang: str, **values: str) -> str:
    en, zh = EDIT_TEXT[key]
    return (zh if lang == "zh" else en).format(**values)


def edit_prompt(state: ContextState, form, lang: str) -> str:  # noqa: ANN001
    """"Which answer would you like to change?" with the answers listed in plain words."""
    return f"{_say('which', lang)}\n{answers_listing(state, form, lang)}"


def _edit_question(state: ContextState, form, lang: str) -> str:  # noqa: ANN001
    """What the change in progress asks: which answer, or the chosen one's new value."""
    spec = form.question(state.form_editing) if state.form_editing not in (None, "?") else None
    if spec is None:
        return edit_prompt(state, form, lang)
    question = localize(spec.question, lang).rstrip("?？")
    return _say("current", lang, question=question, answer=state.finalized(spec.id).answer)


def _edit_answer(state: ContextState, t: TurnWork, config: ConversationConfig) -> ContextState | None:
    """A change of a final answer once every question is answered (or one in progress), else None.

    The person names the answer (by its words, its unit, or its place in the listing) or is
    asked which one, listed; the new value goes through the question's own checks (units,
    choices, negation; "not sure" keeps the answer as it was), and the reply says what changed
    and returns to the review. Nothing changes until a value is accepted.
    """
    form = config.form
    assert form is not None
    editing = state.form_editing
    lang = "zh" if t.language.startswith("zh") else "en"
    at_review = editing is None and current_question(state, form) is None and bool(state.finalized_answers)
    given = value_in_own_unit(state, form, t.text, t.language) if at_review else None
    if given is not None and given[1] != state.finalized(given[0].id).answer:  # "1600 sq ft" at the review: a change
        return _apply_edit(state, t, config, *given)
    if editing is None and not (at_review and wants_edit(t.text)):
        return None
    corrected = find_correction(state, form, t.text, t.language, prefer=editing or "?")
    if corrected is not None:  # what and to what, in one message ("change the storeys to 3")
        return _apply_edit(state, t, config, *corrected)
    target = form.question(editing) if editing not in (None, "?") else None
    if target is not None and evaluate_answer(t.text, target, t.language).accepted:
        named = target  # an answer to the question being changed ("3 floors" names no floor area)
    else:
        named = edit_target(state, form, t.text, listed=editing == "?")
        if target is not None and named is not None and not (wants_edit(t.text) or names_question(t.text, named)):
            named = None  # "1,600 sq ft" for the storeys: a wrong unit, not a change of the floor area
    if named is not None and (target is None or named.id != target.id):
        value = _value_with_name(t.text, named, t.language)
        if value is not None and value != state.finalized(named.id).answer:
            return _apply_edit(state, t, config, named, value)
        return _ask_edit(state.evolve(form_editing=named.id), t, form, named, _edit_question(state.evolve(form_editing=named.id), form, lang))
    if target is None:  # nothing named: which one?
        state = state.evolve(form_editing="?")
        t.ask(edit_prompt(state, form, lang), "form_edit")
        t.reply_action = "form_edit"
        t.action = ProposedAction("clarification", topic="form_edit")
        t.form_complete = False
        return state.evolve(current_step_id=None)
    state = open_thread(state, target.id)
    state = answer_clarifying_question(state, t.text, turn=t.turn)
    verdict = evaluate_answer(t.text, target, t.language, state.active_thread)
    current = state.finalized(target.id).answer
    if verdict.accepted and verdict.value and verdict.value != current:
        return _apply_edit(state, t, config, target, verdict.value)
    if verdict.accepted:  # the same answer again: nothing to change, back to the review
        question = localize(target.question, lang).rstrip("?？")
        t.form_note = _say("same", lang, question=question, answer=current)
        state = state.evolve(form_editing=None)
        return _form_next(state, t, config, None)
    asked = len(state.active_thread.entries) if state.active_thread else 0
    prompt = clarify_prompt(target, asked - 1, t.language) or localize(target.question, t.language)
    return _ask_edit(state, t, form, target, f"{_say('kept', lang, answer=current)} {prompt}")


def _ask_edit(state: ContextState, t: TurnWork, form, spec: FormQuestionSpec, prompt: str) -> ContextState:  # noqa: ANN001
    """Ask for the chosen answer's new value (the answer stays as it is until one is accepted)."""
    state = open_thread(state, spec.id).evolve(form_editing=spec.id)
    t.ask(prompt, "form_edit")
    t.reply_action = "form_edit"
    t.action = ProposedAction("clarification", step_id=spec.id, topic=spec.id)
    t.form_question_id = spec.id
    t.form_complete = False
    return state


def _value_with_name(text: str, spec: FormQuestionSpec, language: str) -> str | None:
    """A new value given with the answer's name, in a message without a correction word:
    a number in the question's unit ("storeys: 3 floors") or exactly one choice named."""
    if spec.answer_type == "number" and mentions_unit(text, spec.unit or ""):
        verdict = evaluate_answer(text, spec, language)
        return verdict.value if verdict.accepted else None
    if spec.answer_type == "choice" and len(named := choices_named(text, spec, language)) == 1:
        return named[0]
    return None


def _apply_edit(state: ContextState, t: TurnWork, config: ConversationConfig, spec: FormQuestionSpec, value: str) -> ContextState:
    """The changed answer replaces the old one in place; then back to the review."""
    form = config.form
    assert form is not None
    before = state.finalized(spec.id).answer
    state = finalize_answer(state, spec, value, turn=t.turn, locale=t.language, form=form).evolve(form_editing=None)
    t.form_changed_question, t.form_changed_from, t.form_changed_to = spec.id, before, value
    t.trace.append(f"form answer {spec.id} changed: {before} -> {value}")
    return _form_next(state, t, config, current_question(state, form))
