"""ConversationConfig: what a workflow plan tells the context engine, as data.

A plan embeds it under its `"conversation"` key. Every section is optional; localized
texts are either a string or `{"en": ..., "zh": ..., "ru": ..., "es": ...}`; pattern sets
are either a list of regexes (any language) or `{"en": [...], "zh": [...], ...}`, matched
case-insensitively (Chinese needs no spaces).

```json
{
  "version": 1,
  "locale": "en",                                  // default reply locale
  "modes": {"enabled": ["diagnostic", "authorization", "final_report"],
            "initial": "diagnostic",               // default "conversation"
            "submodes": ["main", "locate", "explain", "howto", "replan"]},
  "intents": [                                     // domain intents, checked before built-ins
    {"name": "fee_verify", "label": {"en": "verify an order's fee", "zh": "核验订单费用"},
     "patterns": {"en": ["\\bverify\\b"], "zh": ["核验"]},
     "required_slots": ["order_no"], "optional_slots": ["plate_no"]}
  ],
  "slots": {                                       // slot specs; the key is the slot name
    "order_no": {"extractor": "order_no",          // registry: city_code lot_code plate_no order_no
                                                   //   at_time date number email text
                 "patterns": {"en": ["order\\s+(\\w+)"]},  // optional, first group is the value
                 "aliases": {"上海": "SH"},         // optional surface form -> canonical value
                 "label": {"en": "order number", "zh": "订单号"},
                 "question": {"en": "...", "zh": "..."}, "invalid_question": {"en": "... {value} ..."},
                 "example": "SCN-020"}
  },
  "clarify": {"max_rounds": 3},                    // abort after this many asks without progress
  "loop_guard": {"max_consecutive_fallbacks": 1, "max_step_repeats": 2, "topic_cooldown_turns": 3},
  "side_topics": [                                 // brief answers for side questions
    {"id": "capacitor", "patterns": {"en": ["capacitor"], "zh": ["电容"]},
     "answers": {"locate": {"en": "..."}, "explain": {"en": "..."}, "howto": {"en": "..."}}}
  ],
  "evidence": [ ...evidence rules that apply to every procedure, same shape as below... ],
  "diagnostic": {
    "system_question": {"en": "Which system are we working on?"},
    "replan_triggers": {"en": ["..."]},            // optional, built-in defaults otherwise
    "report_patterns": {"en": ["final report"]},   // optional, built-in defaults otherwise
    "other_systems": [{"id": "fridge", "label": {"en": "the refrigerator"}, "patterns": {"en": ["fridge"]}}],
                                                   // systems with no procedure here: said plainly, never
                                                   // pushed into another system's checks
    "no_procedure": {"en": "No guided procedure for {system}; I can guide {systems}."},
    "procedures": [
      {"id": "roof_ac", "label": {"en": "Roof air conditioner"},
       "patterns": {"en": ["\\b(?:ac|a/c|air\\s*con\\w*)\\b"], "zh": ["空调"]},
       "steps": [{"id": "check_power", "question": {"en": "..."}, "topic": "power",
                  "answered_by": ["voltage_ok"],   // evidence ids that complete the step
                  "yes": null, "no": null,         // evidence ids a bare yes / no records
                  "expects": "voltage",            // any (default) | voltage | current | resistance |
                                                   //   capacitance: only a reading of that kind answers
                  "branch": null}],                // or a hypothesis id: asked only while it is open
       "evidence": [{"id": "voltage_ok", "type": "measurement",
                     "patterns": {"en": ["(\\d{3})\\s*v"]}, "unless": {"en": ["\\bno\\b"]},
                     "label": {"en": "Supply voltage OK"}, "excludes": ["no_voltage"],
                     "negated": "no_voltage"}],   // optional: what a negated mention records
       "hypotheses": [{"id": "bad_capacitor", "description": {"en": "Run capacitor failed"},
                       "supported_by": ["..."], "confirmed_by": ["..."], "eliminated_by": ["..."],
                       "recommendation": {"en": "Replace the run capacitor"},
                       "estimate": [{"label": {"en": "Replace run capacitor"}, "hours": 0.5}]}]}
    ]
  },
  "estimate": {"enabled": true},                   // non-blocking draft after isolation
  "form": {"title": {"en": "Building permit"}, "kind": "form",   // or "interview"
           "max_clarify": 3,
           "questions": [{"id": "3.1.1", "section": "3.1", "question": {"en": "..."},
                          "answer_type": "choice",  // text | number | choice | yes_no
                          "choices": [{"value": "commercial", "label": {"en": "Commercial"},
                                       "patterns": {"en": ["commercial", "office"]}}],
                          "clarify": [{"en": "Is it residential or commercial?"}],
                          "slot": "building_type", "unit": null, "min_chars": 2}]},
  "actions": [                                     // ask-then-act: asked before it is done
    {"id": "draft_email", "flow": "email", "priority": 1, "label": {"en": "Draft an email"},
     "min_history": 2, "requires_active_situation": true, "require_recommendation": false,
     "keywords": {"en": ["\\bemail\\b"]}, "requires_slots": [], "requires_completed_steps": []}
  ]
}
```

`form.kind`: a "form" starts by asking its first question (the opening message is not an
answer); an "interview" takes the opening message as the answer to its first question.
Questions whose `slot` is already known (from slot patterns) are finalized without asking.
Top-level `"description"` is free text for plan authors.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import field, replace
from typing import Annotated, Any, Literal, NotRequired, get_args

import pydantic
from pydantic import BeforeValidator, ConfigDict, Field, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from workflows.engine.conditions import iter_conditions
from workflows.engine.schema import problems_from

from ._serde import FrozenDict
from .intents import DomainIntent
from .schema import (
    Localized,
    Names,
    Patterns,
    Regex,
    Spec,
    adapter,
    one_or_many,
    without_refused_fields,
)

KNOWN_EXTRACTORS = (
    "city_code",
    "lot_code",
    "plate_no",
    "order_no",
    "at_time",
    "until_time",
    "duration_minutes",
    "date",
    "number",
    "email",
    "text",
)
AnswerType = Literal["text", "number", "choice", "yes_no", "date", "time", "datetime"]
TIMED_ANSWERS = ("date", "time", "datetime")  # read by the time recognizer
DIAGNOSIS_DOCUMENTS = ("final_report", "labor_estimate", "diagnosis")  # what any diagnostic plan's conversation writes
# what answers a check: "any" text, or a measurement of one kind that a reading of another kind,
# or no reading at all, never completes
StepExpects = Literal["any", "yes_no", "voltage", "current", "resistance", "capacitance", "pressure", "temperature", "frequency"]
Submode = Literal["main", "locate", "explain", "howto", "replan"]
ANSWER_TYPES = get_args(AnswerType)
STEP_EXPECTS = get_args(StepExpects)
ALL_SUBMODES = get_args(Submode)
Id = Annotated[str, Field(min_length=1)]
Number = Annotated[float, Field(strict=True)]  # an int or a float, never true/false


class ConfigError(ValueError):
    """A conversation config that does not validate; `problems` lists (json_path, message)."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{path}: {msg}" for path, msg in problems))


def _absent_if_empty(value: Any) -> Any:
    return value or None


def _named_slots(value: Any) -> Any:
    """A slot's name is its key (unless the spec names itself)."""
    if not isinstance(value, Mapping):
        return value
    return {name: {"name": name, **spec} if isinstance(spec, Mapping) else spec for name, spec in value.items()}


# -- the shape ----------------------------------------------------------------------------------


@pydantic.dataclasses.dataclass(frozen=True)
class SlotSpec(Spec):
    """How to find, name, ask for and validate one slot."""

    name: str
    extractor: str = ""  # default: the extractor of the slot's name
    patterns: Patterns = field(default_factory=FrozenDict)  # the first group is the value
    aliases: Mapping[str, str] = field(default_factory=FrozenDict)  # surface form -> canonical value
    label: Localized = field(default_factory=FrozenDict)
    question: Localized = field(default_factory=FrozenDict)
    invalid_question: Localized = field(default_factory=FrozenDict)
    example: str | None = None
    recognizer: Literal["person_name"] | None = None  # reads the value the patterns found whole, or refuses it
    ignore_case: bool = True  # false: the patterns match case-sensitively ("[A-Z][a-z]+" for a name)

    def __post_init__(self) -> None:
        self._default("extractor", self.name)
        super().__post_init__()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, name: str = "") -> SlotSpec:
        """Build from config JSON, the slot's name given beside it."""
        return super().from_dict({"name": name, **(data or {})})


@pydantic.dataclasses.dataclass(frozen=True)
class EvidenceRule(Spec):
    """A pattern that turns words into a fact (optionally capturing a measured value)."""

    id: Id
    type: str = "observation"
    patterns: Patterns = field(default_factory=FrozenDict)
    unless: Patterns = field(default_factory=FrozenDict)
    label: Localized = field(default_factory=FrozenDict)  # default: the id
    excludes: Names = ()
    negated: str | None = None  # the evidence a negated mention records ("the blower never comes on": blower dead)

    def __post_init__(self) -> None:
        self._default("label", {"en": self.id})
        super().__post_init__()


@pydantic.dataclasses.dataclass(frozen=True)
class EstimateLineSpec(Spec):
    """A labor line a hypothesis adds to the draft estimate."""

    label: Localized = field(default_factory=FrozenDict)
    hours: float = 0.0


@pydantic.dataclasses.dataclass(frozen=True)
class HypothesisSpec(Spec):
    """A candidate cause and the evidence that supports, confirms or eliminates it."""

    id: Id
    description: Localized = field(default_factory=FrozenDict)  # default: the id
    supported_by: Names = ()
    confirmed_by: Names = ()
    eliminated_by: Names = ()
    recommendation: Localized = field(default_factory=FrozenDict)
    estimate: tuple[EstimateLineSpec, ...] = ()

    def __post_init__(self) -> None:
        self._default("description", {"en": self.id})
        super().__post_init__()


@with_config(ConfigDict(extra="forbid"))
class Rating(TypedDict):
    """A reading held against its rating ("28 µF, label says 45"): `below` when more than the
    tolerance under the rating, `within` otherwise (evidence ids)."""

    below: str
    within: str
    tolerance: NotRequired[Annotated[float, Field(strict=True, ge=0, lt=1)]]  # default 0.1


@with_config(ConfigDict(extra="forbid"))
class Band(TypedDict):
    """A reading sorted by its value into evidence: min inclusive, max exclusive, in the kind's
    canonical unit (pressure in. WC, temperature °F, others as read)."""

    evidence: str
    min: NotRequired[Number | None]
    max: NotRequired[Number | None]


@pydantic.dataclasses.dataclass(frozen=True)
class StepSpec(Spec):
    """One diagnostic check: its question, topic, and what completes it."""

    id: Id
    question: Localized = field(default_factory=FrozenDict)  # default: the id
    topic: str | None = None  # default: the id
    branch: str | None = None  # hypothesis id: only asked while that hypothesis is open
    answered_by: Names = ()
    yes: str | None = None  # evidence id a bare "yes" to this check's question records
    no: str | None = None  # evidence id a bare "no" records
    expects: StepExpects = "any"
    rating: Annotated[Rating | None, BeforeValidator(_absent_if_empty)] = None
    bands: tuple[Band, ...] = ()

    def __post_init__(self) -> None:
        self._default("question", {"en": self.id})
        self._default("topic", self.id)
        super().__post_init__()


@pydantic.dataclasses.dataclass(frozen=True)
class ProcedureSpec(Spec):
    """A diagnostic procedure for one system."""

    id: Id
    label: Localized = field(default_factory=FrozenDict)  # default: the id
    patterns: Patterns = field(default_factory=FrozenDict)
    steps: tuple[StepSpec, ...] = ()
    evidence: tuple[EvidenceRule, ...] = ()
    hypotheses: tuple[HypothesisSpec, ...] = ()
    # the words that name the system itself, not a symptom ("cooling"): two systems named in one
    # message are told apart by them (default: `patterns`)
    names: Patterns = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        self._default("label", {"en": self.id})
        # a yes/no check's own evidence, negated, is the check's no ("the bubble test found nothing": no leak found),
        # unless its rule names another negative finding
        nos = {s.yes: s.no for s in self.steps if s.expects == "yes_no" and s.yes and s.no}
        object.__setattr__(self, "evidence", tuple(
            replace(rule, negated=nos[rule.id]) if rule.negated is None and rule.id in nos else rule
            for rule in self.evidence))
        super().__post_init__()

    @property
    def name_patterns(self) -> Mapping[str, tuple[str, ...]]:
        return self.names or self.patterns

    def step(self, step_id: str | None) -> StepSpec | None:
        """The step with this id, if any."""
        return next((s for s in self.steps if s.id == step_id), None)


@pydantic.dataclasses.dataclass(frozen=True)
class OtherSystemSpec(Spec):
    """A system people report faults on that has no guided procedure in this plan (a propane
    fridge must never get the roof air conditioner's checks)."""

    id: Id
    label: Localized = field(default_factory=FrozenDict)  # default: the id
    patterns: Patterns = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        self._default("label", {"en": self.id})
        super().__post_init__()


@pydantic.dataclasses.dataclass(frozen=True)
class DiagnosticSpec(Spec):
    """Procedures plus the replan and report vocabulary."""

    procedures: tuple[ProcedureSpec, ...] = ()
    other_systems: tuple[OtherSystemSpec, ...] = ()  # named systems with no procedure here
    no_procedure: Localized = field(default_factory=FrozenDict)  # "{system}", "{systems}"
    system_question: Localized = field(default_factory=FrozenDict)
    replan_triggers: Patterns = field(default_factory=FrozenDict)
    report_patterns: Patterns = field(default_factory=FrozenDict)

    def procedure(self, procedure_id: str | None) -> ProcedureSpec | None:
        """The procedure with this id, if any."""
        return next((p for p in self.procedures if p.id == procedure_id), None)


@pydantic.dataclasses.dataclass(frozen=True)
class SideTopic(Spec):
    """A topic people ask side questions about, with brief answers per submode."""

    id: Id
    patterns: Patterns = field(default_factory=FrozenDict)
    answers: Mapping[str, Localized] = field(default_factory=FrozenDict)
    system: str | None = None  # the procedure it belongs to: preferred while that system is diagnosed


@pydantic.dataclasses.dataclass(frozen=True)
class ChoiceSpec(Spec):
    """One allowed answer of a choice question."""

    value: str
    label: Localized = field(default_factory=FrozenDict)  # default: the value
    patterns: Patterns = field(default_factory=FrozenDict)  # default: the value itself

    def __post_init__(self) -> None:
        self._default("label", {"en": self.value})
        self._default("patterns", {"any": (re.escape(self.value),)})
        super().__post_init__()


@pydantic.dataclasses.dataclass(frozen=True)
class FormQuestionSpec(Spec):
    """One form (or interview) question."""

    id: Id
    question: Localized = field(default_factory=FrozenDict)  # default: the id
    section: str | None = None
    answer_type: AnswerType = "text"
    choices: tuple[ChoiceSpec, ...] = ()
    clarify: tuple[Localized, ...] = ()
    slot: str | None = None
    unit: str | None = None
    min_chars: int = 2
    required: bool = True
    label: Localized = field(default_factory=FrozenDict)  # a short name for replies ("goal", "目标")
    # filled from an answer to another question that names exactly one of its choices
    # ("It's a duplex" answers the building type and the dwelling type at once)
    fill_from_answers: bool = False
    accumulate: bool = False  # a free-text answer that gathers (constraints): a new value said later adds to it
    # the numbers a careful clerk expects ([low, high]); one outside is confirmed before it is recorded (900 storeys)
    plausible: tuple[float, float] | None = None
    # words that show a part of a message answers this question when it is said before the question is
    # asked: a text question's matter ("brick|timber|steel"), a yes/no question's subject ("mixed use")
    patterns: Patterns = field(default_factory=FrozenDict)
    # a number's bounds: an answer outside them is refused with the bounds said (a plausible range only asks)
    min: Number | None = None
    max: Number | None = None
    # a text answer's format (an account code): the part of the reply it matches is the answer; case-sensitive
    # unless `ignore_case`; `example` is shown when a reply does not match
    # a unit the engine has no words for, said by the plan: {"one": {"en": "{n} box", "zh": "{n}箱"}, "many": {...}}
    unit_words: Mapping[str, Localized] = field(default_factory=FrozenDict)
    other: bool = False  # a choice question that takes other answers ("other, please specify"): kept as "other: …"
    after: str | None = None  # a date on or after this earlier date question's answer (a return after the collection)
    answer_pattern: Regex | None = None
    ignore_case: bool = False
    example: Localized = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        self._default("question", {"en": self.id})
        super().__post_init__()


@pydantic.dataclasses.dataclass(frozen=True)
class FormSpec(Spec):
    """An ordered list of questions answered one by one, with clarifying threads."""

    title: Localized = field(default_factory=FrozenDict)
    kind: Literal["form", "interview"] = "form"
    questions: tuple[FormQuestionSpec, ...] = ()
    max_clarify: int = 3

    def question(self, question_id: str | None) -> FormQuestionSpec | None:
        """The question with this id, if any."""
        return next((q for q in self.questions if q.id == question_id), None)


@pydantic.dataclasses.dataclass(frozen=True)
class ActionSpec(Spec):
    """An action that ask-then-act may allow the workflow to offer."""

    id: Id
    flow: str = ""  # default: the id
    priority: int = 100
    label: Localized = field(default_factory=FrozenDict)  # default: the id
    min_history: int = 2
    requires_active_situation: bool = True
    require_recommendation: bool = False
    keywords: Patterns = field(default_factory=FrozenDict)
    requires_slots: Names = ()
    # said before the action runs (its document needs them), asked for when it is chosen without: "a|b", either
    asks_before: Names = ()
    requires_completed_steps: Names = ()
    # the guidance recommends this action when every named slot holds one of its values ({"contacted": ["no"]})
    recommended_when: Mapping[str, Names] = field(default_factory=FrozenDict)
    # what to look up in the workflow's knowledge to say why (how to open the conversation, what to document)
    guidance: Localized = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        self._default("flow", self.id)
        self._default("label", {"en": self.id})
        super().__post_init__()


@pydantic.dataclasses.dataclass(frozen=True)
class DocumentSpec(Spec):
    """A document the conversation writes for a node that `produces` it, declared by the plan (no code):
    `answers`, the form's answers (or those of `fields`); `fields`, the named slots and answers; `email`, a draft
    from the `to`/`subject`/`body` templates, whose `{name}` placeholders are slots or question ids; `handler`,
    built by the workflow's pack under the name `handler` gives."""

    title: Localized = field(default_factory=FrozenDict)
    kind: Literal["answers", "fields", "email", "handler"] = "answers"
    handler: str = ""
    fields: Names = ()
    to: str = ""
    subject: Localized = field(default_factory=FrozenDict)
    body: Localized = field(default_factory=FrozenDict)


@pydantic.dataclasses.dataclass(frozen=True)
class PhrasesSpec(Spec):
    """A plan's own ways of saying what the built-in lexicon reads in every workflow: asking for one of its people
    ("can I speak to the vet?") and dropping the request ("never mind the booking"). Read beside the built-in ones,
    never when negated."""

    handoff: Patterns = field(default_factory=FrozenDict)
    cancel: Patterns = field(default_factory=FrozenDict)


@pydantic.dataclasses.dataclass(frozen=True)
class ModesSpec(Spec):
    """Which modes and submodes a plan uses."""

    enabled: Names = ()  # default: ("conversation",)
    initial: str = ""  # default: the first enabled mode
    submodes: Annotated[tuple[Submode, ...], BeforeValidator(one_or_many)] = ()  # default: all but replan

    def __post_init__(self) -> None:
        self._default("enabled", ("conversation",))
        self._default("initial", self.enabled[0])
        self._default("submodes", ("main", "locate", "explain", "howto"))
        super().__post_init__()


@pydantic.dataclasses.dataclass(frozen=True)
class LoopGuardConfig(Spec):
    """Anti-loop limits."""

    max_consecutive_fallbacks: int = 1
    max_step_repeats: int = 2
    topic_cooldown_turns: int = 3


@pydantic.dataclasses.dataclass(frozen=True)
class ClarifySettings(Spec):
    max_rounds: int = 3  # abort after this many asks without progress


@pydantic.dataclasses.dataclass(frozen=True)
class EstimateSettings(Spec):
    enabled: bool = False  # a non-blocking draft estimate after isolation


@pydantic.dataclasses.dataclass(frozen=True)
class ConversationConfig(Spec):
    """Everything a workflow plan tells the context engine (see the module docstring)."""

    version: int = 1
    locale: str = "en"
    description: str = ""  # free text for plan authors
    modes: ModesSpec = field(default_factory=ModesSpec)
    intents: tuple[DomainIntent, ...] = ()
    slots: Annotated[Mapping[str, SlotSpec], BeforeValidator(_named_slots)] = field(default_factory=FrozenDict)
    clarify: ClarifySettings = field(default_factory=ClarifySettings)
    loop_guard: LoopGuardConfig = field(default_factory=LoopGuardConfig)
    side_topics: tuple[SideTopic, ...] = ()
    evidence: tuple[EvidenceRule, ...] = ()
    diagnostic: Annotated[DiagnosticSpec | None, BeforeValidator(_absent_if_empty)] = None
    estimate: EstimateSettings = field(default_factory=EstimateSettings)
    form: Annotated[FormSpec | None, BeforeValidator(_absent_if_empty)] = None
    actions: tuple[ActionSpec, ...] = ()  # by priority once parsed (email before calendar)
    documents: Mapping[str, DocumentSpec] = field(default_factory=FrozenDict)  # by the key a node produces
    phrases: PhrasesSpec = field(default_factory=PhrasesSpec)
    signals_from: str = ""  # a signal source in the workflow's pack, read every turn (what its conditions test)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ConversationConfig:
        """Validate and build from a plan's `"conversation"` JSON; raises ConfigError."""
        config, problems = _read(data or {})
        if problems or config is None:
            raise ConfigError(problems)
        return replace(config, actions=tuple(sorted(config.actions, key=lambda a: a.priority)))

    @property
    def max_clarify_rounds(self) -> int:
        return self.clarify.max_rounds

    @property
    def estimate_enabled(self) -> bool:
        return self.estimate.enabled

    def intent(self, name: str | None) -> DomainIntent | None:
        """The domain intent with this name, if any."""
        return next((i for i in self.intents if i.name == name), None)

    def slot_spec(self, name: str) -> SlotSpec:
        """The declared spec for a slot, or a default one using the same-named extractor."""
        return self.slots.get(name) or default_slot_spec(name)

    def procedure(self, procedure_id: str | None) -> ProcedureSpec | None:
        """The diagnostic procedure with this id, if the plan has one."""
        return self.diagnostic.procedure(procedure_id) if self.diagnostic else None

    def all_evidence(self, procedure_id: str | None) -> tuple[EvidenceRule, ...]:
        """Evidence rules in force: the plan-wide ones plus the active procedure's."""
        procedure = self.procedure(procedure_id)
        return self.evidence + (procedure.evidence if procedure else ())

    @property
    def person_slot(self) -> str | None:
        """The slot that names the person the request is about (the first read as a person's name): who the
        actions' email and invitation are for."""
        return next((name for name, spec in self.slots.items() if spec.recognizer == "person_name"), None)

    @property
    def diagnostic_enabled(self) -> bool:
        return bool(self.diagnostic and self.diagnostic.procedures)


_DEFAULT_SLOT_SPECS: dict[str, SlotSpec] = {}


def default_slot_spec(name: str) -> SlotSpec:
    """The spec of an undeclared slot: its same-named extractor (built once per name, off the turn's path)."""
    spec = _DEFAULT_SLOT_SPECS.get(name)
    if spec is None:
        spec = _DEFAULT_SLOT_SPECS[name] = SlotSpec(name=name, extractor=name)
    return spec


# -- the checks between parts -------------------------------------------------------------------


def _duplicates(items: tuple[Any, ...], path: str, key: str = "id") -> list[tuple[str, str]]:
    problems, seen = [], set()
    for i, item in enumerate(items):
        value = getattr(item, key)
        if value in seen:
            problems.append((f"{path}[{i}].{key}", f"duplicate {key} {value!r}"))
        seen.add(value)
    return problems


def _unknown(refs: tuple[str, ...], known: set[str], path: str, what: str) -> list[tuple[str, str]]:
    return [(path, f"unknown {what} {ref!r}") for ref in refs if ref not in known]


def _procedure_problems(proc: ProcedureSpec, path: str, global_evidence: set[str]) -> list[tuple[str, str]]:
    problems = _duplicates(proc.evidence, f"{path}.evidence") + _duplicates(proc.hypotheses, f"{path}.hypotheses")
    evidence = {e.id for e in proc.evidence} | global_evidence
    hypotheses = {h.id for h in proc.hypotheses}
    for i, rule in enumerate(proc.evidence):
        problems += _unknown((rule.negated,) if rule.negated else (), evidence, f"{path}.evidence[{i}].negated", "evidence")
    for i, hyp in enumerate(proc.hypotheses):
        for key in ("supported_by", "confirmed_by", "eliminated_by"):
            problems += _unknown(getattr(hyp, key), evidence, f"{path}.hypotheses[{i}].{key}", "evidence")
    problems += _duplicates(proc.steps, f"{path}.steps")
    for i, step in enumerate(proc.steps):
        at = f"{path}.steps[{i}]"
        if step.branch and step.branch not in hypotheses:
            problems.append((f"{at}.branch", f"unknown hypothesis {step.branch!r}"))
        problems += _unknown(step.answered_by, evidence, f"{at}.answered_by", "evidence")
        for key in ("yes", "no"):
            problems += _unknown((getattr(step, key),) if getattr(step, key) else (), evidence, f"{at}.{key}", "evidence")
        if step.rating:
            for key in ("below", "within"):
                problems += _unknown((step.rating[key],), evidence, f"{at}.rating.{key}", "evidence")
        for j, band in enumerate(step.bands):
            if band["evidence"] not in evidence:
                problems.append((f"{at}.bands[{j}].evidence", "must name evidence of this procedure"))
            elif band.get("min") is not None and band.get("max") is not None and band["min"] >= band["max"]:
                problems.append((f"{at}.bands[{j}]", "min must be below max"))
    return problems


def _unique_across_procedures(procedures: tuple[ProcedureSpec, ...]) -> list[tuple[str, str]]:
    """Steps, evidence and hypotheses are remembered by id across systems (a switch keeps them): an id
    is used by one procedure only."""
    problems, owner = [], {}
    for i, proc in enumerate(procedures):
        for key in ("steps", "evidence", "hypotheses"):
            for j, item in enumerate(getattr(proc, key)):
                first = owner.setdefault((key, item.id), proc.id)
                if first != proc.id:
                    problems.append((f"$.diagnostic.procedures[{i}].{key}[{j}].id",
                                     f"{item.id!r} is already used by procedure {first!r}"))
    return problems


def _form_problems(form: FormSpec) -> list[tuple[str, str]]:
    problems = [] if form.questions else [("$.form.questions", "a form needs at least one question")]
    problems += _duplicates(form.questions, "$.form.questions")
    for i, question in enumerate(form.questions):
        at = f"$.form.questions[{i}]"
        if question.answer_type == "choice" and not question.choices:
            problems.append((f"{at}.choices", "a choice question needs choices"))
        for key in ("min", "max"):
            if getattr(question, key) is not None and question.answer_type != "number":
                problems.append((f"{at}.{key}", "only a number question has bounds"))
        if question.min is not None and question.max is not None and question.min > question.max:
            problems.append((f"{at}.min", "must not be above max"))
        earlier = {q.id: q for q in form.questions[:i]}
        if question.after is not None and (question.answer_type not in TIMED_ANSWERS or question.after not in earlier
                                           or earlier[question.after].answer_type not in TIMED_ANSWERS):
            problems.append((f"{at}.after", "names an earlier date question, on a date question"))
        if question.unit_words and (question.answer_type != "number" or not question.unit
                                    or set(question.unit_words) - {"one", "many"} or "many" not in question.unit_words):
            problems.append((f"{at}.unit_words", 'a number question\'s unit, as {"one": text, "many": text} with {n}'))
        if question.other and question.answer_type != "choice":
            problems.append((f"{at}.other", "only a choice question takes other answers"))
        if question.answer_pattern is not None and question.answer_type != "text":
            problems.append((f"{at}.answer_pattern", "only a text question has a format"))
    return problems


def _reference_problems(config: ConversationConfig) -> list[tuple[str, str]]:
    """What the shape cannot say: unique ids, references to slots, evidence, hypotheses and
    procedures that exist, a slot that can be found, a form with questions."""
    problems: list[tuple[str, str]] = []
    for name, spec in config.slots.items():
        if spec.extractor not in KNOWN_EXTRACTORS and not spec.patterns:
            problems.append((f"$.slots.{name}.extractor", f"unknown extractor {spec.extractor!r} and no patterns"))
    slot_names = set(config.slots) | set(KNOWN_EXTRACTORS)
    problems += _duplicates(config.intents, "$.intents", key="name")
    for i, intent in enumerate(config.intents):
        for key in ("required_slots", "optional_slots"):
            problems += _unknown(getattr(intent, key), slot_names, f"$.intents[{i}].{key}", "slot")
    problems += _duplicates(config.evidence, "$.evidence")
    global_evidence = {e.id for e in config.evidence}
    procedures = config.diagnostic.procedures if config.diagnostic else ()
    for i, proc in enumerate(procedures):
        problems += _procedure_problems(proc, f"$.diagnostic.procedures[{i}]", global_evidence)
    problems += _unique_across_procedures(procedures)
    if config.diagnostic:
        problems += _duplicates(config.diagnostic.other_systems, "$.diagnostic.other_systems")
    problems += _duplicates(config.side_topics, "$.side_topics")
    procedure_ids = {p.id for p in procedures}
    for i, topic in enumerate(config.side_topics):
        if topic.system is not None and topic.system not in procedure_ids:
            problems.append((f"$.side_topics[{i}].system", f"unknown procedure {topic.system!r}"))
    if config.form:
        problems += _form_problems(config.form)
    return problems + _duplicates(config.actions, "$.actions") + _action_problems(config) + _document_problems(config)


def _document_problems(config: ConversationConfig) -> list[tuple[str, str]]:
    """A document names fields that exist, an answers document needs a form, an email a body."""
    problems: list[tuple[str, str]] = []
    known = slot_names(config) | ({q.id for q in config.form.questions} if config.form else set())
    for key, spec in config.documents.items():
        at = f"$.documents.{key}"
        problems += _unknown(spec.fields, known, f"{at}.fields", "slot or question")
        if spec.kind == "answers" and config.form is None:
            problems.append((f"{at}.kind", "an answers document needs a form; use \"fields\" for slots"))
        if (spec.kind == "handler") != bool(spec.handler):
            problems.append((f"{at}.handler", "names the builder of a handler document, and only of one"))
        if spec.kind == "email" and not spec.body:
            problems.append((f"{at}.body", "an email document needs a body"))
        for name in _placeholders(spec):
            if name not in known:
                problems.append((at, f"the template names {{{name}}}, which is no slot or question"))
    return problems


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _placeholders(spec: DocumentSpec) -> list[str]:
    texts = [spec.to, *spec.subject.values(), *spec.body.values()]
    return list(dict.fromkeys(m.group(1) for text in texts for m in _PLACEHOLDER.finditer(text)))


# the day, time, length and address an action's request says (`action_prefs` reads them)
ACTION_SLOTS = ("call_day", "call_time", "call_minutes", "employee_email")


def unmet_groups(groups: Iterable[str], held: Container[str]) -> tuple[str, ...]:
    """The groups of names none of which is held ("call_day|call_time": either will do)."""
    return tuple(group for group in groups if not any(name in held for name in group.split("|")))


def slot_names(config: ConversationConfig) -> set[str]:
    """Every slot a plan's parts may name: declared, read by a built-in extractor, or a form question's."""
    form_slots = {q.slot for q in config.form.questions if q.slot} if config.form else set()
    return set(config.slots) | set(KNOWN_EXTRACTORS) | form_slots | (set(ACTION_SLOTS) if config.actions else set())


def _action_problems(config: ConversationConfig) -> list[tuple[str, str]]:
    """An action names slots and steps that exist (a typo there would block the action for good)."""
    problems: list[tuple[str, str]] = []
    slots = slot_names(config)
    steps = {s.id for p in (config.diagnostic.procedures if config.diagnostic else ()) for s in p.steps}
    steps |= {q.id for q in config.form.questions} if config.form else set()
    for i, action in enumerate(config.actions):
        problems += _unknown(action.requires_slots, slots, f"$.actions[{i}].requires_slots", "slot")
        problems += _unknown(tuple(n for group in action.asks_before for n in group.split("|")), slots,
                             f"$.actions[{i}].asks_before", "slot")
        problems += _unknown(tuple(action.recommended_when), slots, f"$.actions[{i}].recommended_when", "slot")
        problems += _unknown(action.requires_completed_steps, steps, f"$.actions[{i}].requires_completed_steps", "step")
    return problems


def plan_reference_problems(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What a plan's graph says about its conversation, checked against it: each action has a node that runs
    it, `action_allowed` names a declared action, `slots.X` and `validated.X` name a slot the conversation
    can fill. Paths are the plan's; a conversation with problems of its own is not checked here."""
    config, problems = _read(document.get("conversation") or {})
    if config is None or problems:
        return []
    nodes = [n for n in _listed(document.get("nodes")) if isinstance(n, Mapping)]
    run_by_node = {n.get("action") for n in nodes if n.get("type") == "action"}
    found = [(f"$.conversation.actions[{i}].id", f"no action node runs {a.id!r} (a node with \"type\": \"action\", \"action\": {a.id!r})")
             for i, a in enumerate(config.actions) if a.id not in run_by_node]
    found += [(f"$.nodes[{i}].mode", f"unknown mode {n['mode']!r}; the conversation enables: {', '.join(config.modes.enabled)}")
              for i, n in enumerate(_listed(document.get("nodes"))) if isinstance(n, Mapping) and isinstance(n.get("mode"), str)
              and n["mode"] not in config.modes.enabled]
    # a document the conversation writes ("conversation.document") is one the plan declares, or one a diagnosis writes
    found += [(f"$.nodes[{i}].produces", f"no document {n.get('produces')!r} in conversation.documents")
              for i, n in enumerate(_listed(document.get("nodes"))) if isinstance(n, Mapping) and n.get("task") == "conversation.document"
              and n.get("produces") not in config.documents and not (config.diagnostic_enabled and n.get("produces") in DIAGNOSIS_DOCUMENTS)]
    actions, slots = {a.id for a in config.actions}, slot_names(config)
    for i, edge in enumerate(_listed(document.get("edges"))):
        conditions = edge.get("conditions") if isinstance(edge, Mapping) else None
        for path, condition in iter_conditions(conditions, f"$.edges[{i}].conditions"):
            if condition.get("type") == "action_allowed" and condition.get("action") not in actions:
                found.append((f"{path}.action", f"unknown action {condition.get('action')!r}; declared: {', '.join(sorted(actions)) or 'none'}"))
            root, _, name = str(condition.get("key") or "").partition(".")
            if root in ("slots", "validated") and name and name.split(".")[0] not in slots:
                found.append((f"{path}.key", f"unknown slot {name.split('.')[0]!r}"))
    return found


def _listed(items: Any) -> list[Any]:
    return items if isinstance(items, list) else []


def _read(data: Any) -> tuple[ConversationConfig | None, list[tuple[str, str]]]:
    """The config (actions in document order) and every problem in it: the shape's, then the
    references among the parts that are well-formed."""
    if not isinstance(data, Mapping):
        return None, [("$", "must be an object")]
    config_adapter = adapter(ConversationConfig)
    try:
        config = config_adapter.validate_python(data)
    except ValidationError as error:
        problems = problems_from(error)
        try:  # the rest still has its references checked, so one upload lists every problem
            rest = config_adapter.validate_python(without_refused_fields(data, error))
        except ValidationError:
            return None, problems
        return None, problems + _reference_problems(rest)
    return config, _reference_problems(config)


def validate_config(data: Any) -> list[tuple[str, str]]:
    """Every problem in a conversation config as (json_path, message); empty when valid."""
    return _read(data)[1]
