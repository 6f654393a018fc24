"""The negation and hedge scope reader (NegEx over the per-language lexicon), with no database."""

from __future__ import annotations

import pytest

from conversations.engine.evidence import match_evidence
from conversations.engine.lexicon import LANGUAGES, lexicon
from conversations.engine.negation import hedge_near, negation_cue


def _cue(text: str, target: str) -> str | None:
    start = text.index(target)
    return negation_cue(text, start, start + len(target))


@pytest.mark.parametrize(("text", "target"), [
    ("it starts and runs, no rattling", "rattling"),
    ("the burner doesn't light", "light"),
    ("горелка не горит", "горит"),
    ("no enciende", "enciende"),
    ("没有异响", "异响"),
    ("异响也没有", "异响"),
    ("стука нет", "стука"),
    ("the fan runs but no air", "air"),
    ("there is no smell of gas at all", "smell of gas"),
    ("sin olor a gas", "olor a gas"),
    ("not the fridge, the water heater", "fridge"),
    ("I didn't park overnight", "overnight"),
    ("I didn’t park overnight", "overnight"),
    ("never smelled propane near it", "propane"),
])
def test_a_cue_negates_the_words_in_its_scope(text: str, target: str) -> None:
    assert _cue(text, target) is not None


@pytest.mark.parametrize(("text", "target"), [
    ("it starts and runs, no rattling", "runs"),  # the cue comes after, in another clause
    ("the burner won't stay lit", "lit"),  # looks like a negation, means it goes out
    ("горит и гаснет", "гаснет"),
    ("enciende pero se apaga", "apaga"),  # a boundary word ends the scope
    ("冰箱没有制冷", "冰箱"),  # a cue after the words negates them only when it closes the clause
    ("not the fridge, the water heater", "water heater"),
    ("I'm not sure the fuse is blown", "fuse is blown"),  # unsure is no negation (a hedge)
    ("no problem, the pump runs", "pump runs"),
    ("the fan runs but no air", "fan runs"),
    ("no, the burner lights fine", "burner lights"),  # "no," answers; it negates nothing after it
    ("it never worked well but now it hums", "hums"),  # beyond the boundary word
    ("la nevera no enfría en ningún modo", "en ningún modo"),  # negative concord: the words hold their own
    ("холодильник не холодит ни на газу ни от сети", "ни на газу ни от сети"),
])
def test_words_out_of_a_cue_s_scope_are_read_as_said(text: str, target: str) -> None:
    assert _cue(text, target) is None


def test_the_scope_ends_after_the_lexicon_s_word_limit() -> None:
    assert _cue("no, I mean there is a loud and quite annoying rattling", "rattling") is None
    assert _cue("there was not any kind of rattling", "rattling") == "not"


@pytest.mark.parametrize(("text", "value", "hedge"), [
    ("maybe 6 or 7", "6", "maybe"),
    ("around 3pm", "3pm", "around"),
    ("3点左右", "3点", "左右"),
    ("6-ish", "6", "ish"),
    ("примерно 5 этажей", "5", "примерно"),
    ("unos 5 pisos", "5", "unos"),
    ("I think it was 6", "6", "I think"),
])
def test_a_hedge_near_a_value_makes_it_unsure(text: str, value: str, hedge: str) -> None:
    start = text.index(value)
    assert hedge_near(text, start, start + len(value)) == hedge


def test_a_value_said_plainly_has_no_hedge() -> None:
    assert hedge_near("it is 6, maybe the fuse", 6, 7) is None  # the hedge is about another clause


def test_every_language_has_its_lexicon() -> None:
    for language in LANGUAGES:
        words = lexicon(language)
        assert words.negation_before.search({"en": "not", "zh": "没", "ru": "не", "es": "no"}[language])


def test_a_negated_observation_records_nothing() -> None:
    from conversations.engine.config import EvidenceRule

    rattle = EvidenceRule(id="rattle", label={"en": "Rattling"},
                          patterns={"any": [r"rattl\w*", r"异响", r"стук\w*", r"traquete\w*"]})
    for text in ("it starts and runs, no rattling", "没有异响", "стука нет", "sin traqueteo"):
        assert match_evidence(text, [rattle], "en") == [], text
    assert [m.rule_id for m in match_evidence("it runs but there's a rattling", [rattle], "en")] == ["rattle"]


# -- a number that is not sure is asked or said back, never stored silently ---------------------------
@pytest.mark.parametrize(("text", "unit", "candidates"), [
    ("maybe 6 or 7", "persons", ("6", "7")),
    ("6-7 people", "persons", ("6", "7")),
    ("六七个人", "persons", ("6", "7")),
    ("六到七层", "storeys", ("6", "7")),
    ("two and a half storeys", "storeys", ("2", "3")),
    ("2.5 floors", "storeys", ("2", "3")),
    ("两层半", "storeys", ("2", "3")),
    ("5 или 6 этажей", "storeys", ("5", "6")),
    # a second thought with doubt between the two numbers
    ("5 of us, maybe 6", "persons", ("5", "6")),
    ("12 people, possibly 14", "persons", ("12", "14")),
    ("五个人，也可能六个", "persons", ("5", "6")),
])
def test_an_answer_between_two_numbers_names_both(text: str, unit: str, candidates: tuple[str, ...]) -> None:
    from conversations.engine.forms import number_alternatives

    assert number_alternatives(text, unit) == candidates


@pytest.mark.parametrize(("text", "unit"), [("1,450 sq ft", "sq ft"), ("3", "storeys"), ("1.5", "sq ft"), ("12 people", "persons"),
                                           ("2 storeys, maybe 1800 sq ft", "sq ft"), ("we are 4 now, 6 next year", "persons")])
def test_one_number_is_one_answer(text: str, unit: str) -> None:
    from conversations.engine.forms import number_alternatives

    assert number_alternatives(text, unit) is None


# -- a pattern that says its own negation, a negation inside a positive pattern's words, doubt ---------------
def test_a_negation_inside_a_positive_reading_negates_it() -> None:
    from conversations.engine.config import EvidenceRule

    lights = EvidenceRule(id="stove_lights", patterns={"ru": [r"плит\w*.{0,20}зажига\w*"]})
    assert match_evidence("плита тоже не зажигается, газа нет", [lights], "ru") == []
    assert [m.rule_id for m in match_evidence("плита зажигается", [lights], "ru")] == ["stove_lights"]


def test_a_reading_that_says_its_own_negation_is_read_as_said() -> None:
    from conversations.engine.config import EvidenceRule
    from conversations.engine.negation import says_negation

    never = EvidenceRule(id="no_cooling", patterns={"es": [r"ning[uú]n\s+modo"]})
    assert [m.rule_id for m in match_evidence("la nevera no enfría en ningún modo", [never], "es")] == ["no_cooling"]
    assert says_negation(r"doesn'?t\s+light") and says_negation(r"не\s+гор\w*") and says_negation(r"没有?火")
    assert not says_negation(r"(?<!no )enciende") and not says_negation(r"rattl\w*")


@pytest.mark.parametrize(("text", "doubted"), [
    ("кажется, щёлкает", True),
    ("может, предохранитель сгорел, он какой-то тёмный, не уверен", True),
    ("转换器那个大保险丝可能烧了，看着有点发黑，不确定", True),
    ("not sure if the big converter fuse is blown", True),
    ("creo que zumba, pero no estoy seguro, hay mucho ruido arriba", True),
    ("not sure, but the fuse is blown", False),
    ("the fuse is blown", False),
])
def test_doubt_holds_over_an_observation_in_its_sentence(text: str, doubted: bool) -> None:
    from conversations.engine.negation import doubt_over

    word = next(w for w in ("щёлкает", "предохранитель", "保险丝", "fuse", "zumba") if w in text)
    start = text.index(word)
    assert (doubt_over(text, start, start + len(word)) is not None) is doubted


@pytest.mark.parametrize(("text", "swaps"), [
    ("hmm, make the materials steel frame instead of wood", [("materials steel frame", "wood")]),
    ("before that: it's tennis courts, not squash, sorry", [("tennis courts", "squash")]),
    ("不好意思，是网球场，不是羽毛球场", [("网球场", "羽毛球场")]),
    ("不是C组，是D组", [("D组", "C组")]),
    ("Oops, I meant Tobias, not Tim.", [("Tobias", "Tim")]),
    ("это кирпич, а не дерево", [("кирпич", "дерево")]),
    ("es de acero en vez de madera", [("acero", "madera")]),
    ("I said no rattling", []),
    ("no, not Jon — John, with an h", [("John", "Jon")]),
    ("sorry, it's a yoga studio, not a gym", [("yoga studio", "gym")]),
    ("no, nothing else in there", []),
])
def test_words_said_in_place_of_others_are_read_from_the_lexicons_templates(text: str, swaps: list) -> None:
    from conversations.engine.negation import word_swaps

    assert word_swaps(text) == swaps


@pytest.mark.parametrize(("text", "certainty"), [
    ("budget 50k or so", "likely"),
    ("deadline: sometime in Q1, roughly", "likely"),
    ("差不多明年三月份上线", "likely"),
    ("примерно 30 человек", "likely"),
    ("we think maybe the front desk", "likely"),
    ("预算嘛，三五万？真不知道", "guess"),
    ("no idea really, 10k?", "guess"),
    ("it is about tracking jobs", "certain"),
    ("what is it about", "certain"),
    ("it needs to connect to Xero", "certain"),
])
def test_an_answer_in_own_words_is_as_sure_as_its_hedges_and_rough_words(text: str, certainty: str) -> None:
    from conversations.engine.certainty import text_certainty

    assert text_certainty(text) == certainty


def test_lead_words_before_a_value_go() -> None:
    from conversations.engine.negation import after_correction, without_lead_words

    assert without_lead_words(after_correction("Sorry, it's Priya Raman")) == "Priya Raman"
    assert without_lead_words(after_correction("不好意思，名字打错了，是王晓明")) == "王晓明"


# -- what rules a reading out counts only when said; an answer that leaves out its subject ---------------------
_RUNS = {"en": [r"\bcompressor\b[^.]{0,20}\b(?:runs|starts)\b"], "es": [r"compresor[^.]{0,20}(?:arranca|funciona)"],
         "ru": [r"компрессор[^.]{0,20}(?:запускается|работает)"], "zh": [r"压缩机[^。]{0,6}(?:运转|正常启动)"]}


@pytest.mark.parametrize(("text", "language", "read"), [
    ("el compresor arranca, sin zumbido", "es", True),  # the hum is denied: it rules nothing out
    ("el compresor arranca y zumba", "es", False),
    ("компрессор работает, никакого гула", "ru", True),
    ("компрессор работает и гудит", "ru", False),
])
def test_words_that_rule_a_reading_out_count_only_when_said(text: str, language: str, read: bool) -> None:
    from conversations.engine.config import EvidenceRule

    runs = EvidenceRule(id="compressor_runs", patterns=_RUNS, unless={"es": ["zumb"], "ru": ["гул|гуд"]})
    assert bool(match_evidence(text, [runs], language)) is read


@pytest.mark.parametrize(("text", "language", "read"), [
    ("it starts and runs, no humming", "en", True),
    ("yeah it runs", "en", True),
    ("arranca y funciona, sin zumbido", "es", True),
    ("работает нормально", "ru", True),
    ("正常启动，没有异响", "zh", True),
    ("it doesn't start", "en", False),  # negated: never the positive reading
    ("the fan runs", "en", False),  # another subject named: not the compressor
    ("el ventilador funciona", "es", False),
    ("I think it starts", "en", False),  # doubted: not recorded as sure
])
def test_an_answer_that_leaves_out_its_subject_is_read_for_the_check_asked(text: str, language: str, read: bool) -> None:
    from conversations.engine.config import EvidenceRule
    from conversations.engine.evidence import match_elided

    runs = EvidenceRule(id="compressor_runs", patterns=_RUNS)
    found = [m for m in match_elided(text, [runs], language, language) if not m.hedge]
    assert bool(found) is read


def test_an_answer_opening_with_a_negation_is_not_given_a_subject_before_it() -> None:
    from conversations.engine.config import EvidenceRule
    from conversations.engine.evidence import match_elided

    hums = EvidenceRule(id="hums_no_start", patterns={"es": [r"compresor[^.]{0,20}zumba[^.]{0,20}no\s+arranca"]})
    assert match_elided("No zumba, no arranca.", [hums], "es", "es") == []


# -- the fourth walk's RV inversions ------------------------------------------------------------------------------
def test_a_negation_word_inside_a_longer_word_negates_nothing() -> None:
    """ "пахнет аммиаком" (it smells of ammonia) holds "нет аммиак" inside a word: never the smell's absence."""
    from conversations.engine.config import EvidenceRule

    smell = EvidenceRule(id="ammonia", patterns={"ru": [r"аммиак"]}, unless={"ru": [r"нет\s+аммиак"]})
    no_smell = EvidenceRule(id="no_ammonia", patterns={"ru": [r"нет\s+(?:запах\w*|аммиак\w*)"]})
    read = [m.rule_id for m in match_evidence("сзади жёлтый налёт и пахнет аммиаком", [smell, no_smell], "ru")]
    assert read == ["ammonia"]
    won_t = EvidenceRule(id="all_modes_fail", patterns={"en": [r"n'?t\b[^.]{0,30}\bany\s+mode"]})
    assert match_evidence("fridge wont cool on any mode", [won_t], "en")  # a pattern may begin inside a word on purpose


@pytest.mark.parametrize(("text", "language"), [("hace clic pero no hay chispa", "es"), ("有咔哒咔哒的声音，但是电极上看不到火花", "zh")])
def test_of_two_readings_that_exclude_each_other_the_later_is_the_fact(text: str, language: str) -> None:
    """ "clicks, but no spark": the spark denied after the click is what stands (the earlier reading is superseded)."""
    from conversations.engine.config import EvidenceRule
    from conversations.engine.evidence import add_facts
    from conversations.engine.state import ContextState

    sparks = EvidenceRule(id="spark_ok", patterns={"es": [r"hace\s+clic"], "zh": [r"有咔哒"]}, excludes=("no_spark",))
    no_spark = EvidenceRule(id="no_spark", patterns={"es": [r"\bno\s+hay\s+chispa"], "zh": [r"看不到火花"]}, excludes=("spark_ok",))
    rules = [sparks, no_spark]
    state, _ = add_facts(ContextState(), match_evidence(text, rules, language), rules=rules, turn=1, step_id=None)
    assert [f.key for f in state.facts if f.current] == ["no_spark"]


def test_a_reading_across_a_but_does_not_overrule_what_a_clause_said() -> None:
    from conversations.engine.config import EvidenceRule

    runs = EvidenceRule(id="motor_runs", patterns={"en": [r"\bmotor\s+runs\b"]}, excludes=("motor_silent",))
    silent = EvidenceRule(id="motor_silent", patterns={"en": [r"\bmotor\b[^.]{0,30}\bdoesn'?t\s+move"]}, excludes=("motor_runs",))
    assert [m.rule_id for m in match_evidence("slide motor runs but the room doesnt move", [runs, silent], "en")] == ["motor_runs"]


@pytest.mark.parametrize(("text", "target"), [("查下GHX-2207欠不欠费", "欠费"), ("那辆车还有没有别的欠费", "欠费"), ("这个贵不贵", "贵")])
def test_a_word_and_its_negative_ask_a_question_and_negate_nothing(text: str, target: str) -> None:
    assert _cue(text, target) is None


def test_a_request_said_not_to_be_wanted_is_no_request() -> None:
    from conversations.engine.intents import DomainIntent, route_intent

    arrears = DomainIntent(name="arrears_check", patterns={"zh": ["查欠费|欠费"], "en": [r"\barrears\b"]})
    verify = DomainIntent(name="fee_verify", patterns={"zh": ["对不对|收.{0,4}对"], "en": [r"\bcharged\s+right\b"]})
    routed = route_intent("我不是要查欠费哈，就想问一下这单收18块对不对", domain_intents=[arrears, verify], default_language="zh")
    assert routed.intent == "fee_verify"
    assert route_intent("I'm not asking about arrears", domain_intents=[arrears, verify]).intent != "arrears_check"
