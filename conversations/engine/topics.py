"""Topic stack: a side question pushes a subtopic, answered briefly; the next real answer
returns the conversation to the step it interrupted."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ._serde import Serializable
from ._text import first_match, localize, slugify
from .config import SideTopic
from .intents import BUILTIN_PATTERNS, SUBMODE_FOR_INTENT
from .state import ContextState, TopicEntry
from .typos import NearWords, latin_words

MAX_STACK_DEPTH = 3
_PRONOUN = re.compile(
    r"^(?:it|this|that|they|them|these|those|one|there|это|его|её|он|она|eso|esto|este|esta|lo|la|它|这个|那个|这|那)?$",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"\b(?:the|a|an|is|are|do|does|i|we|you|me|my|can|to|of|exactly|located|find|check|test|measure|"
    r"verify|please|located|on|in|this|rv|unit)\b|[?？!！.,。，]",
    re.IGNORECASE,
)
_ZH_FILLER = re.compile(
    r"(?:请问|这个|那个|一下|我|的|吗|呢|啊|在哪里|在哪儿|在哪|哪里|是什么|什么是|怎么|如何|检查|测量|位置|？|\?)"
)


@dataclass(frozen=True)
class SideQuestion(Serializable):
    """A side question this turn: its topic, submode, brief answer and where to return."""

    topic: str
    submode: str
    answer: str | None
    return_step_id: str | None
    repeat: bool = False  # the same side question was answered within the cool-down


def detect_topic(
    text: str,
    intent: str,
    topics: Iterable[SideTopic],
    language: str,
    stack: tuple[TopicEntry, ...],
) -> str:
    """The topic of a side question: a declared topic, else the words after the question phrase."""
    topics = tuple(topics)
    for topic in topics:
        if first_match(text, topic.patterns, language):
            return topic.id
    if (slipped := _topic_by_slip(text, topics)) is not None:
        return slipped
    hit = first_match(text, BUILTIN_PATTERNS.get(intent, {}), language)
    rest = text[hit[2].end() :] if hit else text
    rest = _ZH_FILLER.sub("", text) if language == "zh" else _FILLER.sub(" ", rest)
    slug = slugify(rest)
    if not slug or _PRONOUN.match(slug):
        # "how do I test it?" is about whatever the last side question was about.
        return stack[-1].topic if stack else "general"
    return slug


def _topic_by_slip(text: str, topics: tuple[SideTopic, ...]) -> str | None:
    """A topic named with a typo ("capaciter", "regulater"): a word of the message a slip of a word of
    the topic's id (the first topic declared wins a word two share)."""
    index = NearWords.of((word, topic.id) for topic in topics for word in topic.id.split("_"))
    for match in latin_words(text):
        for known in index.slips_of(match.group(0)):
            return next(t.id for t in topics if t.id in index.names[known])
    return None


def side_answer(
    topic_id: str, submode: str, topics: Iterable[SideTopic], locale: str
) -> str | None:
    """The configured brief answer for a topic and submode, if any."""
    for topic in topics:
        if topic.id == topic_id:
            text = topic.answers.get(submode)
            return localize(text, locale) if text else None
    return None


def push_topic(
    state: ContextState, *, topic: str, submode: str, return_step_id: str | None, turn: int
) -> ContextState:
    """Push a side question; the same topic on top is updated in place, depth is capped."""
    stack = list(state.topic_stack)
    if stack and stack[-1].topic == topic:
        return_step_id = stack[-1].return_step_id
        stack.pop()
    if stack:
        return_step_id = stack[
            0
        ].return_step_id  # always return to the step the first side question interrupted
    stack.append(TopicEntry(topic=topic, submode=submode, return_step_id=return_step_id, turn=turn))
    return state.evolve(topic_stack=tuple(stack[-MAX_STACK_DEPTH:]), submode=submode)


def pop_all(state: ContextState) -> tuple[ContextState, str | None]:
    """Leave every side topic; return the new state and the step to resume (if any)."""
    if not state.topic_stack:
        return state, None
    return_step = state.topic_stack[0].return_step_id
    return state.evolve(topic_stack=(), submode="main"), return_step


def submode_for(intent: str, enabled: Iterable[str]) -> str:
    """The submode a side-question intent maps to, if the plan enables it."""
    submode = SUBMODE_FOR_INTENT.get(intent, "main")
    return submode if submode in tuple(enabled) else "main"
