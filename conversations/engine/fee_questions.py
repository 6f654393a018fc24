"""What a question about a stay's fee asks, in words: the most a day costs, a part of the day, a stay
overnight, another week, another lot.

Shared by the slot extractors (what the follow-up changes) and the replies (what the answer says
first), so the two never disagree about what a message asked.
"""

from __future__ import annotations

import re
from datetime import time
from decimal import Decimal, InvalidOperation

from .timeparse import zh_number

# "白天最多收多少？", "what's the most I'd pay?", "is there a daily cap?", "whats the max": the rule's caps answer it
ASKS_CAP = re.compile(
    r"\b(?:max(?:imum)?|most|cap(?:ped|s)?|ceiling|limit|highest|upper\s+limit|top\s+out)\b|最多|最高|封顶|上限|最贵|顶多|"
    r"(?<!\w)(?:максимум|максимальн\w*|лимит\w*)(?!\w)|\bm[aá]xim[oa]\b|\btope\b",
    re.IGNORECASE,
)

# A part of the day said without a clock time ("and at night?", "那晚上呢", "上午呢"): the stay moves to it,
# starting at a time that lies inside that part of the day for any usual rule (the reply names the rule's own
# segments for it). First the longer words, so "傍晚" is the evening, not "晚上".
DAY_PARTS: tuple[tuple[str, re.Pattern[str], time], ...] = (
    ("evening", re.compile(r"\bevening\b|傍晚|(?<!\w)вечер\w*", re.IGNORECASE), time(18, 0)),
    ("night", re.compile(r"\bnight(?:-?time|s)?\b|\btonight\b|\bovernight\b|晚上|夜里|夜间|夜晚|今晚|明晚|昨晚|过夜|整晚|一晚|"
                         r"(?<!\w)ноч\w*|\bnoche\b", re.IGNORECASE), time(22, 0)),
    ("morning", re.compile(r"\bmorning\b|早上|早晨|上午|今早|明早|昨早|一早|(?<!\w)утр\w*|\bpor\s+la\s+ma[ñn]ana\b", re.IGNORECASE), time(9, 0)),
    ("afternoon", re.compile(r"\bafternoon\b|下午|\bpor\s+la\s+tarde\b", re.IGNORECASE), time(14, 0)),
    ("daytime", re.compile(r"\bday-?time\b|\bduring\s+the\s+day\b|白天|日间|(?<!\w)днём(?!\w)|\bde\s+d[ií]a\b", re.IGNORECASE),
     time(10, 0)),
)

# "and overnight?", "过夜呢", "停一晚": a stay from the evening to the next morning
OVERNIGHT = re.compile(r"\bovernight\b|\ball\s+night\b|\b(?:for\s+)?(?:one|a|the\s+whole|a\s+whole)\s+night\b(?!\s+(?:rate|price|tariff|charge))|"
                       r"\bfor\s+the\s+night\b|过夜|整晚|停一晚|一晚上|一整晚|(?<!\w)на\s+ночь(?!\w)|\btoda\s+la\s+noche\b",
                       re.IGNORECASE)
OVERNIGHT_START, OVERNIGHT_MINUTES = time(20, 0), 12 * 60

# "same time next week?", "下周同一时间呢", "a week later": the stay talked about, a week later (or earlier)
_WEEK_LATER = re.compile(r"\bnext\s+week\b|\b(?:a|one)\s+week\s+(?:later|after)\b|\bthe\s+(?:week\s+after|following\s+week)\b|"
                         r"下(?:个|個)?(?:周|週|星期|礼拜)(?![一二三四五六日天末])|一(?:个|個)?(?:周|星期|礼拜)(?:以)?后|"
                         r"(?<!\w)на\s+следующей\s+неделе(?!\w)|\bla\s+semana\s+(?:que\s+viene|siguiente|pr[óo]xima)\b",
                         re.IGNORECASE)
_WEEK_EARLIER = re.compile(r"\blast\s+week\b|\b(?:a|one)\s+week\s+(?:earlier|before)\b|\bthe\s+week\s+before\b|"
                           r"上(?:个|個)?(?:周|週|星期|礼拜)(?![一二三四五六日天末])|一(?:个|個)?(?:周|星期|礼拜)(?:以)?前|"
                           r"(?<!\w)на\s+прошлой\s+неделе(?!\w)|\bla\s+semana\s+pasada\b",
                           re.IGNORECASE)

# "and at the other car park?", "另一个停车场呢", "the other one": the lot talked about before this one
OTHER_ONE = re.compile(r"\b(?:the\s+)?other\s+(?:lot|car\s*park|parking(?:\s+lot)?|garage)\b|\banother\s+(?:lot|car\s*park)\b|"
                       r"另(?:一|外)(?:一)?(?:个|個|家)?(?:停车场|车场)|另一家|别的(?:停车场|车场)|(?<!\w)друг\w+\s+(?:парковк\w*|стоянк\w*)|"
                       r"\bel\s+otro\s+(?:estacionamiento|aparcamiento|parking)\b", re.IGNORECASE)


# Saying where the stay starts ("no, from 2pm", "不是，我是说从下午两点开始", "I got there at 3", "三点进场的"): an
# end said before stays where it is (a start moved with "and in the morning?" or "what about 9am?" moves the stay)
_SAYS_START = re.compile(
    r"\b(?:from|starting|start(?:s|ed|ing)?|since|arriv\w*|got\s+there|get\s+there|came\s+in|come\s+in|coming\s+in|"
    r"enter(?:s|ed|ing)?|drove\s+in|pulled\s+in|parked\s+at|in\s+at)\b|从|开始|起停|进场|入场|进去|开进|停进|进的|"
    r"(?<!\w)(?:с|начиная\s+с|приехал\w*|заехал\w*)(?!\w)|\b(?:desde|a\s+partir\s+de|entr[eé]|llegu[eé])\b",
    re.IGNORECASE,
)


def says_start(text: str) -> bool:
    """Whether a message says the time it gives is where the stay starts."""
    return bool(_SAYS_START.search(text or ""))


# An amount of money said: "60", "¥60", "60.00", "12块", "12 yuan", "RMB 35", "十二块" (not a time, a length or a date)
_AMOUNT = re.compile(
    r"[¥￥$]\s*\d+(?:\.\d{1,2})?|\b(?:rmb|cny)\s*\d+(?:\.\d{1,2})?|"
    r"(?<![A-Za-z0-9_.\-/:])\d+(?:\.\d{1,2})?\s*(?:元|块|塊|\b(?:yuan|rmb|cny|kuai|bucks?|dollars?)\b)|"
    r"[一二两三四五六七八九十百]+\s*(?:元|块|塊)|"
    r"(?<![A-Za-z0-9_.\-/:])\d+(?:\.\d{1,2})?(?![\w.\-/:]|\s*(?:h\b|hours?\b|hrs?\b|mins?\b|minutes?\b|days?\b|am\b|pm\b|%))",
    re.IGNORECASE,
)
# Asking whether it is right: "was the 60 correct", "is that right?", "对吗", "对不对", "没算错吧"
_RIGHT = re.compile(
    r"\b(?:correct(?:ly)?|right(?!\s+now)|accurate|ok(?:ay)?|fair|legit|wrong|a\s+mistake|too\s+much)\b|"
    r"对吗|对不对|对么|对吧|对不|正确吗|准确吗|没错吧|没错吗|有没有错|是不是错|是不是算错|算错了?吗|收错了?吗|合理吗|没问题吧|有问题吗|"
    r"(?<!\w)(?:правильно|верно)(?!\w)|\bcorrecto\b",
    re.IGNORECASE,
)


def asks_amount_right(text: str) -> bool:
    """Whether a message says an amount and asks whether it is right ("was the 60 correct", "收了我12块 对吗")."""
    return bool(_AMOUNT.search(text or "")) and bool(_RIGHT.search(text or ""))


def amounts_said(text: str) -> tuple[str, ...]:
    """The amounts of money a message says, as "12.00" ("the 12 yuan one", "¥7.5 那笔", "十二块的"), in order."""
    found = []
    for m in _AMOUNT.finditer(text or ""):
        digits = re.search(r"\d+(?:\.\d{1,2})?", m.group(0))
        try:
            value = Decimal(digits.group(0)) if digits else Decimal(zh_number(re.sub(r"\s*[元块塊]", "", m.group(0))))
        except (InvalidOperation, ValueError, KeyError):
            continue
        found.append(f"{value:.2f}")
    return tuple(dict.fromkeys(found))


def asks_cap(text: str) -> bool:
    """Whether a message asks the most a stay may cost (a cap)."""
    return bool(ASKS_CAP.search(text or ""))


# "good morning", "Morning!", "早上好", "晚安": a greeting names no part of the day for a stay ("tomorrow morning, …" does)
_GREETING = re.compile(r"\bgood\s+(?:morning|afternoon|evening|night)\b|^\W*(?:(?:hi|hey|hello)\W+)?morning\s*[!,.]|(?:早上|上午|下午|晚上)好|早安|晚安|"
                       r"(?<!\w)добр(?:ое|ый)\s+(?:утро|день|вечер)(?!\w)|\bbuen(?:os|as)\s+(?:d[ií]as|tardes|noches)\b",
                       re.IGNORECASE)


# The hours each part of the day holds (from, to; to may be past midnight): a time already talked about that lies in
# the part named stays where it is ("3 to 6:15" then "yes, the afternoon"); one twelve hours off moves into it
DAY_PART_HOURS = {"morning": (5, 12), "afternoon": (12, 18), "evening": (17, 23), "night": (18, 30), "daytime": (7, 19)}


def in_day_part(name: str, at: time) -> bool:
    """Whether a clock time lies inside a part of the day."""
    start, end = DAY_PART_HOURS.get(name, (0, 0))
    hour = at.hour + at.minute / 60
    return start <= hour < end or start <= hour + 24 < end


def day_part(text: str) -> tuple[str, time] | None:
    """The part of the day a message names (its first one) and a time inside it, or None."""
    text = _GREETING.sub(" ", text or "")
    hits = [(m.start(), name, at) for name, pattern, at in DAY_PARTS if (m := pattern.search(text))]
    if not hits:
        return None
    _, name, at = min(hits, key=lambda hit: hit[0])
    return name, at


def week_shift(text: str) -> int:
    """+7 for "next week" / 下周 said of the stay talked about, -7 for "last week" / 上周, else 0."""
    if _WEEK_LATER.search(text or ""):
        return 7
    return -7 if _WEEK_EARLIER.search(text or "") else 0


def names_other_one(text: str) -> bool:
    """Whether a message points at "the other" lot rather than naming one."""
    return bool(OTHER_ONE.search(text or ""))


__all__ = ["ASKS_CAP", "DAY_PARTS", "DAY_PART_HOURS", "in_day_part", "OVERNIGHT", "OVERNIGHT_MINUTES", "OVERNIGHT_START", "amounts_said", "asks_amount_right", "asks_cap",
           "day_part", "names_other_one", "says_start", "week_shift"]
