"""Ask, then act: may an action even be offered in this turn?

Each rule returns a blocker reason; an action is allowed when it has none. Blockers:

- `too_early`: fewer than `min_history` messages so far (the first response never acts)
- `reply_asks_question`: the reply of this turn asks something (conservative: any "?")
- `awaiting_answer`: the last question has not been answered yet
- `action_flow_open:<flow>`: another action flow (email, calendar...) is under way
- `already_executed`: this action already ran in this conversation
- `hypothetical_situation` / `situation_not_established`: not an active, real situation
- `not_recommended_in_reply`: the action requires the reply to recommend it and it does not
- `missing_slot:<name>`, `step_not_completed:<id>`: state guards declared by the action
- `one_action_per_turn:<action_id>`: a higher-priority action (email before calendar) is
  already allowed this turn; the action the person asked for goes first
- `declined`: the person said they do not want this action ("I don't want an email")
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ._serde import Serializable
from ._text import asks_question, first_match
from .config import ActionSpec
from .negation import negated
from .state import ContextState

ACTIVE, HYPOTHETICAL, UNKNOWN = "active", "hypothetical", "unknown"

_HYPOTHETICAL = {
    "en": re.compile(
        r"\bwhat\s+(?:should|would|do|can|could)\s+(?:i|we|one|a\s+manager|managers?)\s+do\s+(?:if|when)\b|"
        r"\bwhat\s+if\b|\bhypothetical(?:ly)?\b|\bsuppose\b|\bsupposing\b|\bimagine\b|\bin\s+general\b|"
        r"\bgenerally\b|\bin\s+theory\b|\bwhat(?:'s|\s+is)\s+the\s+(?:policy|procedure|best\s+practice|rule)\b|"
        r"\b(?:if|when)\s+(?:an?|any|some)\s+(?:employee|worker|staff|team\s+member|person|someone|colleague)\b|"
        r"\bhow\s+(?:should|do)\s+(?:managers?|you|one)\s+(?:handle|deal\s+with)\b",
        re.IGNORECASE,
    ),
    "zh": re.compile(
        r"如果|假如|假设|万一|要是|一般(?:来说|情况)|通常|理论上|一般怎么|应该怎么处理.*员工"
    ),
    "ru": re.compile(
        r"(?<!\w)(?:если|а\s+что\s+если|гипотетически|в\s+целом|допустим|предположим|обычно)(?!\w)",
        re.IGNORECASE,
    ),
    "es": re.compile(
        r"\bqu[eé]\s+(?:debo|deber[ií]a|hago|hacer)\s+(?:hacer\s+)?si\b|\bsi\s+un[a]?\b|\bhipot[eé]tic|\ben\s+general\b|\bsupongamos\b|\bnormalmente\b",
        re.IGNORECASE,
    ),
}
_ACTIVE = {
    "en": re.compile(
        r"\b(?:my|our|mine)\b|\bi\s+(?:have|manage|supervise)\s+(?:an?\s+)?(?:employee|worker|team|staff|report)|"
        r"\b(?:today|yesterday|this\s+(?:morning|week)|last\s+(?:week|night|shift))\b|"
        r"\b(?:didn'?t|did\s+not|hasn'?t|has\s+not|haven'?t|missed|called\s+(?:in\s+)?sick|no[\s-]showed|"
        r"(?:was|is|keeps\s+being)\s+(?:late|absent|rude)|showed\s+up\s+late|quit|walked\s+out)\b",
        re.IGNORECASE,
    ),
    "zh": re.compile(
        r"我的|我们的|我们|我手下|我团队|我部门|我这边|我员工|今天|昨天|这周|上周|已经|没来|缺勤了|旷工了"
    ),
    "ru": re.compile(
        r"(?<!\w)(?:мой|моя|моё|мои|наш|наша|наши|сегодня|вчера|не\s+пришёл|не\s+пришел|не\s+вышел)(?!\w)",
        re.IGNORECASE,
    ),
    "es": re.compile(
        r"\b(?:mi|mis|nuestro|nuestra|nuestros|nuestras|hoy|ayer|no\s+vino|falt[oó])\b",
        re.IGNORECASE,
    ),
}
# A capitalised name in the middle of a sentence ("... and Tom didn't show up") marks a real case.
_NAME = re.compile(r"(?<=[a-z,]\s)(?!I\b)[A-Z][a-z]{2,}\b")
_SENTENCES = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")


def classify_sentence(sentence: str) -> str:
    """active, hypothetical or unknown for one sentence (a conditional framing wins)."""
    framing = [m for p in _HYPOTHETICAL.values() for m in p.finditer(sentence)]
    if framing and all(negated(sentence, m.start(), m.end()) for m in framing):
        return ACTIVE  # "不是假设", "this isn't hypothetical": a real case, said so
    if framing:
        return HYPOTHETICAL
    if any(p.search(sentence) for p in _ACTIVE.values()) or _NAME.search(sentence):
        return ACTIVE
    return UNKNOWN


def detect_situation(text: str) -> str:
    """active when any sentence describes a real case, else hypothetical when one is conditional."""
    kinds = {classify_sentence(s) for s in _SENTENCES.findall(text) if s.strip()}
    if ACTIVE in kinds:
        return ACTIVE
    if HYPOTHETICAL in kinds:
        return HYPOTHETICAL
    return UNKNOWN


def update_situation(current: str, text: str) -> str:
    """Situation after one more user message: once a real case is described it stays real."""
    found = detect_situation(text)
    if current == ACTIVE or found == ACTIVE:
        return ACTIVE
    if found == HYPOTHETICAL:
        return HYPOTHETICAL
    return current


@dataclass(frozen=True)
class ActionContext(Serializable):
    """The facts ask-then-act looks at for one turn."""

    history_length: int  # messages so far (user + assistant), before this reply
    reply_asks_question: bool | None = (
        None  # None: reply not known yet (checked later by the contract)
    )
    reply_text: str | None = None
    last_question_pending: bool = False  # a question was asked and not answered yet
    open_action_flow: str | None = None
    executed_actions: tuple[str, ...] = ()
    situation: str = UNKNOWN
    slots: tuple[str, ...] = ()  # names of usable slots
    completed_steps: tuple[str, ...] = ()
    language: str = "en"
    preferred_action: str | None = None  # asked for by the person: considered first
    declined_actions: tuple[str, ...] = ()  # refused by the person: never offered
    answers: tuple[tuple[str, str], ...] = ()  # slot values, for the actions the guidance recommends

    @classmethod
    def from_state(
        cls,
        state: ContextState,
        *,
        reply_text: str | None = None,
        reply_asks_question: bool | None = None,
    ) -> ActionContext:
        """Build from the context state (the reply, when known, decides reply_asks_question)."""
        if reply_asks_question is None and reply_text is not None:
            reply_asks_question = asks_question(reply_text)
        return cls(
            history_length=state.message_count,
            reply_asks_question=reply_asks_question,
            reply_text=reply_text,
            last_question_pending=state.last_question is not None
            and not state.last_question_answered,
            open_action_flow=state.open_action_flow,
            executed_actions=state.executed_actions,
            situation=state.situation,
            slots=tuple(state.usable_slots()),
            completed_steps=state.completed_steps,
            language=state.locale,
            preferred_action=state.preferred_action,
            declined_actions=state.declined_actions,
            answers=tuple((name, slot.value) for name, slot in state.slots.items() if slot.usable),
        )


@dataclass(frozen=True)
class ActionDecision(Serializable):
    """Whether one action may be offered this turn, and why not."""

    action_id: str
    allowed: bool
    blockers: tuple[str, ...]


def action_blockers(action: ActionSpec, ctx: ActionContext) -> list[str]:
    """Every reason this action may not be offered now; empty means it may."""
    blockers: list[str] = []
    if ctx.history_length < action.min_history:
        blockers.append("too_early")
    if ctx.reply_asks_question:
        blockers.append("reply_asks_question")
    if ctx.last_question_pending:
        blockers.append("awaiting_answer")
    if ctx.open_action_flow:
        blockers.append(f"action_flow_open:{ctx.open_action_flow}")
    if action.id in ctx.executed_actions:
        blockers.append("already_executed")
    if action.id in ctx.declined_actions:
        blockers.append("declined")
    if action.requires_active_situation and ctx.situation != ACTIVE:
        blockers.append(
            "hypothetical_situation"
            if ctx.situation == HYPOTHETICAL
            else "situation_not_established"
        )
    wants_keywords = (
        action.require_recommendation and ctx.reply_text is not None and action.keywords
    )
    if wants_keywords and not first_match(ctx.reply_text or "", action.keywords, ctx.language):
        blockers.append("not_recommended_in_reply")
    blockers.extend(f"missing_slot:{s}" for s in action.requires_slots if s not in ctx.slots)
    blockers.extend(
        f"step_not_completed:{s}"
        for s in action.requires_completed_steps
        if s not in ctx.completed_steps
    )
    return blockers


def recommended(action: ActionSpec, ctx: ActionContext) -> bool:
    """The guidance recommends this action for what the person told (a call when they have not talked yet)."""
    if not action.recommended_when:
        return False
    answers = dict(ctx.answers)
    return all(answers.get(slot, "").casefold() in {v.casefold() for v in values}
               for slot, values in action.recommended_when.items())


def action_order(actions: Iterable[ActionSpec], ctx: ActionContext) -> list[ActionSpec]:
    """The actions in the order they may be offered: the one the person asked for, then the one the guidance
    recommends, then the plan's priority (email before calendar), which only breaks a tie."""
    return sorted(actions, key=lambda a: (a.id != ctx.preferred_action, not recommended(a, ctx), a.priority))


def evaluate_actions(actions: Iterable[ActionSpec], ctx: ActionContext) -> list[ActionDecision]:
    """Decisions for all actions, in `action_order`: only the first allowed one stays allowed; a refused
    or finished one never holds back the next."""
    decisions: list[ActionDecision] = []
    winner: str | None = None
    for action in action_order(actions, ctx):
        blockers = action_blockers(action, ctx)
        if not blockers and winner is not None:
            blockers = [f"one_action_per_turn:{winner}"]
        if not blockers:
            winner = action.id
        decisions.append(ActionDecision(action.id, not blockers, tuple(blockers)))
    return decisions


def allowed_action(decisions: Sequence[ActionDecision]) -> str | None:
    """The single action that may be offered this turn, if any."""
    return next((d.action_id for d in decisions if d.allowed), None)


def open_action_flow(state: ContextState, action: ActionSpec) -> ContextState:
    """An action's flow started (e.g. the email draft is being written)."""
    return state.evolve(open_action_flow=action.flow)


def close_action_flow(
    state: ContextState, action: ActionSpec | None = None, *, executed: bool = True
) -> ContextState:
    """The open flow ended; when executed, the action can never run again."""
    executed_actions = state.executed_actions
    if executed and action is not None and action.id not in executed_actions:
        executed_actions = executed_actions + (action.id,)
    return state.evolve(open_action_flow=None, executed_actions=executed_actions)


# What no message can lift: an action that already ran is never asked for again (a request refused outright).
_STANDING = ("already_executed",)


def actions_open_to_request(actions: Iterable[ActionSpec], state: ContextState) -> frozenset[str]:
    """The actions a person (or a model on their behalf) may ask for on this turn.

    A request is a wish: it is remembered (the action goes first when it may be offered) but never
    runs anything by itself; ask-then-act decides when the action may be offered once the reply is
    known, and it runs only with the person's consent. Only an action that already ran cannot be
    asked for.
    """
    ctx = ActionContext.from_state(state.evolve(message_count=state.message_count + 1))
    return frozenset(a.id for a in actions
                     if not any(b.startswith(_STANDING) for b in action_blockers(a, ctx)))
