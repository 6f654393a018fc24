"""The rules' reading of a message: routing, meaning, slots, the request served, side questions.

Generator commands (the model's, validated) take precedence where they speak: an explicit
intent or side question, a slot's value, cancelling. The stages write what they found into
the turn's working memory (`TurnWork`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta

from ._serde import FrozenDict
from ._text import (
    asks_for_human,
    asks_question,
    asks_to_cancel,
    asks_to_restart,
    asks_to_skip_check,
    chitchat_kind,
    compile_pattern,
    first_match,
    is_non_answer,
    iter_patterns,
    language_signal,
    localize,
    stated_beside_question,
    unnegated_hits,
    word_at,
)
from .ask_then_act import update_situation
from .catalog import say
from .certainty import CERTAIN, GUESS, LIKELY, time_certainty
from .commands import Command
from .config import ConversationConfig, SlotSpec
from .estimate import asks_for_report, estimate_request
from .fee_questions import amounts_said, asks_amount_right, names_other_one, says_start
from .forms import edit_target, is_correction, names_question, waiting_question, wants_edit
from .intents import (
    CONFIRMATION,
    DISPUTE,
    EXPLAIN,
    HOWTO,
    LOCATE,
    NEW_EVIDENCE,
    DomainIntent,
    IntentResult,
)
from .loop_guard import ProposedAction
from .named_values import Finder, find_named_values
from .names import read_person_name
from .negation import (
    after_correction,
    after_instruction,
    doubt,
    message_parts,
    negation_cue,
    offers_alternatives,
    said_as_more,
    without_lead_words,
    word_swaps,
)
from .plain_words import stay_length
from .procedure import asks_to_switch
from .recognizers.identifiers import places_named
from .recognizers.names import read_names
from .slots import (
    AMOUNTS,
    ExtractContext,
    Extraction,
    call_lookup,
    extract_slot,
    extract_slots,
    has_content,
    identifier_candidates,
    listed_by_details,
    lookup_identifier,
    merge_slots,
    points_at_listed_item,
    resolve_reference,
    validate_slots,
)
from .state import EST_NONE, UNVERIFIED, ContextState
from .timeparse import clock_said, parse_date, says_clock, says_time_of_day, speaks_of_past_stay
from .topics import SideQuestion, detect_topic, pop_all, push_topic, side_answer, submode_for
from .turn_work import (
    ANSWER,
    CANCEL_MEANING,
    CONFIRM,
    DISPUTE_MEANING,
    ESTIMATE,
    EVIDENCE,
    FOLLOW_UP,
    HANDOFF_MEANING,
    NEXT_STEP_MEANING,
    QUESTION_MEANING,
    REPORT,
    REQUEST,
    SIDE_QUESTION,
    UNCLEAR_MEANING,
    Lookups,
    TurnWork,
)

_SIDE_INTENT = {"locate": LOCATE, "explain": EXPLAIN, "howto": HOWTO, "knowledge": EXPLAIN}


def routed_by_commands(work: TurnWork, config: ConversationConfig) -> IntentResult:
    """The router's reading, overridden by an explicit intent or side question command."""
    routed = work.routed
    if (start := work.command("start_intent")) and config.intent(start.intent):
        return replace(routed, intent=start.intent, kind="domain", confidence=1.0, candidates=(start.intent,),
                       ambiguous=False, pattern=None)
    if side := work.command("side_question"):
        return replace(routed, intent=_SIDE_INTENT[side.side_kind], kind="builtin", confidence=1.0, pattern=None)
    clarify = work.command("clarify")
    if clarify is not None and len(asked := [c for c in clarify.candidates if config.intent(c)]) >= 2:
        # two requests fit: asked about, never guessed
        return replace(routed, intent=asked[0], kind="domain", confidence=1.0, candidates=tuple(asked), ambiguous=True, pattern=None)
    return routed


def side_topic_over_request(state: ContextState, work: TurnWork, config: ConversationConfig) -> IntentResult:
    """While a question waits, a question of what a side topic is ("what is a daily cap?" while the order number
    is asked) is that side question, when the request the router read is said only by the topic's words ("cap"
    is the rule's word too): answered, and the question waiting asked again. The rules' reading only."""
    routed = work.routed
    if (routed.kind != "domain" or work.model_read or work.commands or state.pending_clarification is None
            or EXPLAIN not in routed.candidates or not config.side_topics):
        return routed
    topic_words = [m.span() for topic in config.side_topics for _, pattern in iter_patterns(topic.patterns)
                   for m in compile_pattern(pattern).finditer(work.text)]
    if not topic_words:
        return routed
    for intent in (config.intent(name) for name in routed.candidates):
        if intent is None:
            continue
        said = (m.span() for _, pattern in iter_patterns(intent.patterns) for m in compile_pattern(pattern).finditer(work.text))
        if any(not any(s <= start and end <= e for s, e in topic_words) for start, end in said):
            return routed  # "how much is the daily cap?": the request said in its own words too
    work.request_set_aside = routed
    work.trace.append(f"{routed.intent} said only by a side topic's words: a side question")
    return replace(routed, intent=EXPLAIN, kind="builtin", candidates=tuple(c for c in routed.candidates if not config.intent(c)),
                   ambiguous=False, pattern=None)


def _request_named(work: TurnWork, config: ConversationConfig) -> None:
    """The request set aside for a side question is the request after all when the message names one of its
    details ("what's the daily cap at SH-PD-001?")."""
    aside = work.request_set_aside
    intent = config.intent(aside.intent) if aside is not None else None
    if intent is not None and set(work.slots_mentioned) & {*intent.required_slots, *intent.optional_slots}:
        work.routed, work.meaning = aside, REQUEST
        work.trace.append(f"a detail of {intent.name} named: its request")


def cancel_request(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """`cancel` (the model's, or the whole message says so, in the built-in words or the plan's): drop the request
    in progress and its open clarification (facts and answers stay)."""
    said = asks_to_cancel(work.text, work.language) or asks_to_restart(work.text) or _says_plan_phrase(work, config.phrases.cancel)
    if work.command("cancel") is None and (work.model_read or not said):
        return state
    work.trace.append("cancelled: active intent and pending clarification dropped")
    work.cancelled = True
    return state.evolve(active_intent=None, pending_clarification=None, clarify_rounds=0)


def _says_plan_phrase(work: TurnWork, patterns: Mapping[str, Iterable[str]]) -> bool:
    """A phrase the plan adds to the built-in lexicon, said and not negated ("no need to see the vet" asks for none)."""
    return bool(patterns) and bool(unnegated_hits(work.text, patterns, work.language))


def start_turn(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Counters, locale, latest text, situation, and whether the last question got an answer."""
    side = work.routed.is_side_question and work.routed.kind == "builtin"
    answered = state.last_question_answered or (not side and has_content(work.text))
    # keep the locale on bare ids/numbers
    locale = work.language if language_signal(work.text) else state.locale
    work.language = locale
    return state.evolve(
        turn_index=work.turn,
        message_count=state.message_count + 1,
        latest_user_text=work.text,
        locale=locale,
        last_question_answered=answered,
        situation=update_situation(state.situation, work.text),
        complaint=state.complaint
        or (work.text.strip() if config.diagnostic_enabled and has_content(work.text) else None),
    )


def read_meaning(state: ContextState, work: TurnWork, config: ConversationConfig) -> str:
    """What the message is, in the conversation's terms."""
    if work.cancelled:
        return CANCEL_MEANING
    if work.command("human_handoff") is not None or not work.model_read and (
            asks_for_human(work.text) or _says_plan_phrase(work, config.phrases.handoff)):
        work.handoff_requested = True
        work.trace.append("the person asks for a human")
        return HANDOFF_MEANING
    if _asks_what_the_question_means(state, work, config):
        work.trace.append("the person asks what the question waiting means")
        return QUESTION_MEANING
    if (work.routed.kind not in ("builtin", "domain") and config.form is not None and not work.commands
            and _QUESTION_ENDING.search(work.text) and _ASKS_SOMETHING.search(work.text) and not wants_edit(work.text)):
        # "what does our policy say about flexible hours?" while a form question waits asks, it does not answer
        work.routed = replace(work.routed, intent=EXPLAIN, kind="builtin", confidence=max(work.routed.confidence, 0.5))
    if work.routed.kind not in ("builtin", "domain") and not wants_edit(work.text) and _asks_about_side_topic(work.text, config, work.language):
        # "should I give him a written warning?": a question about a topic the plan answers briefly
        work.routed = replace(work.routed, intent=EXPLAIN, kind="builtin", confidence=max(work.routed.confidence, 0.6))
    routed = work.routed
    if (
        config.estimate_enabled
        and state.estimate.status != EST_NONE
        and estimate_request(work.text, work.language)
    ):
        return ESTIMATE
    if config.diagnostic_enabled and _NEXT_STEP.search(work.text):
        return NEXT_STEP_MEANING
    if config.diagnostic_enabled and asks_for_report(work.text, config.diagnostic, work.language):
        return REPORT
    if routed.kind == "domain":
        return REQUEST
    if config.diagnostic_enabled and state.current_step_id and asks_to_skip_check(work.text, work.language):
        return ANSWER  # "I don't own a manometer, can we skip that one?": about the check asked, no side question
    if routed.kind == "builtin":
        if routed.is_side_question and _statement_answering_form(state, work, config):
            return ANSWER  # "...where our accountants can see what is still missing." describes, it does not ask
        if routed.is_side_question:
            if config.diagnostic is not None and state.primary_system and asks_to_switch(
                    work.text, config.diagnostic, state.primary_system, work.language):
                return EVIDENCE  # "different problem now: our water heater won't light. Can we look at that?" turns to it
            return SIDE_QUESTION
        return {NEW_EVIDENCE: EVIDENCE, DISPUTE: DISPUTE_MEANING, CONFIRMATION: CONFIRM}[
            routed.intent
        ]
    if work.command("confirm", "deny") is not None:  # a yes or no the rules did not read ("sounds good", "nah")
        return CONFIRM if work.command("confirm") is not None else DISPUTE_MEANING
    if not has_content(work.text):
        return UNCLEAR_MEANING
    return FOLLOW_UP if routed.follow_up and state.active_intent else ANSWER


def _statement_answering_form(state: ContextState, work: TurnWork, config: ConversationConfig) -> bool:
    """A long statement with no question mark, while a form question waits, is an answer, not a side question."""
    if config.form is None or "?" in work.text or "？" in work.text:
        return False
    if state.finalized_answers and state.current_step_id is None:
        return False  # every question answered: nothing is waiting
    return len(work.text.split()) > 15 or len(re.findall(r"[\u3400-\u9fff]", work.text)) > 30


# "what's the next step?", "what should I check next", "now what?", 下一步做什么, что дальше, ¿y ahora qué?
_NEXT_STEP = re.compile(
    r"\b(?:what'?s|what\s+is|whats|wat'?s|which\s+is)\s+(?:the\s+)?next(?:\s+(?:step|check|test|thing))?\b"
    r"|\bwhat\s+(?:do|should|shall)\s+i\s+(?:check|test|do|look\s+at|measure)\s+next\b|\bnext\s+(?:step|check)\s*\?"
    r"|^\W*(?:ok(?:ay)?,?\s+|so,?\s+)?(?:now\s+what|what\s+now|what\s+next|next)\W*$"
    r"|下一步|接下来(?:做|查|检查|干|要)?(?:什么|啥)|然后呢|现在(?:该|要)?(?:做|查|检查|干)(?:什么|啥)"
    r"|что\s+(?:дальше|теперь|делать\s+дальше|проверить\s+дальше|проверять\s+дальше)|следующ\w+\s+(?:шаг|проверк)\w*"
    r"|(?:cu[aá]l\s+es\s+)?el\s+siguiente\s+paso|(?:y\s+)?ahora\s+qu[eé]|^\W*(?:y\s+)?qu[eé]\s+sigue\W*$|qu[eé]\s+(?:hago|reviso|compruebo)\s+(?:ahora|despu[eé]s)",
    re.IGNORECASE,
)


_A_QUESTION = re.compile(
    r"[?？]\s*$|吗\s*$|^\s*(?:what|how|why|when|who|whose|which|where|should|shall|do|does|is|are|can|could|would|must)\b|"
    r"什么|怎么|是否|要不要|该不该|谁|哪家",
    re.IGNORECASE,
)


# "what does this question mean?", "what do you mean?", "I don't get the question", "这个问题是什么意思", "没懂",
# "что это значит?", "no entiendo la pregunta": about the question put, not a term in it
_WHAT_QUESTION_MEANS = re.compile(
    r"\bwhat\s+(?:does|do|did)\s+(?:this|that|the|your|you(?:r)?)\s*(?:question\s+)?mean\b|\bwhat\s+do\s+you\s+mean\b"
    r"|\bwhat\s+(?:does|is)\s+(?:that|this|it)\s+(?:mean|asking)\b|\bwhat\s+(?:are|were)\s+you\s+asking\b"
    r"|\bwhat\s+(?:is|'s)\s+(?:the|this)\s+question\s+(?:asking|about|mean)|\bwhat\s+do\s+you\s+want\s+to\s+know\b"
    r"|\b(?:i\s+)?(?:don'?t|do\s+not|didn'?t)\s+(?:get|understand|follow)\s+(?:it|this|that|you|the\s+question|this\s+question|what\s+you\s+mean)\b"
    r"|\b(?:explain|rephrase|clarify)\s+(?:the|this|that)\s+question\b|^\W*(?:huh|sorry|pardon)\W*$"
    r"|^\W*(?:这个?|那个?|这道|这)?(?:问题|题)?(?:是)?(?:什么|啥)意思\W*$|(?:没|不)(?:太)?(?:懂|明白)(?:这个?问题|你的意思|你说的|你问的)?\W*$"
    r"|问的是(?:什么|啥)|这(?:个)?问题(?:是)?(?:问|指)(?:什么|啥)"
    r"|(?<!\w)(?:что\s+(?:это\s+)?значит|не\s+понимаю\s+вопрос\w*|не\s+понял\w*\s+вопрос\w*|что\s+имеется\s+в\s+виду)(?!\w)"
    r"|\bqu[eé]\s+(?:significa|quiere\s+decir)\s+(?:la|esta|esa)\s+pregunta\b|\bno\s+entiendo\s+(?:la|esta)\s+pregunta\b"
    r"|\ba\s+qu[eé]\s+te\s+refieres\b",
    re.IGNORECASE,
)


def _asks_what_the_question_means(state: ContextState, work: TurnWork, config: ConversationConfig) -> bool:
    """The message asks what the form question waiting for its answer means (never a term of the plan's side topics)."""
    return (config.form is not None and waiting_question(state, config.form) is not None and state.form_editing is None
            and not work.commands and bool(_WHAT_QUESTION_MEANS.search(work.text)) and not _names_side_topic(work, config))


_QUESTION_ENDING = re.compile(r"[?？]\s*$|吗\s*[?？]?\s*$")
# A message that is a question from its first word ("what does our policy say ...?"), not a request put as one
# ("can you set up a call?") nor an account with a question at its end ("Kevin no-showed today, can you ...?").
_ASKS_SOMETHING = re.compile(
    r"^\s*(?:what|what's|whats|how|why|when|where|who|which|should|shall|do|does|did|is|are|may|must)\b(?!\s+you\s+(?:set|book|draft|send|schedule|write))"
    r"|^[^，,。]*(?:什么|怎么|为什么|是否)[^，,。]*[?？吗]\s*$",
    re.IGNORECASE,
)


def _asks_about_side_topic(text: str, config: ConversationConfig, language: str) -> bool:
    """A question that names one of the plan's side topics ("can I change the occupancy classification"
    asks to change an answer, not what the classification is)."""
    return bool(config.side_topics and _A_QUESTION.search(text)
                and any(first_match(text, topic.patterns, language) for topic in config.side_topics))


def _slot_names(config: ConversationConfig) -> list[str]:
    names = list(config.slots)
    for intent in config.intents:
        names += [n for n in intent.required_slots + intent.optional_slots if n not in names]
    return names


def _stay_end(state: ContextState, entry: datetime | None) -> datetime | None:
    """The end of the stay talked about: the end said, or the start plus the length said."""
    if entry is None:
        return None
    if (until := state.slots.get("until_time")) is not None:
        return _aware(until.value)
    length = state.slots.get("duration_minutes")
    if length is not None and length.value.isdigit():
        return entry + timedelta(minutes=int(length.value))
    return None


def _past_stay_of_another_request(work: TurnWork, config: ConversationConfig, found: dict[str, Extraction]) -> None:
    """A stay told as past beside a request that takes no times ("之前在机场停过两天，应该都交了吧？", "I parked
    there 3 hours last week, do I still owe anything?") is the person's story, not a stay to price next."""
    request = config.intent(work.routed.intent) if work.routed.kind == "domain" else None
    if request is None or not speaks_of_past_stay(work.text):
        return
    used = {*request.required_slots, *request.optional_slots}
    for name in [n for n in found if n not in used and config.slot_spec(n).extractor in _TIME_KINDS]:
        work.trace.append(f"slot {name} not kept: a past stay told beside {request.name}")
        del found[name]


def _only_what_the_correction_names(state: ContextState, work: TurnWork, config: ConversationConfig,
                                    found: dict[str, Extraction]) -> None:
    """A correction that names one answer ("目标改一下，改成：团长每月多赚两千块") changes that answer only: the
    money in the new goal does not overwrite the constraints already given."""
    form = config.form
    after = after_instruction(work.text)
    instructed = after != work.text
    if form is None or not (instructed or is_correction(work.text) or wants_edit(work.text)):
        return
    named = edit_target(state, form, work.text)
    if named is None or not named.slot:
        return
    backs = {q.slot: q for q in form.questions if q.slot}
    for name in [n for n in found if n != named.slot and n in state.slots and config.slot_spec(n).extractor == "text"
                 and not (n in backs and names_question(work.text, backs[n]))]:  # "…, and the users are Y" names its own
        work.trace.append(f"slot {name} kept: the correction names {named.slot}")
        del found[name]
    if config.slot_spec(named.slot).extractor == "text" and instructed and after:
        found[named.slot] = Extraction(value=after, raw=after)  # "set the constraints to: X": all of X


def fill_slots(
    state: ContextState,
    work: TurnWork,
    config: ConversationConfig,
    lookups: Lookups | None,
    *,
    now: datetime,
    timezone: str,
    finders: Iterable[Finder] = (),
) -> ContextState:
    """Extract, resolve references, find named things, merge into memory and validate the new values."""
    names = _slot_names(config)
    if not names:
        return state
    # the time talked about, whatever the plan calls its slot ("visit_time" read by the at_time extractor): a
    # follow-up or a correction ("make it 4pm") changes only what it names, on that day
    known_entry = next((state.slots[n] for n in ("at_time", *names) if n in state.slots and config.slot_spec(n).extractor == "at_time"), None)
    entry = _aware(known_entry.value) if known_entry is not None else None
    ctx = ExtractContext(now=now, timezone=timezone, language=work.language, entry=entry, end=_stay_end(state, entry))
    found = extract_slots(work.text, [config.slot_spec(n) for n in names], ctx)
    found = _after_their_labels(work.text, config, names, found, ctx)
    if any(config.slot_spec(n).extractor == "date" for n in names) and not says_time_of_day(work.text):
        # a plan that asks the day and the time apart: a day alone ("tomorrow") is no time (never midnight)
        found = {n: x for n, x in found.items() if config.slot_spec(n).extractor not in ("at_time", "until_time")}
    found = _on_the_day_said(state, config, names, found, work.text, now, timezone)
    found = _the_asked_detail(state, config, found, work.text)
    found = _in_scope(state, work, config, found)
    if completed := _time_completed(state, work, config, names, ctx, found):  # the answer to the time asked back
        found = {n: e for n, e in found.items() if config.slot_spec(n).extractor not in _TIME_KINDS} | completed
    if work.meaning in (SIDE_QUESTION, QUESTION_MEANING):  # "what do you mean by constraints?" states no constraints
        found = {n: e for n, e in found.items() if config.slot_spec(n).extractor != "text"}
    for name, candidates in state.slot_candidates.items():
        if name not in found and (value := resolve_reference(work.text, candidates)):
            found[name] = Extraction(value=value, raw="reference")
            work.trace.append(f"slot {name} resolved from reference")
    _identifiers_by_what_they_are(work, config, found, lookups or {})
    spans = _identifier_spans(work.text, found, config)
    _drop_pieces_of_identifiers(work, found, spans, config)
    # a car park's code is left to the names: they know the lot it is, and its city ("GS-018")
    _named_values(state, work, names, found, finders,
                  [s for s in spans if config.slot_spec(s[2]).extractor in _IDENTIFIER_EXTRACTORS])
    _place_without_record(work, config, names, finders)
    _listed_item_named(state, work, found)
    for command in work.commands:
        if command.kind in ("set_slot", "correct_slot") and command.slot in names and command.value:
            # the words that said it, when the message has them (a form tells one question's words from another's)
            own = found.get(command.slot)
            said = re.search(re.escape(command.value), work.text, re.IGNORECASE)
            raw = own.raw if own is not None and own.value == command.value else (said.group(0) if said else command.kind)
            found[command.slot] = Extraction(value=command.value, raw=raw)
            commanded = {c.slot for c in work.commands if c.kind in ("set_slot", "correct_slot")}
            for other in [n for n, e in found.items() if n not in commanded and e.raw.casefold() == raw.casefold()]:
                del found[other]  # the same words are one thing: what the generator said they are ("A1001" the order)
    _identifiers_by_lookup(state, work, config, found, lookups or {})
    _amount_asked_about(state, work, config, found, lookups or {})
    _identifier_without_request(state, work, config, found, lookups or {})
    # pieces of the identifiers looked up too ("gz" of "gz-th-2207"); the same words as one are two things, asked about
    _drop_pieces_of_identifiers(work, found, _identifier_spans(work.text, found, config), config, whole=False)
    _one_token_two_things(state, work, config, found, lookups or {})
    state = _the_other_one(state, work, config, found)
    _swapped(state, work, names, config, found, ctx)
    _time_swapped(state, work, names, found)
    _name_corrected(state, work, names, config, found, ctx)
    _recognized(state, work, config, names, found)
    _negated_values(state, work, config, found, ctx, names=names, finders=finders)
    _only_what_the_correction_names(state, work, config, found)
    _past_stay_of_another_request(work, config, found)
    asked_about = _judge_certainty(work, config, found)
    _two_values_offered(work, config, found, ctx)
    state = state.evolve(time_asked_about=asked_about)
    _stay_extended(state, work, found)
    end_kept = _keep_stay_length(state, found, work.text)
    _end_as_sure_as_start(work, found)
    merged, changed = merge_slots(state.slots, found, work.turn)
    if end_kept:  # the end said before is the end of the stay with this start, as if said with it
        merged = FrozenDict({**merged, "until_time": replace(merged["until_time"], source_turn=work.turn)})
    work.slots_corrected = tuple(n for n in changed if n in state.slots)
    merged = validate_slots(merged, changed, lookups, work.turn)
    work.slots_changed = changed
    work.slots_mentioned = tuple(found)
    if changed:
        work.trace.append("slots changed: " + ", ".join(changed))
    return state.evolve(slots=merged)


_TIME_KINDS = ("at_time", "until_time", "clock_time", "duration_minutes")


def _negated_values(state: ContextState, work: TurnWork, config: ConversationConfig, found: dict[str, Extraction],
                    ctx: ExtractContext, *, names: list[str], finders: Iterable[Finder]) -> None:
    """A value said not to be so ("I didn't park overnight", "not the airport lot") is never stored (free text
    keeps its own words: "no budget limit" is a constraint); a thing named in its place ("not changsha, kunming",
    "不是长沙，是昆明") is the value."""
    for name, extraction in list(found.items()):
        # "no 2 hours" corrects: the 2 hours stand; a negation inside a free text is its own words
        if extraction.raw in ("reference", "") or not _said_not(work.text, extraction.raw):
            continue
        del found[name]
        work.trace.append(f"slot {name}: “{extraction.raw}” is negated")
        at = work.text.find(extraction.raw)
        denied = (at, at + len(extraction.raw))
        instead = (_text_instead(work, config, name, denied, ctx) if config.slot_spec(name).extractor == "text"
                   else _named_instead(state, work, name, denied, names, finders, found))
        if instead:
            found[name] = instead
            work.trace.append(f"slot {name}: “{instead.raw}” said in its place")


def _text_instead(work: TurnWork, config: ConversationConfig, name: str, denied: tuple[int, int],
                  ctx: ExtractContext) -> Extraction | None:
    """A free-text value read again from the message without the words said not to be ("司机和调度员用，不是给外部客户用的":
    the users are the drivers and dispatchers, never the customers), not denied itself."""
    rest = work.text[:denied[0]] + " " * (denied[1] - denied[0]) + work.text[denied[1]:]
    again = extract_slot(rest, config.slot_spec(name), ctx)
    if again is not None and (where := rest.find(again.raw)) >= 0 and negation_cue(rest, where, where + len(again.raw)) is None:
        return again
    return None


def _named_instead(state: ContextState, work: TurnWork, name: str, denied: tuple[int, int], names: list[str],
                   finders: Iterable[Finder], found: dict[str, Extraction]) -> Extraction | None:
    """Another thing the message names for the slot, outside the denied words and not denied itself."""
    masked = work.text[:denied[0]] + "#" * (denied[1] - denied[0]) + work.text[denied[1]:]
    kept = {k: v.value for k, v in state.slots.items() if k != name}  # "not green lake, the airport one": in this city
    named = find_named_values(masked, work.language, finders, names=names,
                              stated={**kept, **{k: e.value for k, e in found.items()}},
                              remembered={k: v.value for k, v in state.slots.items()})
    if name not in named.settled:
        return None
    value, raw = named.settled[name]
    at = masked.find(raw)
    if at < 0 or negation_cue(masked, at, at + len(raw)) is not None:
        return None
    return Extraction(value=value, raw=raw)


def _said_not(text: str, words: str) -> bool:
    """Whether these words of the message are said not to be so ("not the airport one"), a bare opening
    "no" aside ("no, changsha": the no answers what came before)."""
    at = text.casefold().find(words.casefold())
    return at >= 0 and negation_cue(text, at, at + len(words)) is not None and not _OPENING_NO.match(text[:at])


_OPENING_NO = re.compile(r"^\W*(?:no|nope|nah|нет|не-а)\W*$", re.IGNORECASE)


def _end_as_sure_as_start(work: TurnWork, found: dict[str, Extraction]) -> None:
    """An end moved with its start (the stay keeps its length) is as sure as the start it follows."""
    start = next((c for c in work.unsure if c.slot == "at_time"), None)
    if start is None or "until_time" not in found or any(c.slot == "until_time" for c in work.unsure):
        return
    work.unsure.append(replace(start, slot="until_time", value=found["until_time"].value))


def _swapped(state: ContextState, work: TurnWork, names: list[str], config: ConversationConfig,
             found: dict[str, Extraction], ctx: ExtractContext) -> None:
    """A value said in place of one kept ("I meant Tobias, not Tim", "是王晓明，不是王小明"): the slot holding the
    old words takes the new ones, read by the slot's own extractor where it has a type."""
    for new, old in word_swaps(work.text):
        for name in names:
            kept = state.slots.get(name)
            at = word_at(kept.value, old) if kept is not None and isinstance(kept.value, str) else None
            if at is None or (name in found and found[name].value != old):
                continue
            spec = config.slot_spec(name)
            if spec.extractor == "text" or spec.recognizer:
                value = kept.value[:at] + new + kept.value[at + len(old):]
            else:
                typed = extract_slots(new, [spec], ctx).get(name)
                value = typed.value if typed is not None else None
            if value and value != kept.value:
                found[name] = Extraction(value=value, raw=new)
                work.slots_replaced.append(name)
                work.trace.append(f"slot {name}: “{old}” replaced by “{new}”")


def _time_swapped(state: ContextState, work: TurnWork, names: list[str], found: dict[str, Extraction]) -> None:
    """A time said in place of one kept ("10:30 not 10", "不是九点四十，是十点四十走"): the stay's start or end that
    holds the old time takes the new one, on its own day and in its own half of the day unless the new words name
    one; the other end stays where it was."""
    for new, old in word_swaps(work.text):
        said, was = clock_said(new), clock_said(old)
        if said is None or was is None:
            continue
        kept_times = {n: at for n in ("at_time", "until_time")
                      if n in names and n in state.slots and (at := _aware(str(state.slots[n].value))) is not None}
        if not any(_same_clock(kept, was) for kept in kept_times.values()) and \
                any(_same_clock(kept, said) for kept in kept_times.values()):
            for other in [n for n in ("at_time", "until_time", "duration_minutes") if n in found]:
                del found[other]  # "10:30 not 10" when 10:30 is what is kept already: it says so again
            name, kept = next((n, k) for n, k in kept_times.items() if _same_clock(k, said))
            found[name] = Extraction(value=kept.isoformat(), raw=new)
            work.trace.append(f"“{new}” is kept already")
            return
        for name, kept in kept_times.items():
            if not _same_clock(kept, was):
                continue
            hour = said[0].hour if said[1] or kept.hour < 12 or said[0].hour >= 12 else said[0].hour + 12
            value = kept.replace(hour=hour, minute=said[0].minute).isoformat()
            for other in [n for n in ("at_time", "until_time", "duration_minutes") if n != name and n in found]:
                del found[other]  # the words put one time in place of another: nothing else is said by them
            found[name] = Extraction(value=value, raw=new)
            work.slots_replaced.append(name)
            work.trace.append(f"slot {name}: “{old}” replaced by “{new}”")
            return


def _same_clock(kept: datetime, said: tuple) -> bool:
    """Whether a kept time is the clock time words say (either half of the day when they name none)."""
    at, names_half = said
    return (kept.hour % 12, kept.minute) == (at.hour % 12, at.minute) and (not names_half or kept.hour == at.hour)


_NAME_AFTER = re.compile(r"^[\W_]*(?P<name>[\u4e00-\u9fff]{2,4}|[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,2})")


def _name_corrected(state: ContextState, work: TurnWork, names: list[str], config: ConversationConfig,
                    found: dict[str, Extraction], ctx: ExtractContext) -> None:
    """A name said right after a correction ("sorry, it's Priya Raman", "名字打错了，是王晓明") replaces the name
    kept, when the slot's recognizer reads it as a name."""
    after = after_correction(work.text)
    if after == work.text:
        return
    lead = _NAME_AFTER.match(without_lead_words(after))
    if lead is None or any(lead.group("name") in e.raw or e.raw in lead.group("name") for n, e in found.items()
                           if config.slot_spec(n).recognizer != "person_name" and e.raw):
        return  # "sorry, it's Tuesday": a day, read as the day
    if parse_date(lead.group("name"), now=ctx.now, timezone=ctx.timezone) is not None:
        return  # "no wait, Friday not Thursday"
    commanded = {c.slot for c in work.commands if c.slot}
    for name in names:
        spec = config.slot_spec(name)
        kept = state.slots.get(name)
        if spec.recognizer != "person_name" or kept is None or name in commanded:
            continue
        value = read_person_name(work.text, lead.group("name"))
        if value and value != kept.value:
            found[name] = Extraction(value=value, raw=lead.group("name"))
            work.slots_replaced.append(name)
            work.trace.append(f"slot {name} corrected by name: {value}")


def _place_without_record(work: TurnWork, config: ConversationConfig, names: Iterable[str], finders: Iterable[Finder]) -> None:
    """A city named that the operator has no record of ("how much in Dali?") is asked about, never passed over
    for a question as if it had not been said, nor answered for another city."""
    if not any(config.slot_spec(n).extractor == "city_code" for n in names):
        return  # checked against the records whoever read the message: it adds no command, it stops a wrong answer
    named = [span for span in places_named(work.text) if not any(finder(span.text, work.language) for finder in finders)]
    if named:
        work.unrecorded_place = named[0].text
        work.trace.append(f"a place with no record: {named[0].text}")


def _recognized(state: ContextState, work: TurnWork, config: ConversationConfig, names: Iterable[str],
                found: dict[str, Extraction]) -> None:
    """A slot's recognizer reads the value its patterns found: a person's whole name ("Wang Lei", not "Wang"),
    or nothing when the words are no name (老是, 新来). A name slot no pattern found, not kept yet, takes the one
    name the names recognizer reads in the message ("priyanka deshmukh missed three shifts"), said back when it
    is only likely, never a guess."""
    commanded = {c.slot for c in work.commands if c.kind in ("set_slot", "correct_slot")}
    if not work.model_read:
        commanded |= _name_recognized(state, work, config, names, found, commanded)
    for name, extraction in list(found.items()):
        if config.slot_spec(name).recognizer != "person_name" or name in commanded or extraction.raw == "reference":
            continue
        value = read_person_name(work.text, extraction.value)
        if value is None:
            del found[name]
            work.trace.append(f"slot {name}: “{extraction.value}” is no name")
            if not work.model_read:  # "…跟同事吵了起来" is no name: the one the names recognizer reads is ("专员刘晨")
                _name_recognized(state, work, config, names, found, commanded)
        elif value != extraction.value:
            found[name] = Extraction(value=value, raw=value if value in work.text else extraction.raw)
            work.trace.append(f"slot {name} read whole: {value}")


def _name_recognized(state: ContextState, work: TurnWork, config: ConversationConfig, names: Iterable[str],
                     found: dict[str, Extraction], commanded: set[str]) -> set[str]:
    """The name slot filled by the names recognizer (read whole already), if any."""
    slots = [n for n in names if config.slot_spec(n).recognizer == "person_name" and n not in found and n not in commanded
             and n not in state.slots]
    if len(slots) != 1:
        return set()
    read = read_names(work.text, work.language)
    said = [span for span in read if span.certainty == CERTAIN] or [span for span in read if span.certainty != GUESS]
    if len(said) != 1:
        return set()  # two people named, or none: the plan's patterns say which is whose
    span = said[0]
    found[slots[0]] = Extraction(value=span.value, raw=span.text)
    work.trace.append(f"slot {slots[0]} read by the names recognizer ({span.certainty}): {span.value}")
    if span.certainty != CERTAIN:
        work.unsure.append(Command("set_slot", slot=slots[0], value=span.value, certainty=span.certainty, words=span.text))
    return {slots[0]}


def _time_completed(state: ContextState, work: TurnWork, config: ConversationConfig, names: Iterable[str],
                    ctx: ExtractContext, found: dict[str, Extraction]) -> dict[str, Extraction]:
    """The answer to a time asked back, for the slot asked about: "tomorrow afternoon" (the start): what time?
    "5pm" is tomorrow at 17:00; "leaving at 6 or 7" (the end): "7pm" is the stay's end, on its day."""
    asked = state.time_asked_about
    if not asked or not says_clock(work.text):
        return {}
    slot, _, words = asked.partition("\n")
    clock = next((config.slot_spec(n) for n in names if config.slot_spec(n).extractor == "at_time"), None)
    if slot not in names or clock is None or config.slot_spec(slot).extractor not in ("at_time", "until_time"):
        return {}  # a length asked back ("how many hours?") is read as lengths are, never as a moment
    read = extract_slot(f"{'' if says_clock(words) else words} {work.text}".strip(), clock, ctx)  # offered times: the answer's own
    if read is None:
        return {}
    value = _aware(read.value)
    if slot != clock.name and ctx.entry is not None:  # an end: on the stay's day, after its start
        value = datetime.combine(ctx.entry.date(), value.timetz())
        value += timedelta(days=1) if value <= ctx.entry else timedelta(0)
    return {slot: Extraction(value=value.isoformat(), raw=read.raw)}


def _judge_certainty(work: TurnWork, config: ConversationConfig, found: dict[str, Extraction]) -> str | None:
    """A time read without certainty is never stored silently (contract 10): a guess ("late afternoon", "6 or
    7") is left out and asked (its words returned, to read the answer with); a likely reading ("from 3 to 6:15",
    "around 3") is used and said back."""
    commanded = {c.slot for c in work.commands if c.kind in ("set_slot", "correct_slot")}
    guessed: list[tuple[str, str]] = []
    for name, extraction in list(found.items()):
        kind = config.slot_spec(name).extractor
        if kind not in _TIME_KINDS or name in commanded or extraction.raw == "reference":
            continue
        certainty, why = time_certainty(work.text, extraction.raw, kind, extraction.value)
        if certainty == CERTAIN:
            continue
        work.unsure.append(Command("set_slot", slot=name, value=extraction.value, certainty=certainty, words=extraction.raw))
        work.trace.append(f"slot {name} read as {certainty} ({why}): {extraction.value}")
        if certainty == GUESS:
            del found[name]
            guessed.append((name, extraction.raw))
    lang = work.language
    if guessed:  # asked now; the other stages may still put their own question after it
        name, raw = guessed[0]
        if config.slot_spec(name).extractor == "duration_minutes":
            work.ask(say(lang, "I couldn't tell how long from “{words}”: how many hours do you mean?", words=raw), "slot")
        else:
            work.ask(say(lang, "I couldn't tell the exact time from “{words}”: what time do you mean?", words=raw), "slot")
        return f"{name}\n{_words_of(work.text, raw)}"  # the slot asked about, and the words to read the answer with
    said = [c for c in (*work.unsure, *work.commands)  # the rules' likely reading, or the generator's, said back
            if c.certainty == LIKELY and c.slot in found]
    likely = [c for c in said if c.slot in ("at_time", "until_time")]
    if likely:
        times = "–".join(_hhmm(c.value or "") for c in likely)
        work.add_notice(say(lang, "I've taken the time as {times}; tell me if you meant another.", times=times))
    for c in said:
        if config.slot_spec(c.slot or "").extractor == "duration_minutes" and (c.value or "").isdigit():
            work.add_notice(say(lang, "I've taken the stay as {length}; tell me if you meant another.",
                                length=stay_length(int(c.value or 0), lang)))
    return None


def _two_values_offered(work: TurnWork, config: ConversationConfig, found: dict[str, Extraction], ctx: ExtractContext) -> None:
    """Two values offered for one identifier ("湘A·3K7P2 or maybe 湘A·3K7B2", "…，也可能是…") is a guess: nothing
    is looked up or kept, the person is asked which (contract 10)."""
    if not found or not (offers_alternatives(work.text) or doubt(work.text)):
        return  # nothing joins two values or doubts one: no second reading to look for
    for name, extraction in list(found.items()):
        spec = config.slot_spec(name)
        at = work.text.find(extraction.raw) if extraction.raw else -1
        if spec.extractor in (*_TIME_KINDS, "text") or at < 0:
            continue
        rest = work.text[at + len(extraction.raw):]
        other = extract_slots(rest, [spec], ctx).get(name)
        if other is None or other.value == extraction.value or other.raw not in rest:
            continue
        between = rest[:rest.find(other.raw)]
        if not (doubt(between) or offers_alternatives(between)):
            continue
        del found[name]
        work.unsure.append(Command("set_slot", slot=name, value=extraction.value, candidates=(extraction.value, other.value),
                                   certainty=GUESS, words=work.text))
        work.trace.append(f"slot {name}: two values offered, {extraction.value} or {other.value}")
        # asked as any two values that fit ("which one: …?"); "the second one" picks next turn
        work.ambiguous_slots[name] = ((extraction.value, extraction.value), (other.value, other.value))
        return


def _words_of(text: str, raw: str) -> str:
    """The words to read an answer with: the extractor's own words when the message has them, else the message."""
    return raw if raw in text else text[:200]


def _hhmm(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).strftime("%H:%M")
    except ValueError:
        return iso


# Identifiers are read whole: a lot code, a city or a name inside one ("SZ-2026" in the order
# "SZ-2026-0312-77", "沪" in the plate "沪A99999") is no lot or city of its own.
_IDENTIFIER_EXTRACTORS = ("order_no", "plate_no")
# A car park's code is read whole too: "SH" in "SH-A01" is no city (the lot's record says which city it is in)
_READ_WHOLE = (*_IDENTIFIER_EXTRACTORS, "lot_code")


# Identifiers a pattern may read as the wrong thing by their shape ("GZ-TH-2207" looks like a lot code).
_LOOKED_UP = ("lot_code", "order_no")
_TIME_EXTRACTORS = ("at_time", "until_time", "duration_minutes", "date")  # words of these are never an identifier


def _identifiers_by_what_they_are(work: TurnWork, config: ConversationConfig, found: dict[str, Extraction],
                                  lookups: Lookups) -> None:
    """An identifier a pattern read as one thing that exists only as another is that other thing: "GZ-TH-2207"
    is a lot code by its shape, but no lot has it and an order does, so it is the order (and "GZ" inside it is
    no city). One that is both, or neither, stays as read (asked about, or said not found)."""
    for name, extraction in list(found.items()):
        kind = config.slot_spec(name).extractor
        if kind not in _LOOKED_UP or name not in lookups or extraction.raw == "reference":
            continue
        if call_lookup(lookups[name], extraction.value, {}) is not False:
            continue  # found as read, or could not be checked
        for other in _slot_names(config):
            if other in found or other not in lookups or config.slot_spec(other).extractor not in _LOOKED_UP:
                continue
            hit = lookup_identifier(lookups[other], [extraction.value], {})
            if hit is not None:
                del found[name]
                found[other] = Extraction(value=hit[0], raw=extraction.value if extraction.value in work.text else extraction.raw)
                work.trace.append(f"{extraction.value} is no {name} but an {other}: read as {other}")
                break


def _identifier_spans(text: str, found: dict[str, Extraction], config: ConversationConfig) -> list[tuple[int, int, str]]:
    spans = []
    for name, extraction in found.items():
        start = text.find(extraction.raw) if extraction.raw else -1
        if config.slot_spec(name).extractor in _READ_WHOLE and start >= 0:
            spans.append((start, start + len(extraction.raw), name))
    return spans


def _drop_pieces_of_identifiers(work: TurnWork, found: dict[str, Extraction], spans: list[tuple[int, int, str]],
                                config: ConversationConfig, *, whole: bool = True) -> None:
    """Drop what was read from inside an identifier (and, with `whole`, from all of its words): a car park's code
    may itself be a piece of an order's ("SZ-2026" of "SZ-2026-0312-77"), never of its own."""
    for name, extraction in list(found.items()):
        if config.slot_spec(name).extractor in _IDENTIFIER_EXTRACTORS or not extraction.raw:
            continue
        size = len(extraction.raw)
        within = [(s, e) for s, e, owner in spans if owner != name]
        starts = [m.start() for m in compile_pattern(re.escape(extraction.raw)).finditer(work.text)]
        if starts and all(any(s <= p and p + size <= e and (whole or size < e - s) for s, e in within) for p in starts):
            del found[name]
            work.trace.append(f"slot {name} dropped: part of an identifier")


def _named_values(state: ContextState, work: TurnWork, names: list[str], found: dict[str, Extraction],
                  finders: Iterable[Finder], spans: list[tuple[int, int, str]] = ()) -> None:
    """Things named in words (a lot, a city): a record's value wins over a pattern's reading of
    the same words; a slot the names leave open (one lot code in two cities) is to be asked."""
    if not finders:
        return
    remembered = {k: v.value for k, v in state.slots.items()}
    text = work.text
    for start, end, _ in spans:  # the words of an identifier name nothing else
        text = text[:start] + "#" * (end - start) + text[end:]
    named = find_named_values(text, work.language, finders, names=names,
                              stated={k: e.value for k, e in found.items()}, remembered=remembered,
                              denied=lambda raw: _said_not(work.text, raw))
    for slot, (value, raw) in named.settled.items():
        found[slot] = Extraction(value=value, raw=raw)
        work.trace.append(f"slot {slot} found by name")
    for slot in named.ambiguous:
        found.pop(slot, None)
        work.trace.append(f"slot {slot} ambiguous: " + ", ".join(v for v, _ in named.ambiguous[slot]))
        # "the airport car park" with an airport lot in two cities: read as a guess between them, asked
        work.unsure.append(Command("set_slot", slot=slot, candidates=tuple(v for v, _ in named.ambiguous[slot]),
                                   certainty=GUESS))
    work.ambiguous_slots = named.ambiguous


def _listed_item_named(state: ContextState, work: TurnWork, found: dict[str, Extraction]) -> None:
    """ "那成都东站那笔呢", "the one at Chengdu East": a listed item (an order of the arrears list) pointed at by
    what the list said of it (its lot, its city). The place named describes the item, it is no new place;
    one fit is that item, several are asked about ("which one do you mean: ...?"), never guessed."""
    for name, candidates in state.slot_candidates.items():
        details = {c: state.candidate_details.get(c) or {} for c in candidates}
        kinds = {k for d in details.values() for k in d}
        pending = state.pending_clarification
        asked = pending is not None and pending.kind == "slot" and name in pending.missing
        if not kinds or not (asked or points_at_listed_item(work.text)):
            continue
        named: dict[str, str | tuple[str, ...]] = {k: e.value for k, e in found.items() if k != name and k in kinds}
        if AMOUNTS in kinds and (amounts := amounts_said(work.text)):
            named[AMOUNTS] = amounts  # "the 12 yuan one": an amount the list showed of it
        # a name that fits two things (one lot code in two cities) still says which listed items it may be
        named.update({k: tuple(v for v, _ in options) for k, options in work.ambiguous_slots.items() if k in kinds and k not in named})
        fits = listed_by_details(candidates, details, named)
        if not fits or (name in found and found[name].value not in fits):
            continue
        work.pointed_at = name
        raw = next((found[k].raw for k in named if k in found), work.text.strip()[:40])
        named.pop(AMOUNTS, None)  # no slot of its own
        for k in named:
            found.pop(k, None)
            work.ambiguous_slots.pop(k, None)
        if name in found:
            work.trace.append(f"slot {name}: the {', '.join(named)} named describe it")
        elif len(fits) == 1:
            found[name] = Extraction(value=fits[0], raw=raw)
            work.trace.append(f"slot {name} resolved from the list by {', '.join(named)}")
        else:
            work.ambiguous_slots[name] = tuple((c, details[c].get("label") or c) for c in fits)
            work.trace.append(f"slot {name}: {len(fits)} listed items fit, asked")


def _the_other_one(state: ContextState, work: TurnWork, config: ConversationConfig, found: dict[str, Extraction]) -> ContextState:
    """ "and at the other car park?", "另一个停车场呢": the lot talked about before this one; with none before,
    the lot is no longer known and is asked (never the same lot priced again as if it were the other)."""
    if not names_other_one(work.text):
        return state
    for name in _slot_names(config):
        if config.slot_spec(name).extractor != "lot_code" or name in found or (current := state.slots.get(name)) is None:
            continue
        if current.previous:
            found[name] = Extraction(value=current.previous[0], raw=work.text.strip()[:40])
            work.trace.append(f"slot {name}: the other one talked about")
        else:
            work.trace.append(f"slot {name}: which other one is not known, asked")
            # no longer usable, still remembered: the lot given next has this one before it
            state = state.evolve(slots={**state.slots, name: replace(current, status=UNVERIFIED, validated_by=None)})
    return state


def _stay_extended(state: ContextState, work: TurnWork, found: dict[str, Extraction]) -> None:
    """ "what if I stay 40 min longer", "再多停半小时": a length said as more than the stay kept is added to it."""
    said = found.get("duration_minutes")
    at = work.text.find(said.raw) if said is not None and said.raw else -1
    if said is None or at < 0 or not said_as_more(work.text, at, at + len(said.raw)) or "at_time" in found:
        return
    length = state.slots.get("duration_minutes")
    start, end = state.slots.get("at_time"), state.slots.get("until_time")
    begun = _aware(str(start.value)) if start is not None else None
    if end is not None and begun is not None and (length is None or end.source_turn > length.source_turn):
        until = _aware(str(end.value))
        kept = int((until - begun).total_seconds() // 60) if until else None
    else:
        kept = int(float(length.value)) if length is not None else None
    if not kept:
        return
    total = kept + int(float(said.value))
    found["duration_minutes"] = Extraction(value=str(total), raw=said.raw)
    if end is not None and begun is not None:
        found["until_time"] = Extraction(value=(begun + timedelta(minutes=total)).isoformat(), raw=said.raw)
    work.trace.append(f"stay extended by {said.value} minutes")


def _keep_stay_length(state: ContextState, found: dict[str, Extraction], text: str = "") -> bool:
    """A stay moved to another start ("and tomorrow?") keeps its length: its end moves with it. An end the person
    said stays where it is when the start is said anew on its day ("停到晚上十点呢" then "不是，我是说从下午两点开始"
    is 14:00-22:00), unless the new start is past it. (An end derived from a length or an example is no slot: it
    moves with the start by itself.)"""
    start, end = found.get("at_time"), state.slots.get("until_time")
    old_start = state.slots.get("at_time")
    length = state.slots.get("duration_minutes")
    if start is None or end is None or old_start is None or "until_time" in found or "duration_minutes" in found:
        return False
    if length is not None and length.source_turn > end.source_turn:
        return False  # the stay is a length said after its end: it moves by itself
    new, before, until = _aware(start.value), _aware(old_start.value), _aware(end.value)
    if new is None or before is None or until is None or new == before:
        return False
    if says_start(text) and new < until and new.astimezone(before.tzinfo).date() == before.date():
        return True  # "no, from 2pm": the start is corrected, the end said stays
    found["until_time"] = Extraction(value=(until + (new - before)).isoformat(), raw=start.raw)
    return False


def _aware(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _identifiers_by_lookup(state: ContextState, work: TurnWork, config: ConversationConfig,
                           found: dict[str, Extraction], lookups: Lookups) -> None:
    """A needed identifier the patterns missed is looked up among the message's tokens.

    Needed: asked for by the pending clarification, or required by the intent the message
    asks for. When the person answers "which order?" with a token no one knows, that token
    is taken so that validation says plainly it was not found.
    """
    pending = state.pending_clarification
    asked = set(pending.missing) if pending is not None and pending.kind == "slot" else set()
    # the request asked for, or each of the requests it may be ("was th kc 5521 charged correctly": a rule or an order?)
    requested = [i for name in (work.routed.candidates if work.routed.ambiguous else (work.routed.intent,))
                 if work.routed.kind == "domain" and (i := config.intent(name)) is not None]
    if not requested and work.meaning == FOLLOW_UP and (active := config.intent(state.active_intent or "")) is not None:
        requested = [active]  # "hmm what about B88888" after a plate's arrears: the plate that request needs
    needed = [n for n in (*sorted(asked), *(n for i in requested for n in i.required_slots)) if n in lookups and n not in found]
    known = {k: v.value for k, v in state.slots.items()}
    # words read by their shape as an identifier no record knows ("GHX-2207" shaped like a lot code, no such lot)
    # take nothing from a needed identifier a record does know (the plate that owes)
    unknown = {n for n, e in found.items() if n in lookups and lookup_identifier(lookups[n], [e.value], known) is None}
    taken = [w for n, e in found.items() if n not in unknown for w in (e.raw, e.value)]
    # never words read as a time or a length: "wait, make that til 10" while the lot is asked changes the end
    read_as_other = [e.raw for n, e in found.items() if config.slot_spec(n).extractor in _TIME_EXTRACTORS]
    for name in dict.fromkeys(needed):
        # the identifier asked for may be the very words that also name a lot ("A1001" is an order
        # and a lot): the answer is read as what was asked
        tokens = [t for t in identifier_candidates(work.text, taken if name not in asked else read_as_other)
                  if not any(r and re.search(rf"(?<![0-9A-Za-z]){re.escape(r)}(?![0-9A-Za-z])", t) for r in read_as_other)]
        hit = lookup_identifier(lookups[name], tokens, known)
        if hit is not None:
            for other in [n for n, e in found.items() if (name in asked or n in unknown)
                          and hit[1].casefold() in (e.raw.casefold(), e.value.casefold())]:
                del found[other]
                work.trace.append(f"slot {other} dropped: the words are the {name} a record knows")
            found[name] = Extraction(value=hit[0], raw=hit[1])
        elif name in asked and len({re.split(r"[\s./]", tok)[-1] for tok in tokens}) == 1:  # one token, however written
            found[name] = Extraction(value=tokens[0], raw=tokens[0])  # validation will say it was not found
        else:
            continue
        taken.append(found[name].raw)
        work.trace.append(f"slot {name} resolved by lookup")


def _identifier_without_request(state: ContextState, work: TurnWork, config: ConversationConfig,
                                 found: dict[str, Extraction], lookups: Lookups) -> None:
    """A message that names no request but an identifier that exists as an order and as nothing else ("can you
    check gz-th-2207", "and 4401556677?") names that order; the request that needs it follows from it. A token that is
    also a lot ("A1001") is left to be asked about."""
    pending = state.pending_clarification
    if (work.routed.kind == "domain" or pending is not None or work.commands or work.meaning in (CANCEL_MEANING, HANDOFF_MEANING)
            or any(config.slot_spec(n).extractor in _IDENTIFIER_EXTRACTORS for n in found)):
        return
    taken = [e.raw for e in found.values()] + [e.value for e in found.values()]
    lots = [n for n in lookups if n in _slot_names(config) and config.slot_spec(n).extractor == "lot_code"]
    for name in _slot_names(config):
        kind = config.slot_spec(name).extractor
        if name not in lookups or kind not in _IDENTIFIER_EXTRACTORS or kind in _BY_SHAPE:
            continue
        hit = lookup_identifier(lookups[name], identifier_candidates(work.text, taken), {})
        if hit is None or any(call_lookup(lookups[lot], hit[1], {}) for lot in lots):
            continue
        found[name] = Extraction(value=hit[0], raw=hit[1])
        work.trace.append(f"slot {name} resolved by lookup (named without a request)")
        return


def _amount_asked_about(state: ContextState, work: TurnWork, config: ConversationConfig,
                        found: dict[str, Extraction], lookups: Lookups) -> None:
    """An identifier with an amount said and asked about ("th_kc_5521 - was the 10 right?", "4401556677 收了我6块
    对不对") is looked up; what it names (an order) tells the request: the one that needs it. Not while a question
    is waiting for its answer, and not when the amount is the identifier itself."""
    pending = state.pending_clarification
    if (work.meaning in (CANCEL_MEANING, HANDOFF_MEANING) or work.command("start_intent") is not None
            or (pending is not None and pending.kind == "slot") or not asks_amount_right(work.text)):
        return
    taken = [e.raw for e in found.values()] + [e.value for e in found.values()]
    for name in _slot_names(config):
        if name not in lookups or config.slot_spec(name).extractor not in _IDENTIFIER_EXTRACTORS or config.slot_spec(name).extractor in _BY_SHAPE:
            continue
        said = found.get(name)
        hit = (said.value, said.raw) if said is not None else lookup_identifier(lookups[name], identifier_candidates(work.text, taken), {})
        if hit is None or not asks_amount_right(work.text.replace(hit[1], " ")):
            continue
        takers = [i.name for i in config.intents if name in i.required_slots]
        if said is None:
            found[name] = Extraction(value=hit[0], raw=hit[1])
            work.trace.append(f"slot {name} resolved by lookup (an amount asked about)")
        if len(takers) == 1 and work.routed.intent != takers[0]:
            work.routed = replace(work.routed, intent=takers[0], kind="domain", confidence=max(work.routed.confidence, 0.6),
                               candidates=(takers[0],), ambiguous=False, pattern=None)
            work.meaning = REQUEST
            work.trace.append(f"an amount asked about with {name}: {takers[0]}")
        return


# A plate is one by its shape (any plate-shaped token is a plate, with or without orders): it tells
# nothing about what else a token may be, so it never makes one token two things.
_BY_SHAPE = ("plate_no",)


def _one_token_two_things(state: ContextState, work: TurnWork, config: ConversationConfig,
                          found: dict[str, Extraction], lookups: Lookups) -> None:
    """One token that is two things ("A1001" is an order and a lot), with nothing to tell which (no
    request in words, no question asked): both are kept and the requests they serve are asked about."""
    if work.routed.ambiguous and work.command("clarify") is not None:  # a generator's clarify: the same words, two slots?
        same = [(a, b) for a in found for b in found if a < b and found[a].raw and found[a].raw.casefold() == found[b].raw.casefold()]
        if same:
            work.notice = _two_things(config, work.language, found[same[0][0]].raw, *same[0])
        return
    pending = state.pending_clarification
    if work.routed.kind == "domain" or (pending is not None and pending.kind == "slot") or work.command("set_slot", "correct_slot"):
        return  # the request, the question asked or the generator's own commands say which it is
    for name, extraction in list(found.items()):
        if config.slot_spec(name).extractor not in _IDENTIFIER_EXTRACTORS and name not in lookups:
            continue
        for other in lookups:
            if other == name or other in found or other not in _slot_names(config) or config.slot_spec(other).extractor in _BY_SHAPE:
                continue
            hit = lookup_identifier(lookups[other], [extraction.raw], {})
            serving = [i.name for i in config.intents if {name, other} & set(i.required_slots)]
            own = [i.name for i in config.intents if name in i.required_slots]
            theirs = [i.name for i in config.intents if other in i.required_slots]
            if hit is None or not own or not theirs or set(own) & set(theirs):
                continue
            found[other] = Extraction(value=hit[0], raw=extraction.raw)
            work.routed = replace(work.routed, intent=own[0], kind="domain", ambiguous=True, candidates=(own[0], theirs[0]),
                               confidence=max(work.routed.confidence, 0.5))
            work.trace.append(f"{extraction.raw} is both {name} and {other}: asked ({', '.join(serving)})")
            work.notice = _two_things(config, work.language, extraction.raw, name, other)
            return


def _two_things(config: ConversationConfig, language: str, raw: str, name: str, other: str) -> str:
    """'“A1001” is both a parking lot code and an order number.'"""
    labels = [localize(config.slot_spec(n).label, language) or n for n in (name, other)]
    if language.startswith("zh"):
        return f"“{raw}”既是{labels[0]}，也是{labels[1]}。"
    return f"“{raw}” is both {_a(labels[0].lower())} and {_a(labels[1].lower())}."


_ORDINALS = {"first": 0, "1st": 0, "第一": 0, "前者": 0, "second": 1, "2nd": 1, "第二": 1, "后者": 1, "latter": 1, "former": 0}


def _picked_request(candidates: tuple[str, ...], work: TurnWork, config: ConversationConfig) -> str | None:
    """The request an answer to "which is it?" picks: by place ("the second one", "后者"), or by the thing its
    required details name ("the order", "the car park", "订单"), when only one fits."""
    lowered = work.text.casefold()
    for word, index in _ORDINALS.items():
        if word in lowered and index < len(candidates):
            return candidates[index]
    words = set(re.findall(r"[a-z]{3,}", lowered))
    pairs = {lowered[i:i + 2] for i in range(len(lowered) - 1) if re.fullmatch(r"[\u4e00-\u9fff]{2}", lowered[i:i + 2])}
    fits = []
    for name in candidates:
        intent = config.intent(name)
        labels = " ".join(localize(config.slot_spec(s).label, lang) for s in intent.required_slots for lang in ("en", "zh")) if intent else ""
        own_words = set(re.findall(r"[a-z]{3,}", labels.casefold())) - {"code", "number", "the"}
        own_pairs = {labels[i:i + 2] for i in range(len(labels) - 1) if re.fullmatch(r"[\u4e00-\u9fff]{2}", labels[i:i + 2])}
        if any(w.startswith(o[:4]) or o.startswith(w[:4]) for w in words for o in own_words if len(w) >= 3) or pairs & own_pairs:
            fits.append(name)
    return fits[0] if len(fits) == 1 else None


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _pick_ambiguous(state: ContextState, work: TurnWork, config: ConversationConfig) -> str | None:
    """Among equally matched domain intents, the single one whose required slots are all valid;
    if several are, the single one whose slot this very message gave (fresh evidence wins)."""
    domain = [config.intent(name) for name in work.routed.candidates if config.intent(name)]
    usable = state.usable_slots()
    complete = [i for i in domain if i and _has_required_slots(i, usable)]
    if len(complete) == 1:
        return complete[0].name
    mentioned = set(work.slots_mentioned)  # given in this message, new or restated
    fresh = [i.name for i in complete if mentioned & set(i.required_slots)]
    return fresh[0] if len(fresh) == 1 else None


def _switched_by_slot(state: ContextState, work: TurnWork, config: ConversationConfig) -> tuple[str, str] | None:
    """A follow-up that gives a detail only another intent uses ("check order SCN-019" while a
    rule was being explained) moves to that intent, when it is the only one and is complete."""
    active = config.intent(state.active_intent)
    if active is None:
        return None
    used = set(active.required_slots) | set(active.optional_slots)
    new = set(work.slots_mentioned) - used
    usable = state.usable_slots()
    takers = [i.name for i in config.intents if i.name != active.name and new & set(i.required_slots)
              and _has_required_slots(i, usable)]
    return (takers[0], "slots") if len(takers) == 1 else None


def _on_the_day_said(state: ContextState, config: ConversationConfig, names: Iterable[str], found: dict[str, Extraction],
                     text: str, now: datetime, timezone: str) -> dict[str, Extraction]:
    """A time said without its day ("ok 2pm then") in a plan that asks the day apart is on the day said (in this
    message or before), never today's by default."""
    days = [n for n in names if config.slot_spec(n).extractor == "date"]
    day = next((found[n].value for n in days if n in found), None) or next((state.slots[n].value for n in days if n in state.slots), None)
    if day is None:
        return found
    moved = dict(found)
    if any(n in found for n in days):  # "can we do Wednesday instead, same time?": the time talked about moves with its day
        for name in names:
            kept = state.slots.get(name)
            if config.slot_spec(name).extractor == "at_time" and name not in found and kept is not None and (at := _aware(kept.value)):
                moved[name] = Extraction(datetime.combine(datetime.fromisoformat(day).date(), at.timetz()).isoformat(), "")
    if parse_date(text, now=now, timezone=timezone) is not None:
        return moved
    for name, extraction in found.items():
        if config.slot_spec(name).extractor == "at_time" and (at := _aware(extraction.value)) is not None:
            on = datetime.combine(datetime.fromisoformat(day).date(), at.timetz())
            moved[name] = Extraction(on.isoformat(), extraction.raw)
    return moved


# Extractors whose value names what it belongs to (an order number, a plate, a car park, an address): it may start
# or switch a request; a day, a time, a number or free text means something only for the request it is said in.
_NAMING_EXTRACTORS = frozenset({"order_no", "plate_no", "lot_code", "city_code", "email"})


def _in_scope(state: ContextState, work: TurnWork, config: ConversationConfig, found: dict[str, Extraction]) -> dict[str, Extraction]:
    """With a request in progress, a generic value fills only its details, those of the request the message asks
    for, the detail asked, a detail no request owns, or one the message names by its label ("the booking
    reference is …"); a weekday said in a pet's story moves no other request's day."""
    active = config.intent(state.active_intent or "")
    if active is None or not found:
        return found
    owned = {n for i in config.intents for n in (*i.required_slots, *i.optional_slots)}
    scope = set(active.required_slots) | set(active.optional_slots)
    said = work.routed if work.routed.kind == "domain" else work.request_set_aside
    if said is not None and (routed := config.intent(said.intent or "")) is not None:
        scope |= set(routed.required_slots) | set(routed.optional_slots)
    if (pending := state.pending_clarification) is not None and pending.kind == "slot":
        scope |= set(pending.missing)
    kept = {}
    for name, extraction in found.items():
        spec = config.slot_spec(name)
        if (name in scope or name not in owned or spec.patterns or spec.extractor in _NAMING_EXTRACTORS
                or _label_said(spec, work.text)):
            kept[name] = extraction
        else:
            work.trace.append(f"slot {name} not of the request in progress: {extraction.raw!r} left")
    return kept


def _label_end(spec: SlotSpec, text: str) -> int | None:
    """Where the slot's label ends in the message, in any of its languages, as words ("day" is not in "Friday")."""
    for label in (label for label in spec.label.values() if label):
        found = compile_pattern(rf"(?<![\w'’]){re.escape(label)}(?![\w'’])" if label.isascii() else re.escape(label)).search(text)
        if found is not None:
            return found.end()
    return None


def _label_said(spec: SlotSpec, text: str) -> bool:
    return _label_end(spec, text) is not None


_CLAUSE_END = re.compile(r"[,.;!?，。；！？]|\s(?:and|but)\s|和|但")


def _after_their_labels(text: str, config: ConversationConfig, names: Iterable[str], found: dict[str, Extraction],
                        ctx: ExtractContext) -> dict[str, Extraction]:
    """A detail named by its label takes the value said after it ("…, and the delivery day is Thursday"), not the
    first value of its kind in the message (Friday, said for the room)."""
    for name in names:
        spec = config.slot_spec(name)
        if not any(" " in label or not label.isascii() and len(label) >= 2 for label in spec.label.values()):
            continue  # a one-word label ("time", "day") is said in passing too often to mark where a value starts
        if (at := _label_end(spec, text)) is None:
            continue
        rest = text[at:]
        clause = rest[:end.start()] if (end := _CLAUSE_END.search(rest)) else rest
        if (said := extract_slots(clause, [spec], ctx).get(name)) is not None:
            found = {**found, name: said}
    return found


def _the_asked_detail(state: ContextState, config: ConversationConfig, found: dict[str, Extraction], text: str) -> dict[str, Extraction]:
    """A short reply to the free-text detail just asked ("What is your pet's name?" "Biscuit") is that detail, as said:
    the plan's patterns read it inside a sentence, the question itself frames a bare answer."""
    pending = state.pending_clarification
    if pending is None or pending.kind != "slot" or not pending.missing or found:
        return found
    name = pending.missing[0]
    said = text.strip(" .!。！")
    if (config.slot_spec(name).extractor != "text" or not said or len(said.split()) > 3 or len(said) > 40 or is_non_answer(said)
            or asks_question(said) or chitchat_kind(said)):
        return found
    return {name: Extraction(said, said)}


def _started_by_slot(state: ContextState, work: TurnWork, config: ConversationConfig) -> tuple[str, str] | None:
    """A first message that names no request but gives what only one request needs ("check order
    SZ-2026-0312-77 please", "苏E 9Z8Y7?") is that request, when its details are all known."""
    usable = state.usable_slots()
    takers = _takers(work, config)
    if len(takers) == 1 and _has_required_slots(config.intent(takers[0]), usable):
        return takers[0], "slots"
    return None


def _takers(work: TurnWork, config: ConversationConfig) -> list[str]:
    """The plan's requests that need one of the details the message names."""
    return [i.name for i in config.intents if set(work.slots_mentioned) & set(i.required_slots)]


def _has_required_slots(intent: DomainIntent, usable: Mapping[str, str]) -> bool:
    return all(name in usable for name in intent.required_slots)


def resolve_intent(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Which domain intent this turn serves: explicit, pending clarification, or follow-up."""
    _request_named(work, config)
    pending = state.pending_clarification
    resolved, source = None, None
    if work.routed.kind == "domain":
        resolved, source = work.routed.intent, "explicit"
        if work.routed.ambiguous:
            resolved = _pick_ambiguous(state, work, config)
            source = "slots" if resolved else None
    elif pending is not None and pending.kind == "intent" and (picked := _picked_request(pending.missing, work, config)):
        resolved, source = picked, "pending_clarification"  # "the order" / "the car park" / "the second one"
    elif (pending is not None and pending.kind == "intent" and len(pending.missing) == 1 and (config.intent(pending.missing[0]) is not None)
          and (work.routed.intent == CONFIRMATION and work.routed.confirmation_value == "accept"
               or set(work.slots_mentioned) & set(config.intent(pending.missing[0]).required_slots))):
        # "yes" to "do you want to book a visit?", or the next of its details: that request
        resolved, source = pending.missing[0], "pending_clarification"
    elif (
        pending is not None
        and pending.kind == "slot"
        and work.meaning in (ANSWER, CONFIRM, FOLLOW_UP, UNCLEAR_MEANING)
    ):
        resolved, source = pending.intent, "pending_clarification"
    elif state.active_intent and (
        work.meaning == FOLLOW_UP
        # a new value for the request in progress, however it is phrased: an answer, a correction
        # ("不对，…"), or words that read like evidence ("我其实是下午五点才开走的")
        or (work.meaning not in (SIDE_QUESTION, REQUEST) and work.slots_changed)
        or _asks_about_request(state, work, config)
    ):
        if work.meaning == SIDE_QUESTION:
            work.meaning = FOLLOW_UP
            work.trace.append("side question about the request in progress: a follow-up")
        resolved, source = _switched_by_slot(state, work, config) or (state.active_intent, "follow_up")
    elif not state.active_intent and work.meaning != SIDE_QUESTION and work.slots_mentioned:
        resolved, source = _started_by_slot(state, work, config) or (None, None)
        if resolved is None:  # what only one request needs, with its other details still unsaid: asked, never assumed
            takers = _takers(work, config)
            work.partial_request = takers[0] if len(takers) == 1 else None
    elif (work.meaning == SIDE_QUESTION and work.routed.intent == EXPLAIN and not work.command("side_question")
          and not _names_side_topic(work, config) and (started := _started_by_slot(state, work, config))):
        # "explain the Xuhui lot 1 rule": what the request needs is named, so it is that request, not a side question
        resolved, source = started
        work.meaning = REQUEST
    if work.pointed_at and source != "explicit" and (taker := _taker_of_pointed(resolved or state.active_intent, work, config)):
        # "鼓浪屿码头那笔呢" after the arrears list: an order of the list is pointed at, so it is that order's request
        resolved, source = taker, "slots"
    work.resolved_intent = resolved
    work.intent_source = source
    work.intent_started = resolved is not None and resolved != state.active_intent  # a new request, however read
    if resolved:
        work.trace.append(f"intent {resolved} ({source})")
        _another_request_said(work, config, resolved)
        return state.evolve(active_intent=resolved)
    return state


def _another_request_said(work: TurnWork, config: ConversationConfig, resolved: str) -> None:
    """A second request said in another part of the message ("verify order … and also tell me if … owes
    anything", "帮我查一下…有没有欠费，另外…晚上是怎么收费的？") is never dropped without a word: this turn serves one,
    and the reply says which other one was heard, to be asked next."""
    if work.model_read or work.routed.kind != "domain":
        return
    chosen = config.intent(resolved)
    parts = message_parts(work.text, at_contrasts=False)
    if chosen is None or len(parts) < 2:
        return
    own = {i for i, part in enumerate(parts) if first_match(part, chosen.patterns, work.language)}
    for name in work.routed.candidates:
        other = config.intent(name)
        if other is None or name == resolved:
            continue
        said = [i for i, part in enumerate(parts) if i not in own and first_match(part, other.patterns, work.language)]
        if said and own:
            work.add_notice(say(work.language, "You also asked me to {task}: ask me that next and I'll do it.",
                                task=localize(other.label, work.language)))
            work.trace.append(f"another request said beside it: {name}")
            return


def _taker_of_pointed(current: str | None, work: TurnWork, config: ConversationConfig) -> str | None:
    """The one request that needs the listed item pointed at, when the current one does not use it."""
    intent = config.intent(current)
    if intent is not None and work.pointed_at in (*intent.required_slots, *intent.optional_slots):
        return None
    takers = [i.name for i in config.intents if work.pointed_at in i.required_slots]
    return takers[0] if len(takers) == 1 else None


def _names_side_topic(work: TurnWork, config: ConversationConfig) -> bool:
    """The message names one of the plan's side topics ("who runs the Tianhe car park?" asks about the operator,
    not the lot's prices): a lot named in it does not make it that lot's request."""
    return any(first_match(work.text, topic.patterns, work.language) for topic in config.side_topics)


def _asks_about_request(state: ContextState, work: TurnWork, config: ConversationConfig) -> bool:
    """A question that changes a detail of the request in progress ("what is it on Sunday?", "what's it like
    at Guanqian?") is about that request, not a side question, unless it names one of the plan's side topics
    or a generator said it is one."""
    if work.meaning != SIDE_QUESTION or work.command("side_question") is not None:
        return False
    active = config.intent(state.active_intent)
    if active is None or not set(work.slots_changed) & {*active.required_slots, *active.optional_slots}:
        return False
    return not _names_side_topic(work, config)


def track_topic(state: ContextState, work: TurnWork, config: ConversationConfig) -> ContextState:
    """Push a side question (answered briefly); any other message returns to the interrupted step."""
    if work.meaning != SIDE_QUESTION:
        state, returned = pop_all(state)
        work.returned_to_step = returned
        return state
    # the system being diagnosed answers first: its "igniter" before the water heater's
    topics = sorted(config.side_topics, key=lambda topic: topic.system not in (None, state.primary_system))
    # "cap reads 31 µF. where's the evaporator coil?": the topic is the asking sentence's, not the statement's
    # (when that sentence names one; "the compressor hums. how do I test it?" is about the compressor)
    beside = stated_beside_question(work.text)
    asked = beside[1] if beside is not None and any(first_match(beside[1], t.patterns, work.language) for t in topics) \
        else work.text
    topic = detect_topic(asked, work.routed.intent, topics, work.language, state.topic_stack)
    submode = submode_for(work.routed.intent, config.modes.submodes)
    key = f"side:{topic}:{submode}"
    last = state.cooldowns.get(key)
    repeat = last is not None and state.turn_index - last <= config.loop_guard.topic_cooldown_turns
    return_step = state.current_step_id
    state = push_topic(state, topic=topic, submode=submode, return_step_id=return_step, turn=work.turn)
    answer = side_answer(topic, submode, config.side_topics, work.language)
    work.side_question = SideQuestion( topic, submode, answer, state.topic_stack[0].return_step_id, repeat )
    work.reply_action = "side_answer"
    work.action = ProposedAction("side_answer", step_id=return_step, topic=key)
    work.trace.append(f"side question {topic} ({submode}) pushed")
    return state
