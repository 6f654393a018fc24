"""Deterministic, pattern-based intent router (English, Russian, Spanish, Chinese).

Built-in intents: LOCATE, EXPLAIN, HOWTO, NEW_EVIDENCE, DISPUTE, CONFIRMATION,
UNCLEAR. A workflow plan adds domain intents as data (`DomainIntent`), e.g. the parking
help desk's `rule_explain`, `arrears_check` and `fee_verify`. Domain intents are checked
first because they are the workflow's own vocabulary; the built-ins follow in a fixed
priority order (evidence and disputes before side questions, confirmations last).
No model is involved: the same text always routes the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated

import pydantic
from pydantic import Field

from ._serde import FrozenDict, Serializable
from ._text import (
    compile_pattern,
    count_matches,
    detect_language,
    first_match,
    normalize_patterns,
    unnegated_hits,
)
from .lexicon import lexicons_for, words_of
from .negation import may_negate, message_parts
from .schema import Localized, Names, Patterns, Spec

LOCATE = "LOCATE"
EXPLAIN = "EXPLAIN"
HOWTO = "HOWTO"
NEW_EVIDENCE = "NEW_EVIDENCE"
DISPUTE = "DISPUTE"
CONFIRMATION = "CONFIRMATION"
UNCLEAR = "UNCLEAR"
BUILTIN_INTENTS = (LOCATE, EXPLAIN, HOWTO, NEW_EVIDENCE, DISPUTE, CONFIRMATION, UNCLEAR)
SIDE_QUESTION_INTENTS = frozenset({LOCATE, EXPLAIN, HOWTO})
SUBMODE_FOR_INTENT = {LOCATE: "locate", EXPLAIN: "explain", HOWTO: "howto"}

_EVIDENCE_WORDS_EN = (
    r"(?:holes?|leak\w*|crack\w*|burn\w*|scorch\w*|melt\w*|damage\w*|corro\w*|loose|broken|"
    r"frayed|bulg\w*|swollen|rust\w*|short(?:ed|ing)?|disconnected|blown|oil\w*|stain\w*|kink\w*|"
    r"smell\w*|smok\w*|spark\w*|chaf\w*|pinch\w*|cut|wet|water|ice|frost\w*)"
)

BUILTIN_PATTERNS: dict[str, dict[str, tuple[str, ...]]] = {
    NEW_EVIDENCE: {
        "en": (
            r"\b(?:found|find|discovered|discover|notic(?:ed|e)|see|saw|seeing|spotted|observed|"
            r"detected|there(?:'s|\s+is|\s+are|\s+was|\s+were))\b[^.?!\n]{0,40}?\b"
            + _EVIDENCE_WORDS_EN,
            r"\b(?:actually|wait|update|btw|by the way|hold on|turns out)\b[,:!.]?\s*"
            r"(?:there(?:'s|\s+is|\s+are)|i\s+(?:just\s+)?(?:see|saw|found|noticed|checked|measured|"
            r"tested|discovered)|it(?:'s|\s+is)|the\s+\w+\s+(?:is|was|has))",
            r"\b(?:now|but now)\s+(?:it(?:'s|\s+is)|i\s+(?:get|see|measure|read)|"
            r"(?:it|the\s+\w+)\s+(?:reads|shows|measures))",
            r"\bnew\s+(?:info\w*|evidence|finding\w*|data)\b",
            r"\bjust\s+(?:found|noticed|discovered|saw|spotted)\b",
        ),
        "ru": (
            r"(?:наш[её]л|нашла|нашли|обнаружил\w*|заметил\w*|увидел\w*|вижу|видно|есть)"
            r"[^.?!\n]{0,40}?(?:дыр|отверсти|утечк|теч|трещин|подгор|горел|обгор|оплав|поврежд|"
            r"коррози|ржав|окисл|обрыв|масл|пятн|вздут|замыка|разболт|болта)",
            r"(?<!\w)(?:оказывается|на\s+самом\s+деле|кстати|подожди|погоди)(?!\w)",
            r"(?<!\w)теперь\s+(?:показывает|вижу|намерил|меряю|стало)",
            r"(?<!\w)новые\s+(?:данные|сведения)",
        ),
        "es": (
            r"\b(?:encontr[eé]|encontrado|descubr[ií]|descubierto|not[eé]|notado|vi|veo|ver|visto|hay|detect[eé]|observ[eé])\b[^.?!\n]{0,40}?"
            r"(?:agujero|hueco|fuga|gotea|grieta|quemad|derret|da[ñn]|corro|[oó]xido|oxidad|suelt|"
            r"rot[oa]|aceite|mancha|hinchad|cortocircuito)",
            r"\b(?:en realidad|resulta que|espera|de hecho|por cierto)\b",
            r"\bahora\s+(?:marca|mide|leo|veo|da)\b",
        ),
        "zh": (
            r"(?:发现|看到|注意到|看见|找到|有|出现)[^。？！?!\n]{0,12}?"
            r"(?:漏|裂|烧|焦|熔|洞|孔|损坏|坏了|腐蚀|锈|松动|断了|断开|油迹|油渍|鼓包|短路|异味|冒烟|火花)",
            r"(?:其实|原来|等一下|等等|补充一下|新情况)",
            r"现在(?:测|量|读数|显示)",
        ),
    },
    DISPUTE: {
        "en": (
            r"\b(?:that'?s|that\s+is|this\s+is|it'?s|it\s+is)\s+(?:not\s+(?:right|correct|true|it|"
            r"possible)|wrong|incorrect|impossible|nonsense|a\s+mistake)\b",
            r"\b(?:can'?t|cannot|can\s+not|couldn'?t)\s+be\b",
            r"\b(?:doesn'?t|does\s+not|don'?t)\s+make\s+(?:any\s+)?sense\b",
            r"\bare\s+you\s+(?:sure|certain|kidding)\b",
            r"\bi\s+(?:disagree|doubt)\b|\bi\s+(?:don'?t|do\s+not)\s+agree\b|\bnot\s+convinced\b",
            r"\bi\s+don'?t\s+(?:think|believe)\s+(?:so|that|it)\b",
            r"\b(?:is|are|was|seems?|looks?|that'?s|it'?s)\s+(?:wrong|incorrect|mistaken|off)\b",
            r"\bwrong\s+(?:amount|fee|charge|price|total|diagnosis|answer|part|call|conclusion)\b",
            r"\bover-?charg\w*\b",
            r"\btoo\s+(?:high|much|expensive)\b",
            r"\bnot\s+what\s+i\b",
            r"\b(?:i|we)\s+(?:already|just)\s+(?:replaced|changed|swapped)\b",
        ),
        "ru": (
            r"(?<!\w)не\s+так(?!\w)",
            r"неправ",
            r"неверн",
            r"ошиб",
            r"не\s+может\s+быть",
            r"не\s+соглас",
            r"(?<!\w)(?:вы|ты)\s+уверен",
            r"бессмыслиц",
            r"слишком\s+(?:дорого|много)",
        ),
        "es": (
            r"\bno\s+es\s+(?:as[ií]|cierto|correcto|verdad|posible)\b",
            r"\bincorrect",
            r"\bequivocad",
            r"\berr[oó]ne",
            r"\berror\b",
            r"\best[aá]s?\s+segur",
            r"\bno\s+estoy\s+de\s+acuerdo\b",
            r"\bno\s+tiene\s+sentido\b",
            r"\bno\s+puede\s+ser\b",
            r"\bdemasiado\s+(?:caro|alto)\b",
            r"\bcobr\w+\s+de\s+m[aá]s\b",
        ),
        "zh": (
            r"不对",
            r"不是这样",
            r"错了",
            r"有误",
            r"不可能",
            r"不同意",
            r"你确定",
            r"不合理",
            r"搞错",
            r"多收",
            r"收错",
            r"算错",
            r"太贵",
            r"不应该",
            r"怎么可能",
        ),
    },
    LOCATE: {
        "en": (
            r"\bwhere(?:'s|\s+is|\s+are|\s+was|\s+were|\s+do|\s+does|\s+did|\s+can|\s+could|"
            r"\s+would|\s+should|\s+will|\s+might|\s+exactly|abouts)\b",
            r"\b(?:can'?t|cannot|can\s+not|couldn'?t|unable\s+to|not\s+able\s+to|struggling\s+to)\s+"
            r"(?:find|locate|spot|see\s+where)\b",
            r"\bhow\s+(?:do|can|would|should)\s+(?:i|we|you)\s+(?:find|locate|get\s+to|reach|access)\b",
            r"\b(?:location|position|whereabouts)\s+of\b",
            r"\bwhich\s+(?:side|panel|compartment|wall|bay|cabinet|corner|end)\b",
            r"\bwhere\b[^?]*\?",
            # as people type it: "wheres the cap", "were is the capacitor", "whre is it"
            r"\b(?:wheres|wher|whre|wehre)\s+(?:is|are|the|do|does|can|would|exactly)\b",
            r"^\W*were\s+(?:is|are|do|does|can)\b",
            r"\bwheres\b",
        ),
        "ru": (
            r"(?<!\w)где(?![\w-])",  # "где-то" is "somewhere", not a question
            r"не\s+(?:могу|можем|получается)\s+найти",
            r"(?<!\w)как\s+(?:мне\s+)?(?:найти|добраться|попасть)",
            r"в\s+каком\s+месте",
            r"(?<!\w)(?:расположен\w*|располагается|местоположени\w*)",
        ),
        "es": (
            r"\bd[oó]nde\b",
            r"\bno\s+(?:puedo\s+|logro\s+|consigo\s+)?encontr\w*",
            r"\bno\s+encuentro\b",
            r"\bc[oó]mo\s+(?:llego|accedo|encuentro|localizo)\b",
            r"\bubicaci[oó]n\b",
            r"\ben\s+qu[eé]\s+(?:lado|parte|lugar)\b",
        ),
        "zh": (
            r"在哪",
            r"哪里",
            r"哪儿",
            r"哪边",
            r"什么位置",
            r"什么地方",
            r"位置(?:在|是)?(?:哪|呢|吗|\?|？)",  # "正常位置" in an answer ("the valve is in its normal position") asks nothing
            r"(?<!正常)(?<!原)(?<!工作)位置\s*[?？]?\s*$",
            r"找不到",
            r"怎么找",
            r"何处",
        ),
    },
    HOWTO: {
        "en": (
            r"\bhow\s+(?:do|can|could|should|would|shall|might)\s+(?:i|we|one|you)\b",
            r"\bhow\s+to\b",
            r"\bhow\s+(?:is|are)\s+\w+\s+(?:checked|tested|measured|verified|done|inspected)\b",
            r"\bwhat(?:'s|\s+is)\s+the\s+(?:best\s+|right\s+|proper\s+|correct\s+)?"
            r"(?:way|procedure|process|method)\s+(?:to|for)\b",
            r"\b(?:steps|instructions|procedure)\s+(?:to|for)\b",
            r"\bwalk\s+me\s+through\b",
            r"\bshow\s+me\s+how\b",
        ),
        "ru": (
            r"(?<!\w)как\s+(?:мне\s+|нам\s+|можно\s+|нужно\s+|лучше\s+|правильно\s+|вручную\s+|самому\s+)*(?:проверить|"
            r"протестировать|измерить|померить|замерить|прозвонить|определить|узнать|сделать|снять|"
            r"заменить|сбросить|подключить|осмотреть|диагностировать|задвинуть|выдвинуть|синхронизировать|"
            r"почистить|подкачать|долить|отрегулировать|настроить|разблокировать|завести|запустить)",
            r"каким\s+образом",
            # any verb asked about in the infinitive: "как перемкнуть провода термостата?"
            r"(?<!\w)как\s+(?:мне\s+|нам\s+|можно\s+|нужно\s+|лучше\s+|правильно\s+)*\w{3,}(?:ть|ти)(?:ся)?(?!\w)",
            r"(?<!\w)как\s+(?:проверяется|измеряется|делается)",
            r"инструкци",
        ),
        "es": (
            r"\bc[oó]mo\s+(?:puedo\s+|debo\s+|podr[ií]a\s+|se\s+|hago\s+para\s+|hay\s+que\s+)?"
            r"(?:verific|comprob|prob|prueb|medi|mid|revis|cheque|hac|sab|reemplaz|quit|desmont|conect|"
            r"inspeccion|diagnostic|puente)\w*",
            # any verb asked about in the first person: "¿cómo puenteo los cables?", "¿cómo lo mido?"
            r"\bc[oó]mo\s+(?:lo\s+|la\s+|los\s+|las\s+)?\w{3,}o\b(?<!\bc[oó]mo)",
            r"\bpasos\s+para\b",
            r"\bqu[eé]\s+pasos\b",
            r"\b(?:la\s+)?(?:mejor\s+)?manera\s+de\b",
        ),
        "zh": (
            r"怎么(?!回事|了|样了|可能)",
            r"如何",
            r"怎样",
            r"咋(?:弄|办|测|查|检查)",
            r"步骤",
            r"方法",
            r"教我",
        ),
    },
    EXPLAIN: {
        "en": (
            r"\bwhat(?:'s|\s+is|\s+are|\s+was|\s+were)\b",
            r"\bwhat\s+(?:does|do)\s+.+?\s+(?:do|mean|stand\s+for)\b",
            r"\bwhat\s+kind\s+of\b",
            r"\bexplain\b",
            r"\bmeaning\s+of\b",
            r"\bdefin(?:e|ition)\b",
            r"\bnever\s+heard\s+of\b",
            r"\btell\s+me\s+(?:more\s+)?about\b",
            r"\bpurpose\s+of\b",
            r"\bwhy\s+(?:do|does|is|are)\b.*\b(?:need|needed|matter|important)\b",
            r"\bwhats\b",
            r"\bwhat\s+(?:counts|qualifies)\s+as\b",
            r"\bdoes\s+(?:a|an|the|my|our)\s+(?:\w+\s+){0,2}count\b",
            r"\bhow\s+(?:is|are|do\s+(?:you|i|we))\s+(?:\w+\s+){0,3}(?:measured|counted|calculated|defined|measure|count|calculate)\b",
        ),
        "ru": (
            r"(?<!\w)что\s+(?:такое|это|значит|означает|за|делает)(?!\w)",
            r"объясн",
            r"зачем\s+(?:нужен|нужна|нужно|нужны)",
            r"для\s+чего",
            r"расскажи\w*\s+(?:про|о)(?!\w)",
        ),
        "es": (
            r"\bqu[eé]\s+(?:es|son|significa|quiere\s+decir|hace)\b",
            r"\bexpl[ií]ca",
            r"\bpara\s+qu[eé]\s+(?:sirve|es)\b",
            r"\bdefin",
            r"\bh[aá]blame\s+de\b",
        ),
        "zh": (
            r"是什么",
            r"什么是",
            r"是啥",
            r"啥是",
            r"什么意思",
            r"啥意思",
            r"解释",
            r"是干(?:嘛|什么)的",
            r"有什么用",
            r"干什么用",
            r"作用是",
            r"指的是",
            r"含义",
            r"介绍一下",
            r"算不算",
            r"什么算",
            r"怎么算",
            r"算[一几]层",
        ),
    },
    CONFIRMATION: {
        "en": (
            r"^\s*(?:yes|yep|yeah|yup|ya|sure|ok|okay|k|confirm(?:ed)?|correct|right|exactly|agreed|"
            r"affirmative|absolutely|definitely|of\s+course|go\s+ahead|please\s+do|do\s+it|sounds\s+good|"
            r"looks\s+good|that\s+works|fine|accept(?:ed)?|approved?|deal|perfect|great)\b",
            r"\bi\s+(?:confirm|accept|agree|approve)\b",
            r"\b(?:looks|sounds)\s+(?:good|right|fine|great)\b",
            r"^\s*\d+(?:[.,]\d+)?\s*(?:h|hrs?|hours?)\b",
        ),
        "ru": (
            r"^\s*(?:да|ага|угу|верно|точно|правильно|хорошо|ладно|ок|окей|согласен|согласна|"
            r"подтверждаю|давай(?:те)?|конечно|принято)(?!\w)",
            r"(?<!\w)подтвержда\w*",
        ),
        "es": (
            r"^\s*(?:sí|si(?=\s*(?:[,.!]|$))|vale|claro|correcto|exacto|de\s+acuerdo|confirmo|acepto|perfecto|"
            r"est[aá]\s+bien|dale|por\s+supuesto|afirmativo)\b",
            r"\b(?:confirmo|acepto|apruebo)\b",
        ),
        "zh": (
            # a bare 是 / 对 / 好 says yes only standing alone: "是个牙科诊所", "对面", "好几次", "好像" say something else
            r"^\s*(?:是的|对的|好的|(?:是|对|好)(?=$|[\s，,。.！!～~、；;的啊呀吧嘞滴哒了呢])|行|可以|没问题|确认|同意|"
            r"嗯+|就这样|没错|正确)",
            # the person's own confirming, not someone else's ("设计师会打电话跟你们确认" confirms nothing)
            r"(?:^|[，,。！!；;\s]|我|就|都)(?:确认|同意)",
        ),
    },
}

# Priority among built-ins: evidence and disputes outrank the side questions they often
# contain ("yes, but I found a leak"), and a bare confirmation comes last.
BUILTIN_ORDER = (NEW_EVIDENCE, DISPUTE, LOCATE, HOWTO, EXPLAIN, CONFIRMATION)

# "hmm, what about ...", "ok so what if ...": the words a follow-up may open with
_OPENERS = r"^\s*(?:(?:hmm*|um+|uh+|ok(?:ay)?|oh|ah|well|alright|right|so|and)\b[\s,.!…]*)*"

# "what about tomorrow?" / "那明天呢" / "а завтра?" / "¿y mañana?": a follow-up on the last request.
FOLLOW_UP_PATTERNS = normalize_patterns(
    {
        "en": [
            _OPENERS + r"(?:what|how)\s+about\b",
            r"^\s*and\s+(?:for|on|at|in|the|if)\b",
            # "ok. and my wife's car, a88q15?", "and the other plate?": the same request for another one
            _OPENERS + r"and\s+(?:for\s+)?(?:my|our|his|her|their|the\s+other|another|this|that)\b",
            r"^\s*same\s+(?:for|with|but|time)\b",
            _OPENERS + r"(?:what|how)\s+if\b",
            _OPENERS + r"if\s+(?:i|we)\b",
        ],
        "zh": [r"^\s*那", r"呢[？?]?\s*$", r"^\s*还有", r"^\s*换成", r"^\s*(?:如果|要是|假如)"],
        "ru": [r"^\s*а\s+(?:если|на|в|для|за|что)?", r"^\s*и\s+(?:на|в|для|за)\s"],
        "es": [r"^\s*¿?\s*y\s+(?:si|para|el|la|en|a|con)?\b", r"^\s*¿?\s*qu[eé]\s+tal\b"],
    }
)


@pydantic.dataclasses.dataclass(frozen=True)
class DomainIntent(Spec):
    """A workflow's own intent, declared as data in its plan's conversation config."""

    name: Annotated[str, Field(min_length=1)]
    patterns: Patterns = field(default_factory=FrozenDict)
    label: Localized = field(default_factory=FrozenDict)  # default: the name
    required_slots: Names = ()
    optional_slots: Names = ()

    def __post_init__(self) -> None:
        self._default("label", {"en": self.name})
        super().__post_init__()


@dataclass(frozen=True)
class IntentResult(Serializable):
    """What the router decided for one message."""

    intent: str
    confidence: float
    pattern: str | None
    language: str
    kind: str  # domain | builtin | none
    candidates: tuple[str, ...] = ()  # every intent that matched, best first
    ambiguous: bool = False  # two domain intents matched equally well
    confirmation_value: str | None = None  # "accept" or a number for CONFIRMATION
    follow_up: bool = False  # phrased as "what about ...?"

    @property
    def is_side_question(self) -> bool:
        return self.intent in SIDE_QUESTION_INTENTS


def _domain_matches(text: str, intents: Iterable[DomainIntent]) -> list[tuple[DomainIntent, int]]:
    """The intents the message asks for, each with how many of its patterns say it; a request said not to be
    wanted ("我不是要查欠费", "I'm not asking about arrears") is none."""
    hits = [(intent, count_matches(text, intent.patterns)) for intent in intents]
    return [(intent, n) for intent, n in hits if n > 0 and not _only_negated(text, intent.patterns)]


def _only_negated(text: str, patterns: Mapping[str, Iterable[str]]) -> bool:
    """Whether every way the patterns are said (at least one, counted before) is negated."""
    return may_negate(text) and not unnegated_hits(text, patterns)


def _asked_first(text: str, tied: list[DomainIntent]) -> DomainIntent | None:
    """When each part of a message asks for one of the tied requests ("查一下…有没有欠费，另外…怎么收费的？"), the one
    the first part asks for: two requests said one after the other, not one request read two ways."""
    parts = message_parts(text)
    if len(parts) < 2:
        return None
    asked, stated = [], []
    for part in parts:
        matched = [i for i, _ in _domain_matches(part, tied)]
        if len(matched) == 1 and matched[0] not in asked:
            # "欠费上个月都交清了，就想问下…怎么收": a part that asks nothing names no request
            (asked if _asks(part) else stated).append(matched[0])
    return asked[0] if asked and len(asked) + len(stated) >= 2 else None


def _asks(part: str) -> bool:
    """Whether a part of a message asks or requests (a question mark, or a word that asks: lexicon `question_words`)."""
    return "?" in part or "？" in part or any(words_of(lex.language, "question_words").search(part) for lex in lexicons_for(part))


def _confirmation_value(text: str) -> str:
    number = compile_pattern(r"(\d+(?:[.,]\d+)?)").search(text)
    return number.group(1).replace(",", ".") if number else "accept"


def route_intent(
    text: str,
    *,
    domain_intents: Iterable[DomainIntent] = (),
    default_language: str = "en",
) -> IntentResult:
    """Route one message to a domain or built-in intent, deterministically."""
    language = detect_language(text, default_language)
    follow_up = first_match(text, FOLLOW_UP_PATTERNS, language) is not None
    domain = _domain_matches(text, domain_intents)
    # every built-in that matched, in priority order, with its match (read once)
    builtin_hits = {name: hit for name in BUILTIN_ORDER if (hit := first_match(text, BUILTIN_PATTERNS[name], language))}
    builtin = list(builtin_hits)
    if follow_up and builtin == [CONFIRMATION]:
        builtin = []  # "ok. and my wife's car, a88q15?": the "ok" opens a follow-up, it confirms nothing
    if domain:
        best = max(n for _, n in domain)
        top = [intent for intent, n in domain if n == best]  # declaration order breaks ties
        ambiguous = len(top) > 1
        if ambiguous and (first := _asked_first(text, top)) is not None:
            top = [first, *(i for i in top if i is not first)]  # "查一下…有没有欠费，另外…怎么收费的？": two requests, in order
            ambiguous = False
        chosen = top[0]
        hit = first_match(text, chosen.patterns, language)
        return IntentResult(
            intent=chosen.name,
            confidence=0.5 if ambiguous else min(0.99, 0.85 + 0.05 * best),
            pattern=hit[1] if hit else None,
            language=language,
            kind="domain",
            candidates=tuple(i.name for i, _ in sorted(domain, key=lambda d: -d[1]))
            + tuple(builtin),
            ambiguous=ambiguous,
            follow_up=follow_up,
        )
    if builtin:
        name = builtin[0]
        lang, pattern, _ = builtin_hits[name]
        return IntentResult(
            intent=name,
            confidence=0.85 if lang == language else 0.7,
            pattern=pattern,
            language=language,
            kind="builtin",
            candidates=tuple(builtin),
            confirmation_value=_confirmation_value(text) if name == CONFIRMATION else None,
            follow_up=follow_up,
        )
    return IntentResult(
        intent=UNCLEAR,
        confidence=0.0,
        pattern=None,
        language=language,
        kind="none",
        follow_up=follow_up,
    )
