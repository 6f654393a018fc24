"""Form stages of a turn: the pending question's answer, corrections, clarifying threads."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import reduce

from ._serde import FrozenDict
from ._text import (
    acknowledges_only,
    asks_to_restart,
    chitchat_kind,
    defers_answer,
    first_match,
    is_vacuous,
    localize,
)
from .action_prefs import action_slot_types, read_actions
from .catalog import marked, say, say_in
from .certainty import CERTAIN, GUESS, text_certainty
from .commands import Command
from .config import TIMED_ANSWERS, ConversationConfig, FormQuestionSpec, FormSpec
from .forms import (
    YES_NO,
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
    find_corrections,
    find_swap,
    form_complete,
    is_correction,
    label_said,
    may_volunteer,
    mentions_unit,
    names_question,
    number_alternatives,
    number_answer,
    number_value,
    open_thread,
    prefill_from_slots,
    text_length,
    value_in_own_unit,
    volunteered_answer,
    waiting_question,
    wants_edit,
)
from .loop_guard import FALLBACK, QUESTION, ProposedAction, asked_enough, may_fallback
from .negation import (
    message_parts,
    negated,
    only_fillers,
    opens_with_correction,
    picks_between,
    reproached,
    request_from,
    rough_or_doubtful,
    said_unsure,
    says_a_correction,
    says_it_was_wrong,
    without_lead_words,
    word_swaps,
)
from .plain_words import answer_shown, choice_label, then, unit_said
from .slots import ABORT, has_content
from .state import ContextState
from .turn_work import CANCEL_MEANING, HANDOFF_MEANING, QUESTION_MEANING, SIDE_QUESTION, TurnWork
from .typos import distance
from .units import FORM_UNITS, measure_of, unit_id


def _answer_command(work: TurnWork, spec: FormQuestionSpec) -> Command | None:
    """The generator's command that answers this form question: an `answer` to it, or its slot set."""
    return next((c for c in work.commands if c.kind == "answer" and c.question_id == spec.id
                 or c.kind == "set_slot" and spec.slot and c.slot == spec.slot), None)


def _command_answer(work: TurnWork, spec: FormQuestionSpec) -> str | None:
    """The value an `answer` command gives this form question, in the form's own format."""
    answer = _answer_command(work, spec)
    if answer is None or answer.value is None:
        return None
    if spec.answer_type == "number" and spec.unit:
        return number_answer(answer.value, spec.unit)
    return answer.value


def _command_corrections(state: ContextState, work: TurnWork, form: FormSpec) -> list[tuple[FormQuestionSpec, str]]:
    """The `answer` commands to questions already answered, with another value: corrections, each its own."""
    changes = []
    for command in work.commands:
        spec = form.question(command.question_id) if command.kind == "answer" else None
        final = state.finalized(spec.id) if spec is not None else None
        value = _command_answer(work, spec) if final is not None else None
        if value is not None and value != final.answer and all(spec.id != s.id for s, _ in changes):
            changes.append((spec, value))
    return changes


def fill_form(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Answer the clarifying thread, finalize when the answer is good enough, else clarify."""
    form = config.form
    assert form is not None
    asked = form.question(state.current_step_id)  # the question put to the person before this turn
    reviewing = bool(state.finalized_answers) and current_question(state, form) is None  # before this message's answers
    state, prefilled = prefill_from_slots(state, form, turn=work.turn, locale=work.language)
    if prefilled:
        work.trace.append("prefilled: " + ", ".join(prefilled))
        if asked is not None and asked.id in prefilled and asked.answer_type == "text" and not work.model_read:
            state = _whole_answer(state, work, config, asked)
        for spec in (form.question(q) for q in prefilled):
            if spec is None or spec.answer_type != "text" or (said := state.finalized(spec.id)) is None:
                continue
            # each answer by its own words ("the budget is about $40k"); one alone by the whole message
            # ("budget 5k? no idea really", "差不多明年三月份上线")
            sure = text_certainty(said.answer if len(prefilled) > 1 else work.text)
            if sure == GUESS:  # "预算嘛，三五万？真不知道": nothing recorded; asked whether to put it down
                return _ask_to_keep(_unrecorded(state, spec), work, spec, said.answer)
            _say_back(work, spec, said.answer, sure, slot=spec.slot)  # "budget maybe 5 grand": kept, said back
    if work.meaning == CANCEL_MEANING and asks_to_restart(work.text) and (state.finalized_answers or state.active_thread):
        # "start over" / "重新开始": the person begins again, so the answers they gave are cleared
        names = {q.slot for q in form.questions if q.slot}
        state = state.evolve(finalized_answers=(), active_thread=None, archived_threads=(),
                             slots=FrozenDict({k: v for k, v in state.slots.items() if k not in names}))
        work.restarted = True
        work.trace.append("form restarted: answers cleared")
        return _form_next(state, work, config, current_question(state, form))
    if work.meaning == CANCEL_MEANING:  # the answers stay; the question in progress is asked again
        state = state.evolve(form_editing=None)  # a change dropped leaves the answer as it was
        return _form_next(state, work, config, current_question(state, form))
    if work.meaning == QUESTION_MEANING and (waiting := waiting_question(state, form)) is not None:
        return _question_said_again(state, work, waiting)
    if work.meaning in (SIDE_QUESTION, HANDOFF_MEANING):
        if state.form_editing is not None:  # then back to the change in progress
            work.next_step_question = _edit_question(state, form, work.language)
            work.form_question_id = state.form_editing if state.form_editing != "?" else None
            return state
        return _form_next(state, work, config, form.question(state.current_step_id), returning=True)
    about_actions = bool(work.action_requested or work.actions_declined or set(action_slot_types(config)) & set(work.slots_changed))
    pending = asked if asked is not None and state.finalized(asked.id) is None else None
    if about_actions and pending is not None and pending.required and not _answers_pending(work, pending):
        # "can you draft an email to him?" while a needed question waits: the wish is kept, the question asked
        # again as it is (never "I can't take that as the answer")
        work.trace.append(f"the message speaks of the actions; {pending.id} is still needed")
        return _form_next(state, work, config, pending)
    if about_actions and (pending is None and state.finalized_answers or pending is not None and not pending.required):
        # "make it 3:30" / "set up a call instead" speaks of the action, not of an earlier answer; an
        # optional question waiting is gone past, so the action is not held up by asking it again
        if pending is not None and work.action_requested:
            state = state.evolve(skipped_steps=state.skipped_steps + (pending.id,))
            work.trace.append(f"optional question {pending.id} skipped: the person went on to the action")
        return _form_next(state, work, config, current_question(state, form))
    if chitchat_kind(work.text) and all(c.kind == "chitchat" for c in work.commands):  # "hello", "thanks!": answered in kind, the question asked again
        if state.form_editing is not None:
            work.next_step_question = _edit_question(state, form, work.language)
            return state
        return _form_next(state, work, config, form.question(state.current_step_id) or current_question(state, form))
    if state.form_editing == "?" and len(find_corrections(state, form, work.text, work.language, at_review=True, now=work.now,
                                                                 timezone=work.timezone)) >= 2:
        state = state.evolve(form_editing=None)  # "Change an answer" chosen by the words that also say the changes
    if (edited := _edit_answer(state, work, config)) is not None:
        return edited
    state, moved = _follow_slot_corrections(state, work, config)
    if moved:  # "actually the users are nurses, not doctors": that answer changes, the pending one waits
        return _form_next(state, work, config, current_question(state, form))
    commanded = _command_corrections(state, work, form)
    if commanded or work.model_read:
        changes = commanded
    else:  # words said in place of others first ("steel frame instead of wood"), unless a slot took them
        swapped = None if work.slots_corrected else find_swap(state, form, work.text, work.language, turn=work.turn, now=work.now,
                                                                     timezone=work.timezone)
        if swapped == ():  # "Thursday, not Friday" with two answers on that Friday: which one, asked
            state = state.evolve(form_editing="?")
            work.ask(edit_prompt(state, form, work.language), "form_edit")
            work.reply_action, work.action = "form_edit", ProposedAction("clarification", topic="form_edit")
            work.form_complete = False
            return state.evolve(current_step_id=None)
        changes = find_corrections(state, form, work.text, work.language, at_review=reviewing, now=work.now, timezone=work.timezone)
        if swapped:  # the swap first, then the other changes the message makes ("…should be 7, not 1, and make the floor area 1,150")
            changes = [swapped, *(change for change in changes if change[0].id != swapped[0].id)]
    changes = _kept_in_order(state, work, form, changes)
    if changes:
        for number, (target, value) in enumerate(changes):  # each change to its own question, said one by one
            before = state.finalized(target.id).answer
            state = finalize_answer(state, target, value, turn=work.turn, locale=work.language, form=form)
            work.trace.append(f"form answer {target.id} corrected: {before} -> {value}")
            if number == 0:
                work.form_changed_question, work.form_changed_from, work.form_changed_to = target.id, before, value
            else:
                work.form_also_changed.append((target.id, value))
                line = say(work.language, "Changed “{question}” from {before} to {after}.",
                           question=localize(target.question, work.language).rstrip("?？"),
                           before=answer_shown(target, before, work.language), after=answer_shown(target, value, work.language))
                work.add_form_note(line)
        # "oh wait, it's 3 storeys not 2. floor area is 1,100": what else the message gives is kept too
        state = _keep_volunteered(state, work, form, _volunteered(state, work, form, None))
        if asked is not None and asked.answer_type in ("choice", "number") and state.finalized(asked.id) is None:
            # (a choice or a number only: the rest of a correction's message is no account — "I forgot the
            # in-laws" — and its "no" is the correction's, no answer to a yes/no question)
            state = _answer_beside_corrections(state, work, form, asked, [target for target, _ in changes])
        return _form_next(state, work, config, current_question(state, form))
    spec = asked if asked is not None and state.finalized(asked.id) is None else None
    if spec is not None and spec.answer_type == "yes_no" and (set(work.slots_replaced) & set(work.slots_corrected)
                                                              or _respelled(work.text)):
        # "No - not Marco, Marcos": the no is the correction's, not the answer to the question waiting (also when
        # the name it corrects was never read: "no, not Jon — John")
        return _form_next(state, work, config, spec)
    if asked is None and form.kind == "interview" and has_content(work.text):
        # an interview's opening message answers its first question
        spec = current_question(state, form)
    if spec is None:
        return _form_next(state, work, config, current_question(state, form))
    if prefilled and not _answers_beyond(work, state, config, spec):
        # "面向小区居民和团长" while the constraints are asked: it answered another question, not this one
        return _form_next(state, work, config, current_question(state, form))
    if not work.model_read and says_it_was_wrong(work.text) and (changed := _answer_said_otherwise(state, work, form, spec)):
        # "等一下，你记错了，我联系过他" (the contact was kept as no): the earlier answer its words give is changed
        earlier, before, value = changed
        state = finalize_answer(state, earlier, value, turn=work.turn, locale=work.language, form=form)
        work.form_changed_question, work.form_changed_from, work.form_changed_to = earlier.id, before, value
        work.trace.append(f"form answer {earlier.id} said otherwise: {before} -> {value}")
        return _form_next(state, work, config, spec)
    if (spec.answer_type == "text" and not work.model_read and (renumbered := _number_corrected(state, form, work, spec))):
        # "Actually make that 200 volunteers" while the constraints are asked: the users' 150 becomes 200, the rest of
        # that answer stays, and the constraints still wait
        earlier, value = renumbered
        before = state.finalized(earlier.id).answer
        state = finalize_answer(state, earlier, value, turn=work.turn, locale=work.language, form=form)
        work.form_changed_question, work.form_changed_from, work.form_changed_to = earlier.id, before, value
        work.trace.append(f"form answer {earlier.id} renumbered: {before} -> {value}")
        return _form_next(state, work, config, spec)
    if (spec.answer_type == "text" and not work.model_read and opens_with_correction(work.text)
            and (earlier := _account_corrected(state, form, work.text, spec)) is not None):
        # "sorry, to be precise: the portal is for clients AND suppliers" while the goal is asked: the project's
        # account is corrected (the one it shares its words with), the goal still waits
        before, value = state.finalized(earlier.id).answer, without_lead_words(work.text)
        state = finalize_answer(state, earlier, value, turn=work.turn, locale=work.language, form=form)
        work.form_changed_question, work.form_changed_from, work.form_changed_to = earlier.id, before, value
        work.trace.append(f"form answer {earlier.id} corrected by its words: {before} -> {value}")
        return _form_next(state, work, config, spec)
    state = open_thread(state, spec.id)
    state = answer_clarifying_question(state, work.text, turn=work.turn)
    given = _command_answer(work, spec)
    if given and spec.answer_type == "text" and is_vacuous(given):
        given = None  # a generator's "answer" of "whatever" / "随便" answers nothing
    confirmed = None if given else _candidate_confirmed(state, work, spec)
    verdict = FormEvaluation(True, given) if given else (
        confirmed or evaluate_answer(work.text, spec, work.language, state.active_thread, now=work.now, timezone=work.timezone))
    if given and spec.answer_type == "number" and (own := evaluate_answer(work.text, spec, work.language, now=work.now, timezone=work.timezone)).converted_from \
            and own.value == given:
        verdict = own  # the generator's value is the one converted from the words: both are said
    verdict = _in_order(state, form, spec, verdict, work.language)  # a return day before the collection day is refused, said why
    if work.model_read and not given and verdict.accepted and confirmed is None:
        # the model left the question open (it may have asked back): the rules record no answer of their own
        work.trace.append(f"the model gave no answer to {spec.id}: it stays open")
        return _form_next(state, work, config, spec)
    volunteered = _volunteered(state, work, form, spec)
    if (not verdict.accepted and not given and not work.model_read and spec.answer_type in ("number", "choice")
            and may_volunteer(work.text, spec, work.language)):
        # "2 floors, 1,300 sq ft each" while the storeys are asked: the part in the question's own terms answers it
        parts = {v.value: v for part in message_parts(work.text) if (v := volunteered_answer(part, spec, work.language))}
        if len(parts) == 1 and verdict.reason not in ("several_choices", "unsure_number", "implausible_number"):
            verdict = next(iter(parts.values()))
    if verdict.accepted:
        value = verdict.value or work.text
        if spec.answer_type == "text" and not given:
            others = (_other_raws(work, state, config, spec) + _action_parts(work, config)
                      + [part for other, _, part in volunteered if other.answer_type == "text"])
            value = _without_others(_without_covered_parts(value, others), others)
        sure = verdict.certainty if given or confirmed else _own_words_certainty(spec, work.text, verdict.certainty)
        if sure == GUESS:  # "I think someone called her, not sure": the answer is put back, not recorded
            return _ask_to_keep(state, work, spec, value)
        state = finalize_answer(state, spec, value, turn=work.turn, locale=work.language, form=form)
        work.form_answer_finalized = state.finalized(spec.id)
        _say_back(work, spec, value, sure, noted=not verdict.converted_from)
        if verdict.converted_from:  # "110 m²" for square feet: both are said, the form keeps its own unit
            work.add_form_note(say(work.language, "{given} is {value}; that is what I've put.", given=verdict.converted_from,
                                   value=answer_shown(spec, value, work.language)))
        state = _keep_volunteered(state, work, form, volunteered)
        return _form_next(state, work, config, current_question(state, form))
    if verdict.reason == "unsure_number":  # "6 or 7", "two and a half storeys": which one is asked, nothing stored
        return _ask_which_number(state, work, spec, verdict.candidates)
    if verdict.reason == "implausible_number":  # "900" storeys: confirmed before it is recorded
        return _ask_which_number(state, work, spec, verdict.candidates)
    if verdict.reason == "sum_said":  # "35 staff plus 10 visitors": the sum is confirmed before it is put
        shown = answer_shown(spec, number_answer(verdict.candidates[0], spec.unit), work.language)
        return _put_back(state, work, spec, verdict.candidates,
                         say(work.language, "That makes {value} in all. Is that what I should put?", value=shown))
    if verdict.reason == "said_as_total" and verdict.candidates:  # "both floors combined come to 2,400 sq ft"
        shown = answer_shown(spec, number_answer(verdict.candidates[0], spec.unit), work.language)
        return _put_back(state, work, spec, verdict.candidates,
                         say(work.language, "{value} sounds like a total of several. Is that what I should put?", value=shown))
    if verdict.reason == "said_as_total":  # a total in another unit ("2400 m² across the four floors"): asked again
        _ask_clarifying(work, spec, say(work.language, "That sounds like a total of several. ")
                        + localize(spec.clarify[-1] if spec.clarify else spec.question, work.language))
        return state
    if any(other.answer_type != "choice" or not other.fill_from_answers for other, _, _ in volunteered):
        # "Let's say 2 storeys" while the building type is asked: that is the storeys' answer, kept; this one waits
        state = _take_left_open(_keep_volunteered(state, work, form, volunteered), work, form, spec)
        return _form_next(state, work, config, spec)
    asked = len(state.active_thread.entries) if state.active_thread else 0
    prompt = _clarify_next(spec, asked, verdict, work) if asked < form.max_clarify else None
    if verdict.reason == "several_choices":  # "楼下开店，楼上自己住": which one is asked, nothing recorded
        named = tuple(choices_named(work.text, spec, work.language))
        if named:
            work.unsure.append(Command("answer", question_id=spec.id, value=named[0], candidates=named, certainty=GUESS,
                                       words=work.text))
    if verdict.reason == "non_answer" and defers_answer(work.text):
        # "not sure yet" / "还没想好" is never an answer: say that's fine and ask again, more simply
        prompt = say(work.language, "That's fine if it isn't decided yet. ") + (
            prompt or localize(spec.clarify[-1] if spec.clarify else spec.question, work.language))
    elif verdict.reason == "non_answer" and spec.answer_type == "text" and is_vacuous(work.text):
        # "whatever" / "随便" leaves nothing to plan from: never taken, however often it is said
        prompt = say(work.language, "I need a little more than that to go on. ") + (
            prompt or localize(spec.clarify[-1] if spec.clarify else spec.question, work.language))
    if verdict.reason != "several_choices" and (taken := _take_left_open(state, work, form, spec)) is not state:
        return _form_next(taken, work, config, spec)  # "oh, it's a house": the building type set aside is answered
    work.non_answer = verdict.reason in _NOTHING_TOWARD_IT
    if work.non_answer and asked_enough(state, spec.id, config.loop_guard):
        return _set_aside(state, work, config, spec)  # put twice in a row, whatever the words before it: never a third time
    if prompt is not None:
        _ask_clarifying(work, spec, prompt)
        return state
    if has_content(work.text) and spec.answer_type == "text" and not acknowledges_only(work.text):  # out of clarifying questions: take the answer, flag it for review
        # (never for a typed question: "1,450 sq ft" is no building type however often it is said)
        state = finalize_answer(
            state,
            spec,
            work.text.strip(),
            turn=work.turn,
            locale=work.language,
            form=form,
            needs_review=True,
        )
        work.form_answer_finalized = state.finalized(spec.id)
        return _form_next(state, work, config, current_question(state, form))
    return _form_reask(state, work, config, spec)


def _say_back(work: TurnWork, spec: FormQuestionSpec, value: str, certainty: str, *, slot: str | None = None,
              noted: bool = True) -> None:
    """An answer recorded as said but not certain ("about 950 sq ft"): said back, so the person can change it.
    Read as the slot it came through when it answered a question not asked yet."""
    if certainty == CERTAIN:
        return
    read = Command("set_slot", slot=slot, value=value) if slot else Command("answer", question_id=spec.id, value=value)
    work.unsure.append(replace(read, certainty=certainty, words=work.text))
    if not noted:
        return
    if spec.answer_type == "text":  # the person's own words, kept as said (and noted by the question's name)
        note = say(work.language, "You weren't sure, so tell me if it should be different.")
    elif spec.answer_type in TIMED_ANSWERS:  # the recognizer's doubt, not the person's ("next Tuesday": which one)
        note = say(work.language, "I've put {value}; tell me if you meant another day.", value=answer_shown(spec, value, work.language))
    else:
        note = say(work.language, "I've put {value}; you weren't sure, so tell me if it should be different.",
                   value=answer_shown(spec, value, work.language))
    work.add_form_note(note)


def _respelled(text: str) -> bool:
    """Whether the message puts a word in place of one spelled nearly the same ("not Jon, John", "Marco, Marcos")."""
    return any(distance(new.casefold(), old.casefold(), 2) <= 2 for new, old in word_swaps(text))


def _whole_answer(state: ContextState, work: TurnWork, config: ConversationConfig, spec: FormQuestionSpec) -> ContextState:
    """The question asked, answered in the person's own words: the whole answer when the words a pattern took
    leave more of it ("春节前上线，预算不超过十万" is both constraints, and "差不多" says how sure the deadline is), less
    what answered other questions."""
    form = config.form
    assert form is not None
    slot = state.slots.get(spec.slot) if spec.slot else None
    others = _other_raws(work, state, config, spec)
    names = {q.slot for q in form.questions if q.slot}
    said = [v.value for n, v in state.slots.items() if n in names and n in work.slots_changed and isinstance(v.value, str)]
    values = [*([slot.value] if slot is not None else []), *said]
    left = _without_others(work.text.strip(), values, whole=False)
    unsaid = reduce(lambda text, value: text.replace(value, " "), values, work.text)  # the words no answer holds
    if not (has_content(left) or rough_or_doubtful(unsaid)) or word_swaps(work.text):
        # "the goal is one place for all orders, the users are …": the pattern's words are the answer; so they are
        # when the rest says what is not meant ("site foremen rather than the office")
        return state
    whole = _without_others(work.text.strip(), others)
    return finalize_answer(state, spec, whole, turn=work.turn, locale=work.language, form=form)


def _own_words_certainty(spec: FormQuestionSpec, text: str, read: str) -> str:
    """How sure an answer read from the person's words is: free text by its hedges and rough words, yes or
    no asked back when said with doubt ("好像打过，我不太确定"), a number as its reader found it."""
    if read == GUESS:  # put off in the same breath ("maybe the front desk, not sure yet")
        return GUESS
    if spec.answer_type == "text":
        return text_certainty(text)
    if spec.answer_type == "yes_no" and said_unsure(text):
        return GUESS
    return read


def _unrecorded(state: ContextState, spec: FormQuestionSpec) -> ContextState:
    """The state without a question's answer and the slot behind it (a guess taken back before it is kept)."""
    slots = FrozenDict({k: v for k, v in state.slots.items() if k != spec.slot}) if spec.slot else state.slots
    return state.evolve(slots=slots, finalized_answers=tuple(a for a in state.finalized_answers if a.question_id != spec.id))


def _ask_to_keep(state: ContextState, work: TurnWork, spec: FormQuestionSpec, value: str) -> ContextState:
    """Put an answer said without knowing back to the person; a yes keeps it (the thread's one candidate)."""
    prompt = say(work.language, "You're not sure, so I haven't put it down yet. Shall I put “{value}”?",
                 value=answer_shown(spec, value, work.language))
    return _put_back(open_thread(state, spec.id), work, spec, (value,), prompt)


def _put_back(state: ContextState, work: TurnWork, spec: FormQuestionSpec, candidates: tuple[str, ...],
              prompt: str) -> ContextState:
    """Ask about values nothing recorded: the guess in the reading, the values kept on the question's thread for
    the answer to pick ("yes", "the higher one")."""
    work.unsure.append(Command("answer", question_id=spec.id, value=candidates[0], candidates=candidates,
                               certainty=GUESS, words=work.text))
    _ask_clarifying(work, spec, prompt)
    thread = state.active_thread
    return state.evolve(active_thread=replace(thread, candidates=candidates)) if thread is not None else state


def _candidate_confirmed(state: ContextState, work: TurnWork, spec: FormQuestionSpec) -> FormEvaluation | None:
    """A yes to the one value put back to the person ("shall I put 3?" "yes"): that value, now certain."""
    thread = state.active_thread
    if thread is None or thread.question_id != spec.id or not thread.candidates:
        return None
    if len(thread.candidates) >= 2:  # "the higher one", "第二个", "el mayor": one of the values put back
        side = picks_between(work.text) if number_value(work.text) is None else None
        if side is None:
            return None
        chosen = max(thread.candidates, key=float) if side == "higher" else min(thread.candidates, key=float)
        return FormEvaluation(True, number_answer(chosen, spec.unit) if spec.answer_type == "number" else chosen)
    repeated = spec.answer_type == "number" and number_value(work.text) == thread.candidates[0]  # said again: meant
    if not repeated and (first_match(work.text, YES_NO["yes"], work.language) is None
                         or first_match(work.text, YES_NO["no"], work.language)):
        return None
    return FormEvaluation(True, number_answer(thread.candidates[0], spec.unit) if spec.answer_type == "number" else thread.candidates[0])


def _ask_which_number(state: ContextState, work: TurnWork, spec: FormQuestionSpec, candidates: tuple[str, ...]) -> ContextState:
    """Put the values an answer hesitates between back to the person ("6 or 7 people: which shall I put?")."""
    lang = work.language
    shown = [answer_shown(spec, number_answer(c, spec.unit), lang) for c in candidates]
    if len(shown) == 1:  # a value out of the usual range
        return _put_back(state, work, spec, candidates, say(lang, "{value}: that is unusual. Is it right?", value=shown[0]))
    return _put_back(state, work, spec, candidates,
                     say(lang, "{first} or {second}: which shall I put?", first=shown[0], second=shown[-1]))


def _clarify_next(spec: FormQuestionSpec, asked: int, verdict: FormEvaluation, work: TurnWork) -> str | None:
    """The next clarifying question, following from the person's last answer: what was wrong with
    it when that can be said (a number in another unit, two choices named), else the question's own
    prompts in turn, then what kind of answer fits; the thread grows up to the plan's `max_clarify`."""
    lang = work.language
    if verdict.reason == "wrong_unit" and spec.unit:
        expected = measure_of(spec.unit, lang, article=True) or spec.unit
        return say(lang, "That is {given}, not {expected}. ", given=_given_unit(work.text, spec.unit, lang), expected=expected) + (
            clarify_prompt(spec, min(asked, len(spec.clarify) - 1), lang) if spec.clarify else localize(spec.question, lang))
    if verdict.reason in _TYPED_REFUSALS:
        return _typed_refusal(spec, verdict, lang) + (
            clarify_prompt(spec, min(asked, len(spec.clarify) - 1), lang) if spec.clarify else localize(spec.question, lang))
    if verdict.reason == "several_choices":
        named = [c for c in spec.choices if c.value in choices_named(work.text, spec, lang)] or list(spec.choices)
        labels = [choice_label(c, lang) for c in named]
        return say(lang, "Which one is it mainly: {choices} or {last}?", choices=_listed(labels[:-1], lang), last=labels[-1])
    if (own := clarify_prompt(spec, asked, lang)) is not None:
        return own
    if spec.answer_type == "choice" and spec.choices:
        labels = [choice_label(c, lang) for c in spec.choices]
        return say(lang, "Which of these is closest: {choices} or {last}?", choices=_listed(labels[:-1], lang), last=labels[-1])
    question = localize(spec.question, lang)
    if spec.answer_type == "number":
        return say(lang, "A rough number{unit} is enough: {question}", unit=unit_said(spec.unit, lang, spec), question=question)
    if spec.answer_type == "yes_no":
        return say(lang, "Yes or no is enough: {question}", question=question)
    return say(lang, "A few words more, please: {question}", question=question)


_TYPED_REFUSALS = frozenset({"out_of_range", "not_in_format", "no_date", "no_time", "unsure_time", "other_unspecified",
                             "before_other"})


def _in_order(state: ContextState, form: FormSpec, spec: FormQuestionSpec, verdict: FormEvaluation, lang: str) -> FormEvaluation:
    """A date that must come on or after another question's (`after`) and comes before it: refused, never kept
    (the candidates say the other question's name and its day, for the reply)."""
    earlier = state.finalized(spec.after) if spec.after else None
    other = form.question(spec.after) if spec.after else None
    if not verdict.accepted or verdict.value is None or earlier is None or other is None or verdict.value[:10] >= earlier.answer[:10]:
        return verdict
    name = localize(other.label, lang) or localize(other.question, lang).rstrip("?？")
    return FormEvaluation(False, reason="before_other", candidates=(name, answer_shown(other, earlier.answer, lang)))


def _typed_refusal(spec: FormQuestionSpec, verdict: FormEvaluation, lang: str) -> str:
    """What was wrong with an answer of the wrong kind, said before the question again (with a space)."""
    if verdict.reason == "out_of_range":
        low, high = (answer_shown(spec, number_answer(f"{b:g}", spec.unit), lang) if b is not None else None for b in (spec.min, spec.max))
        if low is not None and high is not None:
            return say(lang, "It takes a number from {low} to {high}. ", low=low, high=high)
        return say(lang, "The most it takes is {high}. ", high=high) if high is not None else say(lang, "The least it takes is {low}. ", low=low)
    if verdict.reason == "not_in_format":
        example = localize(spec.example, lang)
        return say(lang, "That isn't in the form it takes (for example {example}). ", example=example) if example \
            else say(lang, "That isn't in the form it takes. ")
    if verdict.reason == "before_other":
        return say(lang, "That is before the {label} ({day}). ", label=verdict.candidates[0], day=verdict.candidates[1])
    if verdict.reason == "other_unspecified":
        return say(lang, "What is it? A few words are enough. ")
    if verdict.reason == "no_time":
        return say(lang, "I need a time of day, for example “2:30 pm”. ")
    if verdict.reason == "unsure_time":
        return say(lang, "I need one day, not a choice of days. ")
    return say(lang, "I need a day, for example “next Friday” or “1 March”. ")


def _listed(items: list[str], lang: str) -> str:
    return say_in(lang, "list", ", ").join(items)


def _given_unit(text: str, own: str, lang: str) -> str:
    """What the number of the message measures, in words ("a floor area" for "1,450 sq ft")."""
    mine = unit_id(own)
    for key in FORM_UNITS:
        if key != mine and mentions_unit(text, key):
            return measure_of(key, lang, article=True)
    return say(lang, "another unit")


def _form_reask(
    state: ContextState, work: TurnWork, config: ConversationConfig, spec: FormQuestionSpec
) -> ContextState:
    """Nothing usable and nothing left to clarify: fall back once, then re-ask, never loop."""
    guard = config.loop_guard
    if may_fallback(state, guard):
        work.ask(_form_fallback(spec, work.language), "fallback")
        work.reply_action, work.action = "fallback", ProposedAction(FALLBACK, step_id=spec.id)
        return state.evolve(current_step_id=spec.id)
    if state.step_repeat_counts.get(spec.id, 0) >= guard.max_step_repeats:
        work.decision, work.reply_action = ABORT, "abort"
        work.loop_violations = (f"step_repeat_limit:{spec.id}",)
        return state
    return _form_next(state, work, config, spec)


# what a reply that gives nothing toward the question is judged as ("hmm", "a nice one" to a choice, "ok" to free
# text); an answer off ("6 or 7", "2,000 sq ft" for storeys, "offices and a shop") is something toward it
_NOTHING_TOWARD_IT = frozenset({"non_answer", "no_choice_matched", "no_number", "no_yes_no", "too_short", "not_in_format",
                                "no_date", "no_time"})
SET_ASIDE_TEXT = marked("Let's come back to that question later; you can answer it whenever you like.")
BACK_TO_IT_TEXT = marked("Let's go back to the question we left open.")


def _set_aside(state: ContextState, work: TurnWork, config: ConversationConfig, spec: FormQuestionSpec) -> ContextState:
    """A question put twice in a row without an answer: the form goes on with the next one and comes back to it.
    When it is the only one open, or it and the next one both take free text (a later reply could not be told to
    answer it, and would be filed under the next one), it is left with the ways out: answer it any time, or a
    person."""
    form = config.form
    assert form is not None
    work.loop_violations = (f"step_repeat_limit:{spec.id}",)
    thread, archived = state.active_thread, state.archived_threads
    if thread is not None and thread.question_id == spec.id and thread.entries:  # its clarifications are kept
        archived = tuple(t for t in archived if t.question_id != spec.id) + (thread,)
    aside = state.evolve(skipped_steps=state.skipped_steps + (spec.id,), active_thread=None, archived_threads=archived)
    following = current_question(aside, form) or _left_open(aside, form, besides=spec.id)
    if following is None or spec.answer_type == following.answer_type == "text":
        work.trace.append(f"form question {spec.id} asked twice in a row unanswered and nothing else open: left with the ways out")
        work.decision, work.reply_action = ABORT, "abort"
        work.form_question_id = spec.id
        return state.evolve(current_step_id=spec.id)
    work.trace.append(f"form question {spec.id} asked twice in a row unanswered: set aside, the next one asked")
    if current_question(aside, form) is not None:  # else the next is one set aside before, said as such
        work.add_form_note(say(work.language, SET_ASIDE_TEXT))
    return _form_next(aside, work, config, current_question(aside, form), besides=spec.id)


def _take_left_open(state: ContextState, work: TurnWork, form: FormSpec, asked: FormQuestionSpec) -> ContextState:
    """The questions set aside earlier that the message answers as it would have when each was asked ("oh, it's a
    house", "是做商铺的，三层"), taken and said back; the state as it was when it answers none."""
    for spec in form.questions:
        if spec.id == asked.id or spec.id not in state.skipped_steps or state.finalized(spec.id) is not None:
            continue
        verdict = evaluate_answer(work.text, spec, work.language, now=work.now, timezone=work.timezone) if spec.answer_type != "text" else None
        if verdict is not None and verdict.accepted and verdict.value:
            state = finalize_answer(state.evolve(skipped_steps=tuple(s for s in state.skipped_steps if s != spec.id)), spec,
                                    verdict.value, turn=work.turn, locale=work.language, form=form)
            work.form_answer_finalized = state.finalized(spec.id)
            _say_back(work, spec, verdict.value, verdict.certainty)
    return state


def _left_open(state: ContextState, form: FormSpec, besides: str | None = None) -> FormQuestionSpec | None:
    """A needed question set aside earlier and still unanswered (but the one set aside just now): the form comes
    back to it before the review."""
    return next((q for q in form.questions if q.required and q.id in state.skipped_steps and q.id != besides
                 and state.finalized(q.id) is None), None)


def _form_next(
    state: ContextState,
    work: TurnWork,
    config: ConversationConfig,
    spec: FormQuestionSpec | None,
    returning: bool = False,
    besides: str | None = None,
) -> ContextState:
    """Point at the next form question (or say the form is complete)."""
    form = config.form
    assert form is not None
    if spec is not None and not spec.required and work.action_requested and not returning and state.form_editing is None:
        # "called twice, no answer; can you draft an email to him?": the action asked for is not held up by an
        # optional question next in line (never ask and act at once)
        state = state.evolve(skipped_steps=state.skipped_steps + (spec.id,))
        work.trace.append(f"optional question {spec.id} skipped: the person asked for an action")
        return _form_next(state, work, config, current_question(state, form), returning)
    if spec is None and state.form_editing is None and (back := _left_open(state, form, besides)) is not None:
        state, spec = state.evolve(skipped_steps=tuple(s for s in state.skipped_steps if s != back.id)), back
        work.add_form_note(say(work.language, BACK_TO_IT_TEXT))
        work.trace.append(f"form question {back.id} set aside earlier: asked again")
    done = form_complete(state, form) and state.form_editing is None  # not while an answer is being changed
    work.form_complete = done
    if spec is None:
        if not returning:
            work.reply_action = "form_complete" if done else work.reply_action
        return state.evolve(current_step_id=None)
    work.form_question_id = spec.id
    work.next_step_id = spec.id
    work.next_step_question = localize(spec.question, work.language)
    if not returning:
        work.reply_action = "form_next"
        work.action = ProposedAction(QUESTION, step_id=spec.id, topic=spec.id)
    return state.evolve(current_step_id=spec.id)


def _answers_pending(work: TurnWork, spec: FormQuestionSpec) -> bool:
    """The message (also) answers the question waiting ("yes I called her, set up a call on Friday")."""
    return spec.answer_type in ("yes_no", "choice", "number") and evaluate_answer(work.text, spec, work.language, now=work.now, timezone=work.timezone).accepted


def _question_said_again(state: ContextState, work: TurnWork, spec: FormQuestionSpec) -> ContextState:
    """ "what does this question mean?": the question said another way (its next clarifying wording), with what
    answers it; nothing is recorded as its answer."""
    lang = work.language
    thread = state.active_thread
    asked = len(thread.entries) if thread is not None and thread.question_id == spec.id else 0
    wording = (clarify_prompt(spec, min(asked, len(spec.clarify) - 1), lang) if spec.clarify else None) or localize(spec.question, lang)
    _ask_clarifying(work, spec, say(lang, "In other words: {question} {answers}", question=wording,
                                    answers=_what_answers(spec, lang)).strip())
    work.trace.append(f"form question {spec.id} said another way")
    return state


def _ask_clarifying(work: TurnWork, spec: FormQuestionSpec, prompt: str) -> None:
    """Put a clarifying question about a form question (its thread counts it)."""
    work.ask(prompt, "form_clarify")
    work.reply_action = "form_clarify"
    work.action = ProposedAction("clarification", step_id=spec.id, topic=spec.id)
    work.form_question_id = work.clarify_form_question_id = spec.id


def _what_answers(spec: FormQuestionSpec, language: str) -> str:
    """What kind of answer fits a question, in a sentence ("" for free text)."""
    if spec.answer_type == "choice" and spec.choices:
        labels = _listed([choice_label(c, language) for c in spec.choices], language)
        return say(language, "Any of these answers it: {choices}.", choices=labels)
    if spec.answer_type == "number":
        return say(language, "A number{unit} answers it.", unit=unit_said(spec.unit, language, spec))
    if spec.answer_type == "yes_no":
        return say(language, "Yes or no answers it.")
    if spec.answer_type in TIMED_ANSWERS:
        return say(language, "A day answers it.") if spec.answer_type == "date" else say(language, "A time of day answers it.") \
            if spec.answer_type == "time" else say(language, "A day and a time answer it.")
    return ""


def _form_fallback(spec: FormQuestionSpec, language: str) -> str:
    """The question again, with what would answer it and the way out (never a bare "tell me more")."""
    question = localize(spec.question, language)
    hint = _what_answers(spec, language)
    way_out = say(language, "If you are not sure yet, say so, or say “talk to a person”.")
    return " ".join(part for part in (say(language, "I still can't take that as the answer."), question, hint, way_out) if part)


def _volunteered(state: ContextState, work: TurnWork, form: FormSpec,
                 asked: FormQuestionSpec | None) -> list[tuple[FormQuestionSpec, FormEvaluation, str]]:
    """Answers the message gives to questions not asked yet, each with the part that gives it: a part in a
    question's own terms (its unit, its choices, its subject, its plan's words), or, for a question the plan
    lets other answers fill, the one choice the whole message names ("It's a duplex where two families will
    live"). Two parts that disagree give none (it is asked in its turn); the model's reading gives the parts'."""
    parts: list[str] | None = None  # read once, when a question may be answered in passing
    found = []
    for spec in form.questions:
        if asked is not None and spec.id == asked.id or state.finalized(spec.id) is not None or spec.id in state.skipped_steps and not spec.required:
            continue
        if (said := _command_answer(work, spec)) is not None:  # the generator said it (checked as its answer)
            command = _answer_command(work, spec)
            found.append((spec, FormEvaluation(True, said, certainty=command.certainty if command else CERTAIN), work.text))
            continue
        if spec.fill_from_answers:
            verdict = evaluate_answer(work.text, spec, work.language, now=work.now, timezone=work.timezone)
            if verdict.accepted and verdict.value:
                found.append((spec, verdict, work.text))
            continue
        if work.model_read or not may_volunteer(work.text, spec, work.language):
            continue
        if spec.answer_type == "number" and number_alternatives(work.text, spec.unit) is not None:
            continue  # "about ten people, maybe twelve": a hesitation is no fact; it is asked when its question comes
        parts = message_parts(work.text) if parts is None else parts
        given = [(v, part) for part in parts if (v := volunteered_answer(part, spec, work.language)) is not None]
        if len({v.value for v, _ in given}) == 1:
            found.append((spec, *given[0]))
        elif given and spec.answer_type == "text":  # free text said in two parts ("the third time … - I've written each up")
            joined = say_in(work.language, "list", ", ").join(dict.fromkeys(v.value for v, _ in given))
            found.append((spec, replace(given[0][0], value=joined), given[0][1]))
    return [_up_to_the_next(answer, found) for answer in found]


# Words that join a value to the next one ("timber frame with smoke detectors", "砖混结构和烟感")
_TRAILING_JOIN = re.compile(r"(?:\s+(?:with|and|plus|&|\+)|\s*[和及与、,，+])+\s*$", re.IGNORECASE)


def _up_to_the_next(answer: tuple[FormQuestionSpec, FormEvaluation, str],
                    found: list[tuple[FormQuestionSpec, FormEvaluation, str]]) -> tuple[FormQuestionSpec, FormEvaluation, str]:
    """A free-text answer read in passing ends where another answer of the same part begins ("timber frame with
    smoke detectors" is the materials up to the fire protection)."""
    spec, verdict, part = answer
    value = verdict.value or ""
    if spec.answer_type != "text":
        return answer
    starts = [at for other, given, said in found if other is not spec and said == part and given.value
              and (at := value.find(given.value)) > 0]
    if not starts:
        return answer
    cut = _TRAILING_JOIN.sub("", value[:min(starts)]).strip(" ,，、")
    return (spec, replace(verdict, value=cut), part) if cut else answer


def _answer_beside_corrections(state: ContextState, work: TurnWork, form: FormSpec, asked: FormQuestionSpec,
                               corrected: list[FormQuestionSpec]) -> ContextState:
    """The question asked, answered in the parts of the message that correct nothing ("Residential occupancy,
    apartments. And please change the storeys to 5": the occupancy is residential too)."""
    rest = [part for part in message_parts(work.text) if not is_correction(part)
            and not any(names_question(part, q) or q.unit and mentions_unit(part, q.unit) for q in corrected)]
    said = " ".join(rest)
    verdict = evaluate_answer(said, asked, work.language, now=work.now, timezone=work.timezone) if rest else None
    if verdict is None or not verdict.accepted:
        return state
    state = finalize_answer(state, asked, verdict.value or said, turn=work.turn, locale=work.language, form=form)
    work.form_answer_finalized = state.finalized(asked.id)
    work.trace.append(f"{asked.id} answered beside the corrections: {verdict.value or said}")
    return state


def _keep_volunteered(state: ContextState, work: TurnWork, form: FormSpec,
                      found: list[tuple[FormQuestionSpec, FormEvaluation, str]]) -> ContextState:
    """Keep the answers given before their questions, so they are not asked again; the reply notes each."""
    for spec, verdict, part in found:
        if state.finalized(spec.id) is not None:
            continue
        state = finalize_answer(state, spec, verdict.value, turn=work.turn, locale=work.language, form=form)
        # a fact given before its question is the question's slot (a generator says it so too)
        said = Command("set_slot", slot=spec.slot, value=verdict.value) if spec.slot else Command(
            "answer", question_id=spec.id, value=verdict.value)
        work.form_volunteered.append(replace(said, certainty=verdict.certainty, words=part))
        work.trace.append(f"{spec.id} answered in passing: {verdict.value}")
    return state


def _follow_slot_corrections(state: ContextState, work: TurnWork, config: ConversationConfig) -> tuple[ContextState, bool]:
    """A slot this message corrected ("actually the users are nurses") changes the final answer it backs."""
    form = config.form
    assert form is not None
    moved = False
    for spec in form.questions:
        final = state.finalized(spec.id)
        slot = state.slots.get(spec.slot) if spec.slot else None
        if final is None or slot is None or spec.slot not in work.slots_changed or slot.value == final.answer:
            continue
        if spec.answer_type == "text" and text_length(slot.value.strip()) < spec.min_chars:
            continue
        if spec.accumulate and not is_correction(work.text) and _replace_part(final.answer, slot.value, whole=False) is None:
            # "must launch before June" after "our budget is 15k": another constraint, not a new account of the budget
            if slot.value.casefold() not in final.answer.casefold():
                joint = say_in(work.language, "items", "; ")
                state = finalize_answer(state, spec, f"{final.answer}{joint}{slot.value}", turn=work.turn, locale=work.language, form=form)
                work.trace.append(f"form answer {spec.id} gathers: {slot.value}")
                moved = True
            continue
        value = _replace_part(final.answer, slot.value) if spec.accumulate else slot.value
        state = finalize_answer(state, spec, value, turn=work.turn, locale=work.language, form=form)
        if not moved:
            work.form_changed_question, work.form_changed_from, work.form_changed_to = spec.id, final.answer, value
        work.trace.append(f"form answer {spec.id} follows its corrected slot: {final.answer} -> {slot.value}")
        moved = True
    return state, moved


def _words(text: str) -> set[str]:
    """Latin words of three letters or more and Chinese character pairs: what two phrases may share."""
    lowered = text.lower()
    return set(re.findall(r"[a-z]{3,}", lowered)) | {lowered[i:i + 2] for i in range(len(lowered) - 1)
                                                     if re.fullmatch(r"[\u4e00-\u9fff]{2}", lowered[i:i + 2])}


def _replace_part(gathered: str, new: str, *, whole: bool = True) -> str | None:
    """A new account of one part of a gathered answer changes that part ("the budget is 18k" replaces the
    budget, the deadline stays); one about none of them replaces the whole answer (None without `whole`)."""
    if re.search(r"; |；", new):
        return new  # a whole gathered answer (a generator's reading of it): it is the answer
    # the parts and what joins them: "; " and "；" as gathered, or "，" as said in one Chinese sentence
    # ("预算3万以内，寒假前要上线，必须接入企业微信")
    pieces = re.split(r"(; |；|，)", gathered)
    parts, joints = pieces[0::2], pieces[1::2]
    shared = [len(_words(p) & _words(new) - {"the", "and", "our", "its"}) for p in parts]
    if max(shared, default=0) == 0 or shared.count(max(shared)) > 1:
        return new if whole else None
    if len(parts) < 2:
        return new
    best = shared.index(max(shared))
    kept = [new if i == best else p for i, p in enumerate(parts)]
    return "".join(part + (joints[i] if i < len(joints) else "") for i, part in enumerate(kept))


def _other_raws(work: TurnWork, state: ContextState, config: ConversationConfig, spec: FormQuestionSpec) -> list[str]:
    """The words of this message that gave other questions' slots."""
    form = config.form
    assert form is not None
    others = {q.slot for q in form.questions if q.slot and q.id != spec.id}
    return [state.slots[n].raw for n in work.slots_changed if n in others and n in state.slots and state.slots[n].raw]


def _answer_said_otherwise(state: ContextState, work: TurnWork, form: FormSpec,
                           asked: FormQuestionSpec) -> tuple[FormQuestionSpec, str, str] | None:
    """The one earlier yes/no, choice or number answer a correcting message gives otherwise in that question's own
    terms (its patterns, a choice's name, its unit): (question, old answer, new answer), or None."""
    changed = []
    for answer in state.finalized_answers:
        spec = form.question(answer.question_id)
        if spec is None or spec.id == asked.id or spec.answer_type == "text":
            continue
        parts = message_parts(work.text)
        said = {v.value for i, part in enumerate(parts) if not _denied_part(work.text, part)
                and not (i < len(parts) - 1 and reproached(part))  # "the 2 storeys was wrong, it's a single storey"
                and (v := volunteered_answer(part, spec, work.language))}  # "不是工业！…是商业": not the denied one
        if len(said) == 1 and (value := next(iter(said))) and value != answer.answer:
            changed.append((spec, answer.answer, value))
    return changed[0] if len(changed) == 1 else None


def _denied_part(text: str, part: str) -> bool:
    """Whether a part of the message is said not to be so ("不是工业", "not 2 storeys")."""
    at = text.find(part)
    return at >= 0 and negated(text, at, at + len(part))


def _account_corrected(state: ContextState, form: FormSpec, text: str, asked: FormQuestionSpec) -> FormQuestionSpec | None:
    """The earlier free-text answer a correction speaks of: the one it shares the most words with (two at least,
    and no other as many), or None."""
    said = _words(text) - _COMMON_WORDS
    shared = [(len(_words(a.answer) & said), spec) for a in state.finalized_answers
              if (spec := form.question(a.question_id)) is not None and spec.answer_type == "text" and spec.id != asked.id]
    best = max((n for n, _ in shared), default=0)
    found = [spec for n, spec in shared if n == best]
    return found[0] if best >= 2 and len(found) == 1 else None


_NUMBER_THEN_WORD = re.compile(r"(\d[\d,]*)\s*([^\W\d_]+)")


def _number_corrected(state: ContextState, form: FormSpec, work: TurnWork,
                      asked: FormQuestionSpec) -> tuple[FormQuestionSpec, str] | None:
    """A correction that gives one number with what it counts ("make that 200 volunteers", "改成500人"): the one
    earlier free-text answer that names what it counts, with its number (the one counting the same word, else the
    nearest in size) put to the new one; None when it is not one such answer."""
    if not says_a_correction(work.text):
        return None
    said = _NUMBER_THEN_WORD.findall(work.text)
    if len(said) != 1:
        return None
    new, word = said[0][0].replace(",", ""), said[0][1].casefold()
    found = []
    for answer in state.finalized_answers:
        spec = form.question(answer.question_id)
        numbers = list(_NUMBER_THEN_WORD.finditer(answer.answer))
        if spec is None or spec.id == asked.id or spec.answer_type != "text" or not numbers:
            continue
        counting = [m for m in numbers if m.group(2).casefold().startswith(word[:4])]
        if not counting and word[:4] not in answer.answer.casefold():
            continue
        old = counting[0] if counting else min(numbers, key=lambda m: abs(float(m.group(1).replace(",", "")) - float(new)))
        found.append((spec, answer.answer[:old.start(1)] + new + answer.answer[old.end(1):]))
    return found[0] if len(found) == 1 and found[0][1] != state.finalized(found[0][0].id).answer else None


_COMMON_WORDS = frozenset({"the", "and", "for", "our", "its", "with", "that", "this", "are", "was", "too", "also",
                           "just", "all", "can", "will", "not", "but", "you", "they", "them", "their", "from"})


def _action_parts(work: TurnWork, config: ConversationConfig) -> list[str]:
    """The sentences of this message that ask for an action or refuse one ("I'd like a 30-min call with her next
    Tuesday at 3pm"): no part of an account given in the same message."""
    if not (work.action_requested or work.actions_declined):
        return []
    return [request_from(part) for part in message_parts(work.text, at_contrasts=False)
            if read_actions(part, work.language, config.actions) != (None, ())]


def _answers_beyond(work: TurnWork, state: ContextState, config: ConversationConfig, spec: FormQuestionSpec) -> bool:
    """Whether the message says more than what answered other questions (so it may answer this one too)."""
    rest = _without_others(work.text, _other_raws(work, state, config, spec))
    rest = _LEAD_IN.sub("", rest).strip()
    return text_length(rest) >= max(spec.min_chars, 4) and has_content(rest)


_LEAD_IN = re.compile(r"^(?:\s*(?:actually|also|and|oh|ok(?:ay)?|sorry|so|well|no|不对|对了|另外|还有|其实|哦|嗯)[\s,，.。!！:：]*)+", re.IGNORECASE)
_CLAUSE_LEAD = re.compile(r"(?:(?:and|also|so|but|plus|then|oh|ah|the|our|my|its|their|而且|并且|另外|还有|其中|我们的|我们)\s*)*", re.IGNORECASE)
_BOUNDARY = re.compile(r"[.!?;,。！？；，、\n]")


def _without_covered_parts(text: str, raws: list[str]) -> str:
    """The answer without the parts that other questions' words make up for the most part ("it'll mainly be used
    by the clients themselves and it needs to connect to Xero" is the users and a constraint, not the goal); the
    whole text when nothing else is left."""
    parts = message_parts(text, at_contrasts=False)
    covered = [part for part in parts if sum(len(raw) for raw in raws if raw and raw in part) >= 0.6 * len(part)]
    if not covered or len(covered) == len(parts):
        return text
    kept = text
    for part in covered:
        at = kept.find(part)
        if at >= 0:
            stop = _BOUNDARY.search(kept, at + len(part))
            kept = kept[:at] + kept[stop.end() if stop else len(kept):]
    return kept.strip(" ,，、;；") or text


def _without_others(text: str, raws: list[str], *, whole: bool = True) -> str:
    """The answer without whole clauses another question took ("The goal is ...", "用户是..."); the whole text
    when nothing is left (`whole`), else what is left, with any lead-in before a value that ends its clause
    ("the users are franchise partners")."""
    for raw in raws:
        at = text.find(raw)
        if at < 0:
            continue
        start = max((m.end() for m in _BOUNDARY.finditer(text, 0, at)), default=0)
        end = at + len(raw)
        after = _BOUNDARY.search(text, end)
        lead = text[start:at].strip()
        if (after.start() if after else len(text)) - end > 2 or whole and not (_CLAUSE_LEAD.fullmatch(lead) or only_fillers(lead)):
            continue  # inside a clause ("a tool for our warehouse team to ..."): the words stay
        stop = after.end() if after else len(text)
        text = text[:start] + text[stop:]
    return text.strip(" ,，、;；") or (text if whole else "")


# --- changing a final answer (the review's "Change an answer") ---------------------------------

def edit_prompt(state: ContextState, form, lang: str) -> str:  # noqa: ANN001
    """"Which answer would you like to change?" with the answers listed in plain words."""
    return say(lang, "Which answer would you like to change?") + "\n" + answers_listing(state, form, lang)


def _edit_question(state: ContextState, form, lang: str) -> str:  # noqa: ANN001
    """What the change in progress asks: which answer, or the chosen one's new value."""
    spec = form.question(state.form_editing) if state.form_editing not in (None, "?") else None
    if spec is None:
        return edit_prompt(state, form, lang)
    question = localize(spec.question, lang).rstrip("?？")
    return say(lang, "The answer to “{question}” is now {answer}. What should it be?", question=question,
               answer=answer_shown(spec, state.finalized(spec.id).answer, lang))


def _edit_answer(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState | None:
    """A change of a final answer once every question is answered (or one in progress), else None.

    The person names the answer (by its words, its unit, or its place in the listing) or is
    asked which one, listed; the new value goes through the question's own checks (units,
    choices, negation; "not sure" keeps the answer as it was), and the reply says what changed
    and returns to the review. Nothing changes until a value is accepted.
    """
    form = config.form
    assert form is not None
    editing = state.form_editing
    lang = work.language
    at_review = editing is None and current_question(state, form) is None and bool(state.finalized_answers)
    given = value_in_own_unit(state, form, work.text, work.language) if at_review else None
    if given is not None and given[1] != state.finalized(given[0].id).answer:  # "1600 sq ft" at the review: a change
        return _apply_edit(state, work, config, *given)
    if editing is None and not (at_review and wants_edit(work.text)):
        return _change_named(state, work, config)
    if editing is None and len(find_corrections(state, form, work.text, lang, at_review=True, now=work.now, timezone=work.timezone)) >= 2:
        return None  # "我想改一下楼层数，改成三层……人数改成12人": each change said is made, as corrections are

    corrected = find_correction(state, form, work.text, work.language, prefer=editing or "?", now=work.now, timezone=work.timezone)
    if corrected is not None:  # what and to what, in one message ("change the storeys to 3")
        return _apply_edit(state, work, config, *corrected)
    target = form.question(editing) if editing not in (None, "?") else None
    if target is not None and evaluate_answer(work.text, target, work.language, now=work.now, timezone=work.timezone).accepted:
        named = target  # an answer to the question being changed ("3 floors" names no floor area)
    else:
        named = edit_target(state, form, work.text, listed=editing == "?")
        if target is not None and named is not None and not (wants_edit(work.text) or names_question(work.text, named)):
            named = None  # "1,600 sq ft" for the storeys: a wrong unit, not a change of the floor area
    if named is not None and (target is None or named.id != target.id):
        value = _value_with_name(work.text, named, work, form)
        if value is not None and value != state.finalized(named.id).answer:
            return _apply_edit(state, work, config, named, value)
        return _ask_edit(state.evolve(form_editing=named.id), work, form, named, _edit_question(state.evolve(form_editing=named.id), form, lang))
    if target is None:  # nothing named: which one?
        state = state.evolve(form_editing="?")
        work.ask(edit_prompt(state, form, lang), "form_edit")
        work.reply_action = "form_edit"
        work.action = ProposedAction("clarification", topic="form_edit")
        work.form_complete = False
        return state.evolve(current_step_id=None)
    state = open_thread(state, target.id)
    state = answer_clarifying_question(state, work.text, turn=work.turn)
    verdict = evaluate_answer(work.text, target, work.language, state.active_thread, now=work.now, timezone=work.timezone)
    current = state.finalized(target.id).answer
    if verdict.accepted and verdict.value and verdict.value != current:
        return _apply_edit(state, work, config, target, verdict.value)
    if verdict.accepted:  # the same answer again: nothing to change, back to the review
        work.form_note = _unchanged(target, current, lang)
        state = state.evolve(form_editing=None)
        return _form_next(state, work, config, None)
    asked = len(state.active_thread.entries) if state.active_thread else 0
    prompt = clarify_prompt(target, asked - 1, work.language) or localize(target.question, work.language)
    kept = say(lang, "I've kept {answer} for now.", answer=answer_shown(target, current, lang))
    return _ask_edit(state, work, form, target, then(lang, kept, prompt))


# Where the new value starts in "change the goal to …", "目标改成…"
_CHANGED_TO = re.compile(r"\b(?:to|into)\b|改成|改为|换成|应该是", re.IGNORECASE)


def _change_named(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState | None:
    """Before the review, a change of an earlier answer named by its question with the new value in the same
    message ("用户改一下，只有志愿者用，老人和子女不用装", "change the goal to …"): that answer changes, the
    question waiting stays; None when the message names no earlier answer with a new value."""
    form = config.form
    assert form is not None
    if not state.finalized_answers:
        return None
    if wants_edit(work.text):
        named = edit_target(state, form, work.text)
    else:  # "oh wait, make the collection day Friday 11 December": an earlier day or time named by its label
        labelled = [q for q in form.questions if q.answer_type in TIMED_ANSWERS and label_said(work.text, q, form)]
        named = labelled[0] if len(labelled) == 1 else None
        waiting = current_question(state, form)
        if (named is not None and waiting is not None and waiting.answer_type not in TIMED_ANSWERS
                and evaluate_answer(work.text, waiting, work.language, now=work.now, timezone=work.timezone).accepted):
            named = None  # "CC1234, and the collection day is Thursday": the answer to the question asked is kept
    if named is None or named.id == state.current_step_id or state.finalized(named.id) is None:
        return None
    value = _value_with_name(work.text, named, work, form)
    if value is None and named.answer_type == "text":
        # the new account: what follows "to" / "改成" where the question is named ("change the goal to '…'"), and
        # the parts that name nothing ("用户改一下，只有志愿者用"), less what answered other questions
        others, rest = _other_raws(work, state, config, named), []
        for part in message_parts(work.text, at_contrasts=False):
            if any(raw in part for raw in others):
                continue
            if names_question(part, named) or wants_edit(part):
                after = _CHANGED_TO.search(part)
                part = part[after.end():].strip(" '\"“”‘’「」") if after else ""
            if part:
                rest.append(part)
        said = ("，" if work.language.startswith("zh") else ", ").join(rest)
        value = said if rest and evaluate_answer(said, named, work.language, now=work.now, timezone=work.timezone).accepted else None
    if value is None:
        return None
    if value == state.finalized(named.id).answer:  # named, and said as it already is: the question waiting stays
        work.form_note = _unchanged(named, value, work.language)
        return _form_next(state, work, config, current_question(state, form))
    return _apply_edit(state, work, config, named, value)


def _ask_edit(state: ContextState, work: TurnWork, form, spec: FormQuestionSpec, prompt: str) -> ContextState:  # noqa: ANN001
    """Ask for the chosen answer's new value (the answer stays as it is until one is accepted)."""
    state = open_thread(state, spec.id).evolve(form_editing=spec.id)
    work.ask(prompt, "form_edit")
    work.reply_action = "form_edit"
    work.action = ProposedAction("clarification", step_id=spec.id, topic=spec.id)
    work.form_question_id = spec.id
    work.form_complete = False
    return state


def _value_with_name(text: str, spec: FormQuestionSpec, work: TurnWork, form: FormSpec | None = None) -> str | None:
    """A new value given with the answer's name, in a message without a correction word:
    a number in the question's unit ("storeys: 3 floors"), exactly one choice named, or a day or time said
    with the question's label ("make the collection day Friday 11 December")."""
    if spec.answer_type == "number" and mentions_unit(text, spec.unit or ""):
        verdict = evaluate_answer(text, spec, work.language)
        return verdict.value if verdict.accepted else None
    if spec.answer_type == "choice" and len(named := choices_named(text, spec, work.language)) == 1:
        return named[0]
    if spec.answer_type in TIMED_ANSWERS and label_said(text, spec, form):
        verdict = evaluate_answer(text, spec, work.language, now=work.now, timezone=work.timezone)
        return verdict.value if verdict.accepted else None
    return None


def _out_of_order(state: ContextState, form: FormSpec, spec: FormQuestionSpec, value: str, lang: str) -> str | None:
    """Why a changed date breaks an `after` between two answers, or None: a return moved before its collection, or
    a collection moved past its return."""
    verdict = _in_order(state, form, spec, FormEvaluation(True, value), lang)
    if not verdict.accepted:
        return _typed_refusal(spec, verdict, lang)
    for later in (q for q in form.questions if q.after == spec.id and state.finalized(q.id) is not None):
        if value[:10] > state.finalized(later.id).answer[:10]:
            name = localize(later.label, lang) or localize(later.question, lang).rstrip("?？")
            return say(lang, "That is after the {label} ({day}). ", label=name,
                       day=answer_shown(later, state.finalized(later.id).answer, lang))
    return None


def _kept_in_order(state: ContextState, work: TurnWork, form: FormSpec,
                   changes: list[tuple[FormQuestionSpec, str]]) -> list[tuple[FormQuestionSpec, str]]:
    """The corrections that change something and keep the dates in their order; for each other one, a note of why
    the answer stays as it is."""
    lang, kept = work.language, []
    for target, value in changes:
        before = state.finalized(target.id).answer
        refused = _out_of_order(state, form, target, value, lang) if target.answer_type in TIMED_ANSWERS else None
        if refused:
            work.add_form_note(refused + say(lang, "I've kept {answer} for now.", answer=answer_shown(target, before, lang)))
        elif value == before:
            work.add_form_note(_unchanged(target, before, lang))
        else:
            kept.append((target, value))
    return kept


def _unchanged(spec: FormQuestionSpec, answer: str, lang: str) -> str:
    question = localize(spec.question, lang).rstrip("?？")
    return say(lang, "“{question}” already says {answer}; nothing changed.", question=question, answer=answer_shown(spec, answer, lang))


def _apply_edit(state: ContextState, work: TurnWork, config: ConversationConfig, spec: FormQuestionSpec, value: str) -> ContextState:
    """The changed answer replaces the old one in place; then back to the review. A change that puts two dates out
    of their order is refused, the answers as they were."""
    form = config.form
    assert form is not None
    before = state.finalized(spec.id).answer
    if value == before:  # named, and said as it already is
        work.form_note = _unchanged(spec, before, work.language)
        return _form_next(state.evolve(form_editing=None), work, config, None)
    if spec.answer_type in TIMED_ANSWERS and (refused := _out_of_order(state, form, spec, value, work.language)):
        kept = say(work.language, "I've kept {answer} for now.", answer=answer_shown(spec, before, work.language))
        work.trace.append(f"form answer {spec.id} kept: {value} is out of order")
        return _ask_edit(state, work, form, spec, then(work.language, refused + kept, localize(spec.question, work.language)))
    state = finalize_answer(state, spec, value, turn=work.turn, locale=work.language, form=form).evolve(form_editing=None)
    work.form_changed_question, work.form_changed_from, work.form_changed_to = spec.id, before, value
    work.trace.append(f"form answer {spec.id} changed: {before} -> {value}")
    return _form_next(state, work, config, current_question(state, form))
