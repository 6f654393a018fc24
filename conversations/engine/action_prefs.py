"""What the person says about the actions themselves (the manager assistant's email / call): which one they
want, which one they refuse, and when the call should be.

"I don't want an email, please set up a call with her on Thursday at 2pm" refuses the email,
asks for the call and gives its day and time; "不要发邮件，帮我约她周四下午两点通个电话" the same.
"no, Friday not Thursday" / "改到周五" then moves the call, keeping its time; "make it 3pm" keeps
its day. The preference changes what ask-then-act may offer (`ask_then_act.evaluate_actions`):
a refused action is blocked, a wanted one goes before the others. Whether it may run at all is
still ask-then-act's call, and it runs only with the person's consent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from ._text import localize
from .ask_then_act import ActionContext, evaluate_actions
from .catalog import say, say_in, say_n
from .certainty import CERTAIN, GUESS, time_certainty, unsure_words
from .commands import Command
from .config import ACTION_SLOTS, ActionSpec, ConversationConfig, unmet_groups
from .lexicon import entry, phrases, words_of
from .negation import (
    after_correction,
    doubt,
    may_negate,
    negated,
    negation_cue,
    opens_a_request,
    tells_lateness,
)
from .plain_words import upper_first
from .state import VALID, ContextState, SlotValue, with_key
from .timeparse import _date_part, _time_of_day, names_period, without_refused
from .turn_work import NOT_AN_ANSWER, TurnWork

# The words that name an action, by its flow (the manager assistant plan's flows).
_NOUNS = {
    "email": {
        "en": r"e-?mails?|(?:a\s+)?(?:letter|note|message)\s+in\s+writing|in\s+writing",
        "zh": r"邮件|电邮|e-?mail|书面通知",
    },
    "calendar": {
        "en": r"(?:phone\s+|video\s+|zoom\s+|teams\s+|quick\s+|short\s+)?calls?|(?:by\s+)?phone|meeting|"
              r"one[\s-]on[\s-]one|1[:-]1|1[\s-]on[\s-]1|check[\s-]in|sit[\s-]down",
        "zh": r"电话|通话|会议|开个会|开会|会面|一对一|约(?:他|她|他们|她们)(?!吃|喝|玩)|约个?时间",
    },
}
# Talking itself ("talk to him on Friday at 3", "聊聊") is a call asked for when the concierge is asked to set it
# up, a time is named for it, or it is preferred to another action ("I'd rather talk to her"); in person ("face to
# face", "当面谈") it is what the person will do themselves, never the call
_TALK = {
    "en": r"(?:talk|speak|chat)\s+(?:to|with)\s+(?:him|her|them)|have\s+a\s+(?:word|chat)\s+with",
    "zh": r"谈一谈|谈一下|谈谈|聊一聊|聊一下|聊聊|(?:跟|和|与)(?:她|他|他们)(?:当面)?(?:谈|聊)",
}
_IN_PERSON = {
    "en": re.compile(r"\b(?:face[\s-]to[\s-]face|in\s+person|in\s+the\s+office|when\s+(?:she|he|they)(?:'s|'re|\s+is|\s+are)\s+back)\b",
                     re.IGNORECASE),
    "zh": re.compile(r"当面|面谈|见面|面对面|等她回来|等他回来"),
}
_PREFERRED = {"en": re.compile(r"\b(?:rather|prefer\w*|instead)\b", re.IGNORECASE), "zh": re.compile(r"更想|宁愿|宁可|还是|改成|换成")}
_ASKS_CONCIERGE = {
    "en": re.compile(r"\b(?:can|could|would|will)\s+you\b|\bplease\b|\b(?:set\s+up|setup|schedule|book|arrange|organi[sz]e|"
                     r"put\s+\w+\s+in|invite|send\s+(?:an?\s+)?invit\w*|let'?s)\b", re.IGNORECASE),
    "zh": re.compile(r"帮我|帮忙|请(?!病?假)|安排|约|预约|定个|订个"),
}
# A day or a clock time said for something to come ("Monday 10:15", "tomorrow", "周五下午", "明天三点")
_WHEN_NAMED = {
    "en": re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b|\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\b"
                     r"|\b(?:today|tonight|tomorrow|next\s+week)\b", re.IGNORECASE),
    "zh": re.compile(r"[周礼拜][一二三四五六日天]|星期[一二三四五六日天]|今天|明天|后天|下周|\d+点|[一二两三四五六七八九十]+点"),
}
_TIME_NAMED = {"en": re.compile(r"\b(?:at|on)\s+\d|\b\d{1,2}\s*(?:am|pm)\b", re.IGNORECASE),
               "zh": re.compile(r"\d+点|[一二两三四五六七八九十]+点")}
# Words that report what someone else said or will do ("she said she'd call back", "她说晚点回电话") or hold a
# wish for later ("in case we need it", "万一要用"): no request of the person's
_NOT_ASKED = {
    "en": re.compile(r"\b(?:she|he|they)\s+(?:said|says|told|promised|will|'ll|would|'d)\b|\b(?:she|he|they)'(?:ll|d)\b"
                     r"|\bin\s+case\b|\bif\s+(?:we|i|you)\s+(?:ever\s+)?need\b|\bjust\s+so\s+you\s+have\b", re.IGNORECASE),
    "zh": re.compile(r"她说|他说|他们说|她答应|他答应|她会|他会|万一|以防|备用|如果需要|需要的话"),
}
# "no call no show" names the absence, never the action; so does what someone did not do ("she didn't call",
# "he never emailed", "did not even phone"): a past event, neither a wish nor a refusal.
_NOT_AN_ACTION = re.compile(
    r"no[\s-]*call[\s-]*(?:no|and)?[\s-]*show|无故缺勤"
    r"|\b(?:didn'?t|did\s+not|never|hasn'?t|has\s+not|hadn'?t|had\s+not|doesn'?t|does\s+not|wasn'?t\s+able\s+to|couldn'?t|could\s+not)"
    r"\s+(?:even\s+|bother\s+to\s+|try\s+to\s+)?(?:call|phone|ring|e-?mail|text|message|reply|answer|pick\s+up)\b",
    re.IGNORECASE,
)
# Refusing: a negation just before the action's noun, in the same clause.
_DECLINE = {
    "en": re.compile(
        r"(?:\b(?:don'?t|do\s+not|doesn'?t|won'?t|wouldn'?t|not|no|never|without|skip|instead\s+of|rather\s+than|than|"
        r"rather\s+not|no\s+need\s+(?:for|to)|not\s+(?:really\s+)?(?:want|need))\b)"
        r"(?:\s+(?:\w+\s+){0,3}?)?(?:an?\s+|the\s+|any\s+|more\s+)?$",
        re.IGNORECASE,
    ),
    "zh": re.compile(r"(?:与其|不要|不用|不想|不需要|无需|不必|别|先不|不发|不写|不打|不开|不约|不是)[^，,。；;！!]{0,4}$"),
}
# "prefer a call over an email": 'over' refuses only after a preference ("over the phone" is a way to talk)
_OVER = re.compile(r"\b(?:prefer\w*|rather|better)\b.*\bover\s+(?:\w+\s+){0,2}?(?:an?\s+|the\s+)?$", re.IGNORECASE)
# Asking for it: a request in the clause, or the noun nearly alone ("a call, please").
_WANT = {
    "en": re.compile(
        r"\b(?:please|pls|set\s+up|setup|schedule|book|arrange|organi[sz]e|plan|put|want|wanna|would\s+like|'d\s+like|"
        r"like\s+to|prefer|rather|let'?s|let\s+us|can\s+you|could\s+you|can\s+we|could\s+we|go\s+(?:with|for)|instead|"
        r"better|draft|write|send|make|need|maybe|perhaps|how\s+about|what\s+about)\b",
        re.IGNORECASE,
    ),
    "zh": re.compile(r"帮我|帮忙|请(?!假)|给我|安排|约|想|希望|还是|改成|换成|改为|打个|通个|开个|预约|定个|订个|发个|发一封|写一封|起草|来个|(?<![不需])要(?!求)"),
}
# a need refused after its noun ("邮件和电话都不需要", "a call isn't needed")
_NEEDED = {"en": re.compile(r"\bneed(?:ed)?\b|\bnecessary\b|\bneither\b|\bthanks\b|\bthank\s+you\b", re.IGNORECASE), "zh": re.compile(r"需要|用了|不用|不要")}
_POSSESSED = re.compile(r"\b(?:her|his|their|your|my)\s+(?:work\s+|private\s+|personal\s+)?$|(?:她的|他的)$", re.IGNORECASE)
_CLAUSE = re.compile(r"[^,，.。;；!！?？\n]+|[,，.。;；!！?？\n]")
_BUT = re.compile(r"\bbut\b|\band\b|而是|但是|可是", re.IGNORECASE)


# the new wish replaces the earlier one rather than following it
_SWITCH = {"en": re.compile(r"\b(?:instead|rather|switch|change\s+(?:it|that)?\s*to|actually|forget\s+the|scrap\s+the|not\s+the)\b", re.IGNORECASE),
           "zh": re.compile(r"改成|换成|改为|还是|算了|不要|不用|别")}
_LATER_IN_DAY = re.compile(r"\b(?:afternoon|evening|tonight|pm)\b|下午|晚上|傍晚", re.IGNORECASE)
_BARE_HOUR = re.compile(r"\bat\s+(\d{1,2})(?::(\d{2}))?\b(?!\s*(?:%|percent|people|times|minutes|hours))", re.IGNORECASE)


@dataclass(frozen=True)
class ActionRequest:
    """What one message says about the actions: wanted (an action id), refused, when, how long, to whom."""

    wanted: str | None = None
    declined: tuple[str, ...] = ()
    day: str | None = None  # YYYY-MM-DD, the day named for the call
    at: str | None = None  # HH:MM, the time named for the call
    minutes: str | None = None  # the call's length in minutes
    address: str | None = None  # the email address the draft goes to

    @property
    def empty(self) -> bool:
        return not (self.wanted or self.declined or self.day or self.at or self.minutes or self.address)


_ADDRESS = re.compile(r"(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,24})(?![A-Za-z0-9-])")
_ZH_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_LENGTH = {
    "en": re.compile(r"\b(?:(?P<n>\d{1,3})\s*(?:-\s*)?(?:min(?:ute)?s?|mins?)\b|(?P<half>half\s+an?\s+hour|(?:a\s+)?half[\s-]+hour|30\s*-?\s*min)"
                     r"|(?P<hh>an?\s+hour\s+and\s+a\s+half|1\.5\s*h(?:ou)?rs?|90\s*min)|(?P<h>(?P<hn>an?|one|two|\d)\s+hours?\b))",
                     re.IGNORECASE),
    "zh": re.compile(r"(?P<n>\d{1,3}|[一两二三四五六七八九十]{1,3})\s*分钟|(?P<half>半(?:个)?小时)|(?P<hh>一个半小时)|(?P<h>(?P<hn>一|两|二|\d)个?(?:小时|钟头))"),
}


def _zh_number(text: str) -> int:
    """一 .. 九十九 as a number ("四十五" is 45)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_ZH_NUM.get(tens, 1) if tens else 1) * 10 + (_ZH_NUM.get(ones, 0) if ones else 0)
    return _ZH_NUM.get(text, 0)


def read_length(text: str, language: str) -> str | None:
    """A call's length said in the message, in minutes ("45 minutes", "half an hour", "一个小时", "四十五分钟")."""
    lang = _lang(language)
    said = without_refused(text, lang)
    # "showing up 30-40 minutes late" tells of lateness, "shouldn't be 40 minutes" refuses: neither is the call's length
    match = next((m for m in _LENGTH[lang].finditer(said) if not tells_lateness(said, m.start(), m.end())
                  and not negated(said, m.start(), m.end())), None)
    if match is None:
        return None
    if match.group("hh"):
        minutes = 90
    elif match.group("half"):
        minutes = 30
    elif match.group("h"):
        count = match.group("hn").lower()
        minutes = 60 * ({"a": 1, "an": 1, "one": 1, "two": 2, "一": 1, "两": 2, "二": 2}.get(count) or int(count))
    else:
        minutes = _zh_number(match.group("n"))
    return str(minutes) if 5 <= minutes <= 240 else None


def _lang(language: str) -> str:
    return "zh" if language.lower().startswith("zh") else "en"


def _clauses(text: str) -> list[str]:
    """Clauses of a message: punctuation and 'but' / '而是' start a new one."""
    out: list[str] = []
    for piece in _CLAUSE.findall(text):
        if piece.strip() and not re.fullmatch(r"[,，.。;；!！?？\n]", piece):
            out += [p for p in _BUT.split(piece) if p.strip()]
    return out


_DONE = {"en": re.compile(r"\b(?:called|tried|already|did|texted|emailed|missed|had|was|were|went)\b", re.IGNORECASE),
         "zh": re.compile(r"过|了|已经|没接|不接|没有|没")}


def _alone(clause: str, match: re.Match[str], lang: str) -> bool:
    """The noun nearly alone ("a call, please", "电话吧"), not something already done ("打过两次电话")."""
    rest = len(clause.strip()) - len(match.group(0))
    return rest <= (3 if lang == "zh" else 12) and not _DONE[lang].search(clause)


def read_actions(text: str, language: str, actions: Sequence[ActionSpec]) -> tuple[str | None, tuple[str, ...]]:
    """(the action asked for, the actions refused) in a message."""
    lang = _lang(language)
    cleaned = _ADDRESS.sub(" ", _NOT_AN_ACTION.sub(" ", text))  # an address's dots end no clause
    asked: list[str] = []
    declined: list[str] = []
    for clause in _clauses(cleaned):
        reported = _NOT_ASKED[lang].search(clause) is not None
        for action in actions:
            nouns = _NOUNS.get(action.flow, {}).get(lang)
            if not nouns:
                continue
            talk = _TALK[lang] if action.flow == "calendar" else None
            words = f"{nouns}|{talk}" if talk else nouns
            bounded = rf"(?<![\w-])(?:{words})(?!\w)" if lang == "en" else words
            for match in re.finditer(bounded, clause, re.IGNORECASE):
                before = clause[:match.start()]
                refused = _DECLINE[lang].search(before) or (lang == "en" and _OVER.search(before))
                cue = None if refused else negation_cue(clause, match.start(), match.end())
                if cue and cue.casefold() not in before.casefold() and not _NEEDED[lang].search(cue):
                    cue = None  # a cue after the noun that says no wish ("an email is fine")
                if cue:
                    # in a negation's scope: refused when the clause says a wish ("I don't want an email or a call",
                    # "邮件和电话都不需要"), else a fact of the case ("nothing in writing"), neither asked nor refused
                    if not (_WANT[lang].search(clause) or _NEEDED[lang].search(clause)):
                        continue
                    refused = True
                if refused:
                    if action.id not in declined:
                        declined.append(action.id)
                elif reported or _POSSESSED.search(before):  # "her email's l.moreau@…" is her address, no email asked for
                    continue
                elif talk and re.fullmatch(talk, match.group(0), re.IGNORECASE):
                    # "I'd rather talk to her face to face than email", "帮我约他当面谈谈", "talk to him on friday at 3"
                    if _DONE[lang].search(clause):
                        continue  # "我今天上午已经当面跟她谈过了": a talk that happened
                    if _PREFERRED[lang].search(text) or _ASKS_CONCIERGE[lang].search(text) \
                            or _TIME_NAMED[lang].search(text) and not _IN_PERSON[lang].search(clause):
                        asked.append(action.id)
                elif _WANT[lang].search(clause) or _alone(clause, match, lang) or (
                        _WHEN_NAMED[lang].search(clause) and not _DONE[lang].search(clause)
                        and opens_a_request(re.sub(r"(?i)\b(?:a|an|the)\b", " ", before))):
                    # "Call with him Monday 10:15": a call said first, with its day or time, is one asked for ("he
                    # skipped the Monday meeting" is a story)
                    asked.append(action.id)
    # "I'd rather talk to her face to face than send an email" names both: the one refused is not the one wanted
    wanted = next((a for a in asked if a not in declined), None)
    return wanted, tuple(declined)


def _consent_lang(language: str) -> str:
    return language[:2].lower() if language[:2].lower() in ("en", "zh", "ru", "es") else "en"


def may_consent(text: str, language: str) -> bool:
    """Whether a message could consent at all (short, with a go-ahead or a yes word): most messages cannot,
    and then nothing else is looked up for it."""
    lang = _consent_lang(language)
    return len(text) <= 80 and bool(words_of(lang, "consent", "go_ahead").search(text) or words_of(lang, "consent", "yes").search(text))


def consent_in_words(text: str, language: str, offered: Sequence[ActionSpec]) -> str | None:
    """The offered action a message consents to in words ("yes go ahead and draft it", "好的，那就起草吧", "да, давай",
    "sí, adelante"), or None. Consent is the person's and certain or nothing: the message says only that (go-ahead
    words, the action's own noun or verb, fillers) with no negation, doubt or question, and it names one action
    or one alone is on offer; a bare "yes" or "ok" consents only with the action named. Anything more is a
    message for the turn to read."""
    lang = _consent_lang(language)
    hedged = doubt(text.replace("吧", "") if lang == "zh" else text)  # "起草吧" asks for it: 吧 is no doubt there
    if not offered or not may_consent(text, language) or "?" in text or "？" in text or may_negate(text) or hedged:
        return None
    strong, weak = words_of(lang, "consent", "go_ahead"), words_of(lang, "consent", "yes")
    named = [a.id for a in offered if _names_action(text, lang, a)]
    if not strong.search(text) and not (weak.search(text) and named):
        return None
    rest = weak.sub(" ", strong.sub(" ", text))
    for action in offered:
        rest = _without_action_words(rest, lang, action)
    rest = words_of(lang, "fillers").sub(" ", words_of(lang, "consent", "rest").sub(" ", rest))
    if re.sub(r"[\W_]+", "", rest):
        return None  # more was said than yes
    if len(set(named)) == 1:
        return named[0]
    return offered[0].id if len(offered) == 1 and not named else None


def _action_words(lang: str, action: ActionSpec) -> list[re.Pattern[str]]:
    """An action's own words in a language: its flow's verbs and things (the lexicon) and nouns."""
    words = entry(lang, "consent")
    said = [*words["doing"].get(action.flow, []), *words["things"].get(action.flow, [])]
    found = [phrases(said, spaced=lang != "zh")] if said else []
    nouns = _NOUNS.get(action.flow, {}).get(_lang(lang))
    return found + ([re.compile(nouns, re.IGNORECASE)] if nouns else [])


def _names_action(text: str, lang: str, action: ActionSpec) -> bool:
    return any(p.search(text) for p in _action_words(lang, action))


def _without_action_words(text: str, lang: str, action: ActionSpec) -> str:
    for pattern in _action_words(lang, action):
        text = pattern.sub(" ", text)
    return text


def read_when(text: str, language: str, *, now: datetime, timezone: str) -> tuple[str | None, str | None]:
    """(day YYYY-MM-DD, time HH:MM) named for something to come; a refused one ('not Thursday') is skipped."""
    lang = _lang(language)
    meant = without_refused(text, lang)
    today = now.astimezone(ZoneInfo(timezone)).date()
    # "十点，哦不对，十点半", "Tuesday, no wait, Wednesday": what is said after correcting oneself is meant
    said_after = after_correction(meant)
    day = _date_part(said_after, today) or _date_part(meant, today)
    if day is not None and _refused_there(meant, day[1]):
        day = None  # "Don't book anything for Thursday", "周四我不在": the day is the one it must not be
    clock = _time_of_day(said_after) or _time_of_day(meant)
    on = None
    if day is not None:
        on = day[0]
        if on < today and not re.search(r"\blast\b|\bpast\b|上|昨|前天", day[1], re.IGNORECASE):
            on += timedelta(days=7)  # a bare weekday for something to come is the next one
    if clock is None and (bare := _BARE_HOUR.search(meant)):  # "on Thursday at 3"
        clock = (time(int(bare.group(1)) % 24, int(bare.group(2) or 0) % 60), bare.group(0))
    at = None
    if clock is not None:
        value: time = clock[0]
        later = not names_period(clock[1]) and _LATER_IN_DAY.search(meant) is not None  # "friday afternoon at 3"
        if (later or (not names_period(clock[1]) and not names_period(meant))) and 1 <= value.hour <= 7 + 4 * later:
            value = value.replace(hour=value.hour + 12)  # "at 2" for a call means the afternoon
        at = value.strftime("%H:%M")
    return (on.isoformat() if on else None), at


def _refused_there(text: str, raw: str) -> bool:
    """Whether the words `raw` said in text are in a negation's scope."""
    start = text.find(raw)
    return start >= 0 and negated(text, start, start + len(raw))


def read_action_request(text: str, language: str, actions: Sequence[ActionSpec], *, now: datetime,
                        timezone: str, call_talked_about: bool = False) -> ActionRequest:
    """The message's word on the actions. A day or time counts when the message asks for a call, or
    when a call was already asked for (a follow-up such as "no, Friday not Thursday")."""
    wanted, declined = read_actions(text, language, actions)
    flows = {a.id: a.flow for a in actions}
    timed = flows.get(wanted or "") == "calendar" or (call_talked_about and wanted is None)
    day, at = read_when(text, language, now=now, timezone=timezone) if timed else (None, None)
    address = _ADDRESS.search(text)
    return ActionRequest(wanted=wanted, declined=declined, day=day, at=at,
                         minutes=read_length(text, language) if timed else None,
                         address=address.group(1).lower() if address and "email" in flows.values() else None)


CALL_DAY, CALL_TIME, CALL_MINUTES, EMPLOYEE_EMAIL = ACTION_SLOTS
# a day said with its own anchor (next / this / tomorrow / a date), not a bare weekday
_ANCHORED_DAY = re.compile(r"\b(?:next|this|coming|tomorrow|today|tonight)\b|\d{1,2}[/.-]\d{1,2}|\d{1,2}(?:st|nd|rd|th)\b|下|这|本|明天|后天|今天|\d+[月日号]",
                           re.IGNORECASE)


def action_slot_types(config: ConversationConfig) -> dict[str, str]:
    """The slots the actions keep (a call's day and time), by type, for the command contract."""
    types = {EMPLOYEE_EMAIL: "email"} if any(a.flow == "email" for a in config.actions) else {}
    if any(a.flow == "calendar" for a in config.actions):
        types |= {CALL_DAY: "date", CALL_TIME: "clock_time", CALL_MINUTES: "duration_minutes"}
    return types


def _from_commands(request: ActionRequest, work: TurnWork) -> ActionRequest:
    """A generator's commands speak first: the action asked for, the call's day and time."""
    asked = work.command("request_action")
    given = {c.slot: c.value for c in work.commands
             if c.kind in ("set_slot", "correct_slot") and c.slot in (CALL_DAY, CALL_TIME, CALL_MINUTES, EMPLOYEE_EMAIL)}
    refused = tuple(c.action_id for c in work.commands if c.kind == "decline_action" and c.action_id)
    if asked is None and not given and not refused:
        return request
    wanted = asked.action_id if asked is not None else request.wanted
    declined = tuple(dict.fromkeys((*request.declined, *refused)))
    return ActionRequest(wanted=wanted, declined=tuple(a for a in declined if a != wanted),
                         day=given.get(CALL_DAY, request.day), at=given.get(CALL_TIME, request.at),
                         minutes=given.get(CALL_MINUTES, request.minutes), address=given.get(EMPLOYEE_EMAIL, request.address))


def apply_action_request(state: ContextState, work: TurnWork, config: ConversationConfig, *, now: datetime,
                         timezone: str) -> ContextState:
    """Remember what the message says about the actions: the one wanted goes first, a refused one is
    never offered, and the call's day and time are slots (a follow-up changes only what it names)."""
    if not config.actions or work.meaning in NOT_AN_ANSWER:
        return state
    calendar = {a.id for a in config.actions if a.flow == "calendar"}
    talked_about = state.preferred_action in calendar or CALL_DAY in state.slots or CALL_TIME in state.slots
    if not talked_about and not _DONE[_lang(work.language)].search(work.text):
        # a call on offer that waits for its day and time: a day and time said for what is to come are the call's
        # ("Thursday at 10am"); never a day the person tells of ("she was late once last month")
        talked_about = _call_waits_for_its_time(state, config, calendar)
    read = read_action_request(work.text, work.language, config.actions, now=now, timezone=timezone,
                               call_talked_about=talked_about)
    if work.model_read:  # the model's reading is the reading: a refusal only when it said no, no wish it did not give
        read = ActionRequest(declined=read.declined if work.command("deny") is not None else ())
    request = _from_commands(read, work)
    if request.empty:
        return state
    declined = tuple(a for a in state.declined_actions if a != request.wanted)
    declined += tuple(a for a in request.declined if a not in declined)
    preferred = request.wanted or (None if state.preferred_action in request.declined else state.preferred_action)
    earlier = state.preferred_action
    if request.wanted and earlier and earlier != request.wanted and earlier not in state.executed_actions \
            and earlier not in request.declined and not _SWITCH[_lang(work.language)].search(work.text):
        # "and send the email to marc@..." after a call was asked for: both are wanted, one per turn, the
        # earlier first (the email is no longer refused and comes next); "instead" / "改成" switches
        preferred = earlier
        work.trace.append(f"actions: {request.wanted} wanted too, after {earlier}")
    work.action_requested, work.actions_declined = request.wanted, request.declined
    if request.wanted or request.declined:
        work.trace.append(f"actions: wanted {request.wanted or '-'}, refused {', '.join(request.declined) or '-'}")
    slots = state.slots
    before_day = slots.get(CALL_DAY)
    if request.day and before_day is not None and not _ANCHORED_DAY.search(work.text):
        # "not Tuesday, Wednesday" / "改到周四" moves the call within the week it was in, not to this week
        old, new = datetime.fromisoformat(before_day.value).date(), datetime.fromisoformat(request.day).date()
        moved = old + timedelta(days=new.weekday() - old.weekday())
        if moved >= now.astimezone(ZoneInfo(timezone)).date():  # never into the past ("Monday" after a Thursday)
            request = ActionRequest(request.wanted, request.declined, moved.isoformat(), request.at)
    today = now.astimezone(ZoneInfo(timezone)).date()
    if request.day and date.fromisoformat(request.day) < today:
        request = replace(request, day=None, at=None)  # a day gone by is no call's day: a story, not a request
    request = _sure_time(_sure_day(request, work, today), work)
    changed, corrected = list(work.slots_changed), list(work.slots_corrected)
    for name, value in ((CALL_DAY, request.day), (CALL_TIME, request.at), (CALL_MINUTES, request.minutes),
                        (EMPLOYEE_EMAIL, request.address)):
        before = slots.get(name)
        if value is None or (before is not None and before.value == value):
            continue
        slots = with_key(slots, name, SlotValue(name=name, value=value, source_turn=work.turn, raw="action_request",
                                                status=VALID, validated_by="format", validated_turn=work.turn))
        changed.append(name)
        if before is not None:
            corrected.append(name)
    work.slots_changed, work.slots_corrected = tuple(changed), tuple(corrected)
    wanted = next((a for a in config.actions if a.id == request.wanted), None)
    if wanted is not None and wanted.flow == "calendar" and not work.question and details_missing(wanted, slots):
        work.ask(when_question(config, slots, work.language), "slot")  # never an hour nobody gave (contract 10)
    return state.evolve(slots=slots, preferred_action=preferred, declined_actions=declined)


def _call_waits_for_its_time(state: ContextState, config: ConversationConfig, calendar: set[str]) -> bool:
    """Whether a call may be offered now and waits for its day and time (then a day said is the call's)."""
    decisions = evaluate_actions(config.actions, ActionContext.from_state(state))
    actions = {a.id: a for a in config.actions}
    return any(d.allowed and d.action_id in calendar and details_missing(actions[d.action_id], state.slots) for d in decisions)


def details_missing(action: ActionSpec, slots: Mapping[str, SlotValue]) -> tuple[str, ...]:
    """The groups of details an action asks for before it runs that no slot holds yet (`asks_before`)."""
    return unmet_groups(action.asks_before, slots)


def when_question(config: ConversationConfig, slots: Mapping[str, SlotValue], language: str) -> str:
    """The question a call with no day or time is asked back with, the person named when known."""
    name = slots.get(config.person_slot or "")
    if name:
        return say(language, "Which day and time shall I put in the invitation for the call with {name}?", name=name.value)
    return say(language, "Which day and time shall I put in the invitation for the call?")


def _sure_time(request: ActionRequest, work: TurnWork) -> ActionRequest:
    """A call's time read from words that do not say it surely ("late in the afternoon", "3 or 4", "at 3am") is
    never put in the invitation: it is asked (contract 10). A time the generator gave stands as given."""
    if any(c.slot == CALL_TIME for c in work.commands) or not (request.day or request.at):
        return request
    certainty, why = time_certainty(work.text, "", "clock_time", request.at or "")
    if certainty == CERTAIN or certainty != GUESS and not request.at:
        return request  # a day with no time and no word of one: nothing to say back
    work.unsure.append(Command("set_slot", slot=CALL_TIME, value=request.at or "", certainty=certainty, words=work.text))
    work.trace.append(f"call time read as {certainty} ({why}): {request.at}")
    if certainty != GUESS:
        return request  # said back in the line that repeats the call's day and time
    words = unsure_words(work.text, why) or request.at
    work.ask(say(work.language, "I couldn't tell the exact time from “{words}”: what time do you mean?", words=words), "slot")
    return replace(request, at=None)


# "next Thursday" said in a week whose Thursday is still to come: this week's, or the one a week later
_NEXT_WEEKDAY = re.compile(r"\bnext\s+(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\b"
                           r"|(?<!\w)следующ\w+\s+(?:понедельник|вторник|сред\w|четверг|пятниц\w|суббот\w|воскресень\w)"
                           r"|\bpr[óo]xim[oa]\s+(?:lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo)", re.IGNORECASE)


def _sure_day(request: ActionRequest, work: TurnWork, today: date) -> ActionRequest:
    """A call's day said as "next Thursday" while this week's Thursday is still to come is a guess between the
    two: asked, never put in the invitation (contract 10). A day the generator gave stands as given."""
    if not request.day or any(c.slot == CALL_DAY for c in work.commands) or not _NEXT_WEEKDAY.search(work.text):
        return request
    day = date.fromisoformat(request.day)
    if day.isocalendar()[:2] != today.isocalendar()[:2]:
        return request  # the coming one falls in the next week already ("next Monday" on a Wednesday): only one fits
    later = day + timedelta(days=7)
    work.unsure.append(Command("set_slot", slot=CALL_DAY, value=request.day, candidates=(request.day, later.isoformat()),
                               certainty=GUESS, words=work.text))
    work.trace.append(f"call day read as guess: {request.day} or {later.isoformat()}")
    work.ask(say(work.language, "{first} or {second}: which shall I put?", first=describe_when(request.day, None, work.language),
                 second=describe_when(later.isoformat(), None, work.language)), "slot")
    return replace(request, day=None)


def _on_weekday(lang: str, weekday: int) -> str:
    """The day of a call as a date says it ("Friday", "周五", "в пятницу", "el viernes")."""
    return (say_in(lang, "on a weekday", "Monday"), say_in(lang, "on a weekday", "Tuesday"), say_in(lang, "on a weekday", "Wednesday"),
            say_in(lang, "on a weekday", "Thursday"), say_in(lang, "on a weekday", "Friday"), say_in(lang, "on a weekday", "Saturday"),
            say_in(lang, "on a weekday", "Sunday"))[weekday]


def _of_month(lang: str, month: int) -> str:
    """A month as a date says it ("November", "11月", "ноября", "noviembre")."""
    return (say_in(lang, "of a month", "January"), say_in(lang, "of a month", "February"), say_in(lang, "of a month", "March"),
            say_in(lang, "of a month", "April"), say_in(lang, "of a month", "May"), say_in(lang, "of a month", "June"),
            say_in(lang, "of a month", "July"), say_in(lang, "of a month", "August"), say_in(lang, "of a month", "September"),
            say_in(lang, "of a month", "October"), say_in(lang, "of a month", "November"),
            say_in(lang, "of a month", "December"))[month - 1]


def describe_when(day: str | None, at: str | None, language: str) -> str:
    """'Friday 27 November at 14:00' / '11月27日（周五）14:00' / 'в пятницу, 27 ноября, в 14:00' (either part may be missing)."""
    if not day:
        return say(language, "at {time}", time=at) if at else ""
    on = datetime.fromisoformat(day).date()
    values = {"weekday": _on_weekday(language, on.weekday()), "day": on.day, "month": _of_month(language, on.month)}
    if at:
        return say(language, "{weekday} {day} {month} at {time}", time=at, **values)
    return say(language, "{weekday} {day} {month}", **values)


def action_noun(action: ActionSpec, language: str) -> str:
    """How a sentence names the action it asks for: 'an email', 'a call', '邮件', '通话'."""
    if action.flow == "email":
        return say_in(language, "an action", "an email")
    if action.flow == "calendar":
        return say_in(language, "an action", "a call")
    return localize(action.label, language) or action.id


def _after_noun(action: ActionSpec, language: str) -> str:
    """The action another one comes after ("after an email", "在邮件之后", "после письма")."""
    if action.flow == "email":
        return say_in(language, "after an action", "an email")
    if action.flow == "calendar":
        return say_in(language, "after an action", "a call")
    return localize(action.label, language) or action.id


def _refused_noun(action: ActionSpec, language: str) -> str:
    """An action refused ("no email", "不要邮件", "без письма")."""
    if action.flow == "email":
        return say_in(language, "no action", "email")
    if action.flow == "calendar":
        return say_in(language, "no action", "call")
    return localize(action.label, language) or action.id


def _details(slots: dict[str, str], changed: Sequence[str], corrected: Sequence[str], language: str,
             person: str | None) -> list[str]:
    """A correction of the documents' details before consent: who they are for, the address, the call's length."""
    pieces = []
    if person in corrected and slots.get(person or ""):
        pieces.append(say(language, "the email and the invitation are now for {name}", name=slots[person]))
    if EMPLOYEE_EMAIL in changed and slots.get(EMPLOYEE_EMAIL):
        pieces.append(say(language, "the email goes to {address}", address=slots[EMPLOYEE_EMAIL]))
    if CALL_MINUTES in changed and slots.get(CALL_MINUTES):
        pieces.append(say_n(language, "the call lasts {n} minute", "the call lasts {n} minutes", int(slots[CALL_MINUTES])))
    return pieces


def understood_line(state: ContextState, config: ConversationConfig, *, wanted: str | None, declined: Sequence[str],
                    when_changed: bool, language: str, changed: Sequence[str] = (), corrected: Sequence[str] = ()) -> str:
    """What the message said about the actions, in plain words (never the message itself)."""
    actions = {a.id: a for a in config.actions}
    slots = {k: v.value for k, v in state.slots.items()}
    name = slots.get(config.person_slot or "")
    when = describe_when(slots.get(CALL_DAY), slots.get(CALL_TIME), language)
    on_day = bool(slots.get(CALL_DAY))
    refused = [_refused_noun(actions[a], language) for a in declined if a in actions]
    details = _details(slots, changed, corrected, language, config.person_slot)
    earlier = state.preferred_action  # wanted too, after the one asked for first (one action per turn)
    first = earlier if wanted and earlier in actions and earlier != wanted and earlier not in state.executed_actions else None
    clauses = say_in(language, "clauses", "; ")
    if not refused and not wanted and not when_changed:
        return say(language, "Understood: {pieces}.", pieces=clauses.join(details)) if details else ""
    pieces = [say(language, "no {actions}", actions=say_in(language, "refused actions", " or ").join(refused))] if refused else []
    if wanted:
        what = action_noun(actions[wanted], language)
        if actions[wanted].flow == "calendar":
            what = say(language, "a call with {name}", name=name) if name else what
            if when:
                what = say(language, "{what} on {when}", what=what, when=when) if on_day else say(language, "{what} {when}", what=what, when=when)
        if refused:
            what = say(language, "{what} instead", what=what)
        if first:
            what = say(language, "{what} too, after {action}", what=what, action=_after_noun(actions[first], language))
        pieces.append(what)
    elif when_changed and when and not {CALL_DAY, CALL_TIME} & set(corrected):  # said for the first time
        call = next(a for a in config.actions if a.flow == "calendar")
        what = say(language, "a call with {name}", name=name) if name else action_noun(call, language)
        pieces.append(say(language, "{what} on {when}", what=what, when=when) if on_day else say(language, "{what} {when}", what=what, when=when))
    elif when_changed and when:
        pieces.append(say(language, "the call is now on {when}", when=when) if on_day else say(language, "the call is now {when}", when=when))
    line = say(language, "Understood: {pieces}.", pieces=clauses.join(pieces))
    if not details:
        return line
    more = say(language, "{sentence}.", sentence=upper_first(clauses.join(details)))
    return say(language, "{first} {then}", first=line, then=more)
