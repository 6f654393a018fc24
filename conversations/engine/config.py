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
                     "label": {"en": "Supply voltage OK"}, "excludes": ["no_voltage"]}],
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
  "actions": [                                     // ask-then-act (seed 002)
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._serde import FrozenDict, Serializable
from ._text import normalize_patterns
from .intents import DomainIntent

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
ANSWER_TYPES = ("text", "number", "choice", "yes_no")
STEP_EXPECTS = ("any", "yes_no", "voltage", "current", "resistance", "capacitance", "pressure", "temperature", "frequency")
ALL_SUBMODES = ("main", "locate", "explain", "howto", "replan")
TOP_LEVEL_KEYS = frozenset(
    {
        "version",
        "locale",
        "modes",
        "intents",
        "slots",
        "clarify",
        "loop_guard",
        "side_topics",
        "evidence",
        "diagnostic",
        "estimate",
        "form",
        "actions",
        "description",
    }
)


class ConfigError(ValueError):
    """A conversation config that does not validate; `problems` lists (json_path, message)."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{path}: {msg}" for path, msg in problems))


def _loc(value: Any) -> FrozenDict:
    """A localized text as {locale: text}."""
    if value is None:
        return FrozenDict()
    if isinstance(value, Mapping):
        return FrozenDict({str(k): str(v) for k, v in value.items()})
    return FrozenDict({"en": str(value)})


def _pats(value: Any) -> FrozenDict:
    return FrozenDict(normalize_patterns(value))


def _strs(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


@dataclass(frozen=True)
class SlotSpec(Serializable):
    """How to find, name, ask for and validate one slot."""

    name: str
    extractor: str
    patterns: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)
    aliases: Mapping[str, str] = field(default_factory=FrozenDict)
    label: Mapping[str, str] = field(default_factory=FrozenDict)
    question: Mapping[str, str] = field(default_factory=FrozenDict)
    invalid_question: Mapping[str, str] = field(default_factory=FrozenDict)
    example: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, name: str = "") -> SlotSpec:
        """Build from config JSON."""
        data = dict(data or {})
        name = str(data.get("name") or name)
        return cls(
            name=name,
            extractor=str(data.get("extractor") or name),
            patterns=_pats(data.get("patterns")),
            aliases=FrozenDict({str(k): str(v) for k, v in (data.get("aliases") or {}).items()}),
            label=_loc(data.get("label")),
            question=_loc(data.get("question")),
            invalid_question=_loc(data.get("invalid_question")),
            example=data.get("example"),
        )


@dataclass(frozen=True)
class EvidenceRule(Serializable):
    """A pattern that turns words into a fact (optionally capturing a measured value)."""

    id: str
    type: str = "observation"
    patterns: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)
    unless: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)
    label: Mapping[str, str] = field(default_factory=FrozenDict)
    excludes: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> EvidenceRule:
        """Build from config JSON."""
        data = dict(data or {})
        return cls(
            id=str(data["id"]),
            type=str(data.get("type", "observation")),
            patterns=_pats(data.get("patterns")),
            unless=_pats(data.get("unless")),
            label=_loc(data.get("label") or data["id"]),
            excludes=_strs(data.get("excludes")),
        )


@dataclass(frozen=True)
class EstimateLineSpec(Serializable):
    """A labor line a hypothesis adds to the draft estimate."""

    label: Mapping[str, str]
    hours: float

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> EstimateLineSpec:
        """Build from config JSON."""
        data = dict(data or {})
        return cls(label=_loc(data.get("label")), hours=float(data.get("hours", 0)))


@dataclass(frozen=True)
class HypothesisSpec(Serializable):
    """A candidate cause and the evidence that supports, confirms or eliminates it."""

    id: str
    description: Mapping[str, str] = field(default_factory=FrozenDict)
    supported_by: tuple[str, ...] = ()
    confirmed_by: tuple[str, ...] = ()
    eliminated_by: tuple[str, ...] = ()
    recommendation: Mapping[str, str] = field(default_factory=FrozenDict)
    estimate: tuple[EstimateLineSpec, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> HypothesisSpec:
        """Build from config JSON."""
        data = dict(data or {})
        return cls(
            id=str(data["id"]),
            description=_loc(data.get("description") or data["id"]),
            supported_by=_strs(data.get("supported_by")),
            confirmed_by=_strs(data.get("confirmed_by")),
            eliminated_by=_strs(data.get("eliminated_by")),
            recommendation=_loc(data.get("recommendation")),
            estimate=tuple(EstimateLineSpec.from_dict(x) for x in data.get("estimate", ())),
        )


@dataclass(frozen=True)
class StepSpec(Serializable):
    """One diagnostic check: its question, topic, and what completes it."""

    id: str
    question: Mapping[str, str] = field(default_factory=FrozenDict)
    topic: str | None = None
    branch: str | None = None  # hypothesis id: only asked while that hypothesis is open
    answered_by: tuple[str, ...] = ()
    yes: str | None = None  # evidence id a bare "yes" to this check's question records
    no: str | None = None  # evidence id a bare "no" records
    # what answers the check: "any" text, or a measurement of one kind (STEP_EXPECTS) that a
    # reading of another kind, or no reading at all, never completes
    expects: str = "any"
    # a reading held against its rating ("28 µF, label says 45"): {"below": evidence id, "within":
    # evidence id, "tolerance": 0.1}, below meaning more than the tolerance under the rating
    rating: Mapping[str, Any] | None = None
    # a reading sorted by its value into evidence: [{"evidence": id, "min": x, "max": y}], min inclusive,
    # max exclusive, in the kind's canonical unit (pressure in. WC, temperature °F, others as read)
    bands: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> StepSpec:
        """Build from config JSON."""
        data = dict(data or {})
        return cls(
            id=str(data["id"]),
            question=_loc(data.get("question") or data["id"]),
            topic=data.get("topic") or data["id"],
            branch=data.get("branch"),
            answered_by=_strs(data.get("answered_by")),
            yes=data.get("yes"),
            no=data.get("no"),
            expects=str(data.get("expects") or "any"),
            rating=FrozenDict(data["rating"]) if data.get("rating") else None,
            bands=tuple(FrozenDict(b) for b in data.get("bands") or ()),
        )


@dataclass(frozen=True)
class ProcedureSpec(Serializable):
    """A diagnostic procedure for one system."""

    id: str
    label: Mapping[str, str] = field(default_factory=FrozenDict)
    patterns: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)
    steps: tuple[StepSpec, ...] = ()
    evidence: tuple[EvidenceRule, ...] = ()
    hypotheses: tuple[HypothesisSpec, ...] = ()
    # the words that name the system itself, not a symptom ("cooling"): two systems named in one
    # message are told apart by them (default: `patterns`)
    names: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ProcedureSpec:
        """Build from config JSON."""
        data = dict(data or {})
        return cls(
            id=str(data["id"]),
            label=_loc(data.get("label") or data["id"]),
            patterns=_pats(data.get("patterns")),
            steps=tuple(StepSpec.from_dict(s) for s in data.get("steps", ())),
            evidence=tuple(EvidenceRule.from_dict(e) for e in data.get("evidence", ())),
            hypotheses=tuple(HypothesisSpec.from_dict(h) for h in data.get("hypotheses", ())),
            names=_pats(data.get("names")),
        )

    @property
    def name_patterns(self) -> Mapping[str, tuple[str, ...]]:
        return self.names or self.patterns

    def step(self, step_id: str | None) -> StepSpec | None:
        """The step with this id, if any."""
        return next((s for s in self.steps if s.id == step_id), None)


@dataclass(frozen=True)
class OtherSystemSpec(Serializable):
    """A system people report faults on that has no guided procedure in this plan (issue 14:
    a propane fridge must never get the roof air conditioner's checks)."""

    id: str
    label: Mapping[str, str] = field(default_factory=FrozenDict)
    patterns: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> OtherSystemSpec:
        data = dict(data or {})
        return cls(id=str(data["id"]), label=_loc(data.get("label") or data["id"]), patterns=_pats(data.get("patterns")))


@dataclass(frozen=True)
class DiagnosticSpec(Serializable):
    """Procedures plus the replan and report vocabulary."""

    procedures: tuple[ProcedureSpec, ...] = ()
    other_systems: tuple[OtherSystemSpec, ...] = ()  # named systems with no procedure here
    no_procedure: Mapping[str, str] = field(default_factory=FrozenDict)  # "{system}", "{systems}"
    system_question: Mapping[str, str] = field(default_factory=FrozenDict)
    replan_triggers: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)
    report_patterns: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> DiagnosticSpec:
        """Build from config JSON."""
        data = dict(data or {})
        return cls(
            procedures=tuple(ProcedureSpec.from_dict(p) for p in data.get("procedures", ())),
            other_systems=tuple(OtherSystemSpec.from_dict(o) for o in data.get("other_systems", ())),
            no_procedure=_loc(data.get("no_procedure")),
            system_question=_loc(data.get("system_question")),
            replan_triggers=_pats(data.get("replan_triggers")),
            report_patterns=_pats(data.get("report_patterns")),
        )

    def procedure(self, procedure_id: str | None) -> ProcedureSpec | None:
        """The procedure with this id, if any."""
        return next((p for p in self.procedures if p.id == procedure_id), None)


@dataclass(frozen=True)
class SideTopic(Serializable):
    """A topic people ask side questions about, with brief answers per submode."""

    id: str
    patterns: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)
    answers: Mapping[str, Mapping[str, str]] = field(default_factory=FrozenDict)
    system: str | None = None  # the procedure it belongs to: preferred while that system is diagnosed

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> SideTopic:
        """Build from config JSON."""
        data = dict(data or {})
        answers = {str(k): _loc(v) for k, v in (data.get("answers") or {}).items()}
        return cls(
            id=str(data["id"]), patterns=_pats(data.get("patterns")), answers=FrozenDict(answers),
            system=data.get("system"),
        )


@dataclass(frozen=True)
class ChoiceSpec(Serializable):
    """One allowed answer of a choice question."""

    value: str
    label: Mapping[str, str] = field(default_factory=FrozenDict)
    patterns: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ChoiceSpec:
        """Build from config JSON."""
        data = dict(data or {})
        value = str(data["value"])
        return cls(
            value=value,
            label=_loc(data.get("label") or value),
            patterns=_pats(data.get("patterns") or [re.escape(value)]),
        )


@dataclass(frozen=True)
class FormQuestionSpec(Serializable):
    """One form (or interview) question."""

    id: str
    question: Mapping[str, str] = field(default_factory=FrozenDict)
    section: str | None = None
    answer_type: str = "text"
    choices: tuple[ChoiceSpec, ...] = ()
    clarify: tuple[Mapping[str, str], ...] = ()
    slot: str | None = None
    unit: str | None = None
    min_chars: int = 2
    required: bool = True
    label: Mapping[str, str] = field(default_factory=FrozenDict)  # a short name for replies ("goal", "目标")
    # filled from an answer to another question that names exactly one of its choices
    # ("It's a duplex" answers the building type and the dwelling type at once)
    fill_from_answers: bool = False
    accumulate: bool = False  # a free-text answer that gathers (constraints): a new value said later adds to it

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> FormQuestionSpec:
        """Build from config JSON."""
        data = dict(data or {})
        return cls(
            id=str(data["id"]),
            question=_loc(data.get("question") or data["id"]),
            section=data.get("section"),
            answer_type=str(data.get("answer_type", "text")),
            choices=tuple(ChoiceSpec.from_dict(c) for c in data.get("choices", ())),
            clarify=tuple(_loc(c) for c in data.get("clarify", ())),
            slot=data.get("slot"),
            unit=data.get("unit"),
            min_chars=int(data.get("min_chars", 2)),
            required=bool(data.get("required", True)),
            label=_loc(data.get("label")),
            fill_from_answers=bool(data.get("fill_from_answers", False)),
            accumulate=bool(data.get("accumulate", False)),
        )


@dataclass(frozen=True)
class FormSpec(Serializable):
    """An ordered list of questions answered one by one, with clarifying threads."""

    title: Mapping[str, str] = field(default_factory=FrozenDict)
    kind: str = "form"  # form | interview
    questions: tuple[FormQuestionSpec, ...] = ()
    max_clarify: int = 3

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> FormSpec:
        """Build from config JSON."""
        data = dict(data or {})
        return cls(
            title=_loc(data.get("title")),
            kind=str(data.get("kind", "form")),
            questions=tuple(FormQuestionSpec.from_dict(q) for q in data.get("questions", ())),
            max_clarify=int(data.get("max_clarify", 3)),
        )

    def question(self, question_id: str | None) -> FormQuestionSpec | None:
        """The question with this id, if any."""
        return next((q for q in self.questions if q.id == question_id), None)


@dataclass(frozen=True)
class ActionSpec(Serializable):
    """An action that ask-then-act may allow the workflow to offer."""

    id: str
    flow: str
    priority: int = 100
    label: Mapping[str, str] = field(default_factory=FrozenDict)
    min_history: int = 2
    requires_active_situation: bool = True
    require_recommendation: bool = False
    keywords: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)
    requires_slots: tuple[str, ...] = ()
    requires_completed_steps: tuple[str, ...] = ()
    # the guidance recommends this action when every named slot holds one of its values ({"contacted": ["no"]})
    recommended_when: Mapping[str, tuple[str, ...]] = field(default_factory=FrozenDict)
    # what to look up in the workflow's knowledge to say why (how to open the conversation, what to document)
    guidance: Mapping[str, str] = field(default_factory=FrozenDict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ActionSpec:
        """Build from config JSON."""
        data = dict(data or {})
        return cls(
            id=str(data["id"]),
            flow=str(data.get("flow") or data["id"]),
            priority=int(data.get("priority", 100)),
            label=_loc(data.get("label") or data["id"]),
            min_history=int(data.get("min_history", 2)),
            requires_active_situation=bool(data.get("requires_active_situation", True)),
            require_recommendation=bool(data.get("require_recommendation", False)),
            keywords=_pats(data.get("keywords")),
            requires_slots=_strs(data.get("requires_slots")),
            requires_completed_steps=_strs(data.get("requires_completed_steps")),
            recommended_when=FrozenDict({str(k): _strs(v) for k, v in (data.get("recommended_when") or {}).items()}),
            guidance=_loc(data.get("guidance")) if data.get("guidance") else FrozenDict(),
        )


@dataclass(frozen=True)
class ModesSpec(Serializable):
    """Which modes and submodes a plan uses."""

    enabled: tuple[str, ...] = ("conversation",)
    initial: str = "conversation"
    submodes: tuple[str, ...] = ("main", "locate", "explain", "howto")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ModesSpec:
        """Build from config JSON."""
        data = dict(data or {})
        enabled = _strs(data.get("enabled")) or ("conversation",)
        return cls(
            enabled=enabled,
            initial=str(data.get("initial") or enabled[0]),
            submodes=_strs(data.get("submodes")) or ("main", "locate", "explain", "howto"),
        )


@dataclass(frozen=True)
class LoopGuardConfig(Serializable):
    """Seed 000 anti-loop limits."""

    max_consecutive_fallbacks: int = 1
    max_step_repeats: int = 2
    topic_cooldown_turns: int = 3


@dataclass(frozen=True)
class ConversationConfig(Serializable):
    """Everything a workflow plan tells the context engine (see the module docstring)."""

    version: int = 1
    locale: str = "en"
    modes: ModesSpec = field(default_factory=ModesSpec)
    intents: tuple[DomainIntent, ...] = ()
    slots: Mapping[str, SlotSpec] = field(default_factory=FrozenDict)
    max_clarify_rounds: int = 3
    loop_guard: LoopGuardConfig = field(default_factory=LoopGuardConfig)
    side_topics: tuple[SideTopic, ...] = ()
    evidence: tuple[EvidenceRule, ...] = ()
    diagnostic: DiagnosticSpec | None = None
    estimate_enabled: bool = False
    form: FormSpec | None = None
    actions: tuple[ActionSpec, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ConversationConfig:
        """Validate and build from a plan's `"conversation"` JSON; raises ConfigError."""
        data = dict(data or {})
        problems = validate_config(data)
        if problems:
            raise ConfigError(problems)
        slots = {
            name: SlotSpec.from_dict(spec, name) for name, spec in (data.get("slots") or {}).items()
        }
        guard = data.get("loop_guard") or {}
        return cls(
            version=int(data.get("version", 1)),
            locale=str(data.get("locale", "en")),
            modes=ModesSpec.from_dict(data.get("modes")),
            intents=tuple(DomainIntent.from_dict(i) for i in data.get("intents", ())),
            slots=FrozenDict(slots),
            max_clarify_rounds=int((data.get("clarify") or {}).get("max_rounds", 3)),
            loop_guard=LoopGuardConfig(**{k: int(v) for k, v in guard.items()}),
            side_topics=tuple(SideTopic.from_dict(t) for t in data.get("side_topics", ())),
            evidence=tuple(EvidenceRule.from_dict(e) for e in data.get("evidence", ())),
            diagnostic=DiagnosticSpec.from_dict(data["diagnostic"])
            if data.get("diagnostic")
            else None,
            estimate_enabled=bool((data.get("estimate") or {}).get("enabled", False)),
            form=FormSpec.from_dict(data["form"]) if data.get("form") else None,
            actions=tuple(
                sorted(
                    (ActionSpec.from_dict(a) for a in data.get("actions", ())),
                    key=lambda a: a.priority,
                )
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        """Config JSON in the documented shape (round-trips through from_dict)."""
        raw = super().to_dict()
        raw["clarify"] = {"max_rounds": raw.pop("max_clarify_rounds")}
        raw["estimate"] = {"enabled": raw.pop("estimate_enabled")}
        for key in ("diagnostic", "form"):
            if raw[key] is None:
                raw.pop(key)
        return raw

    def intent(self, name: str | None) -> DomainIntent | None:
        """The domain intent with this name, if any."""
        return next((i for i in self.intents if i.name == name), None)

    def slot_spec(self, name: str) -> SlotSpec:
        """The declared spec for a slot, or a default one using the same-named extractor."""
        return self.slots.get(name) or SlotSpec(name=name, extractor=name)

    def procedure(self, procedure_id: str | None) -> ProcedureSpec | None:
        """The diagnostic procedure with this id, if the plan has one."""
        return self.diagnostic.procedure(procedure_id) if self.diagnostic else None

    def all_evidence(self, procedure_id: str | None) -> tuple[EvidenceRule, ...]:
        """Evidence rules in force: the plan-wide ones plus the active procedure's."""
        procedure = self.procedure(procedure_id)
        return self.evidence + (procedure.evidence if procedure else ())

    @property
    def diagnostic_enabled(self) -> bool:
        return bool(self.diagnostic and self.diagnostic.procedures)


# -- validation ---------------------------------------------------------------------------
def _check_patterns(value: Any, path: str, problems: list[tuple[str, str]]) -> None:
    for lang, patterns in normalize_patterns(value).items():
        for i, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                problems.append((f"{path}.{lang}[{i}]", f"invalid regex: {exc}"))


def _check_ids(
    items: list, path: str, problems: list[tuple[str, str]], key: str = "id"
) -> set[str]:
    seen: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or not item.get(key):
            problems.append((f"{path}[{i}]", f"must be an object with a '{key}'"))
            continue
        if item[key] in seen:
            problems.append((f"{path}[{i}].{key}", f"duplicate {key} {item[key]!r}"))
        seen.add(str(item[key]))
    return seen


def _check_procedure(
    proc: Mapping[str, Any], path: str, global_evidence: set[str], problems: list
) -> None:
    _check_patterns(proc.get("patterns"), f"{path}.patterns", problems)
    _check_patterns(proc.get("names"), f"{path}.names", problems)
    evidence = (
        _check_ids(list(proc.get("evidence", [])), f"{path}.evidence", problems) | global_evidence
    )
    for i, rule in enumerate(proc.get("evidence", [])):
        if isinstance(rule, Mapping):
            _check_patterns(rule.get("patterns"), f"{path}.evidence[{i}].patterns", problems)
            _check_patterns(rule.get("unless"), f"{path}.evidence[{i}].unless", problems)
    hypotheses = _check_ids(list(proc.get("hypotheses", [])), f"{path}.hypotheses", problems)
    for i, hyp in enumerate(proc.get("hypotheses", [])):
        for key in ("supported_by", "confirmed_by", "eliminated_by"):
            for ref in _strs((hyp or {}).get(key)):
                if ref not in evidence:
                    problems.append((f"{path}.hypotheses[{i}].{key}", f"unknown evidence {ref!r}"))
    _check_ids(list(proc.get("steps", [])), f"{path}.steps", problems)
    for i, step in enumerate(proc.get("steps", [])):
        if not isinstance(step, Mapping):
            continue
        if step.get("branch") and step["branch"] not in hypotheses:
            problems.append((f"{path}.steps[{i}].branch", f"unknown hypothesis {step['branch']!r}"))
        for ref in _strs(step.get("answered_by")):
            if ref not in evidence:
                problems.append((f"{path}.steps[{i}].answered_by", f"unknown evidence {ref!r}"))
        for key in ("yes", "no"):
            if step.get(key) and step[key] not in evidence:
                problems.append((f"{path}.steps[{i}].{key}", f"unknown evidence {step[key]!r}"))
        if step.get("expects", "any") not in STEP_EXPECTS:
            problems.append((f"{path}.steps[{i}].expects", f"must be one of {STEP_EXPECTS}"))
        rating = step.get("rating")
        if rating is not None:
            if not isinstance(rating, Mapping) or not {"below", "within"} <= set(rating):
                problems.append((f"{path}.steps[{i}].rating", "must give the evidence ids 'below' and 'within'"))
            else:
                problems += [(f"{path}.steps[{i}].rating.{k}", f"unknown evidence {rating[k]!r}") for k in ("below", "within")
                             if rating[k] not in evidence]
                tolerance = rating.get("tolerance", 0.1)
                if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 <= tolerance < 1:
                    problems.append((f"{path}.steps[{i}].rating.tolerance", "must be a number from 0 to 1"))
        _check_bands(step.get("bands"), f"{path}.steps[{i}].bands", evidence, problems)


def _check_unique_across_procedures(procedures: Any, problems: list[tuple[str, str]]) -> None:
    """Steps, evidence and hypotheses are remembered by id across systems (a switch keeps them): an id
    is used by one procedure only."""
    owner: dict[tuple[str, str], str] = {}
    for i, proc in enumerate(procedures if isinstance(procedures, list) else []):
        if not isinstance(proc, Mapping):
            continue
        for key in ("steps", "evidence", "hypotheses"):
            for j, item in enumerate(proc.get(key) or []):
                ident = item.get("id") if isinstance(item, Mapping) else None
                if not ident:
                    continue
                first = owner.setdefault((key, str(ident)), str(proc.get("id")))
                if first != proc.get("id"):
                    problems.append((f"$.diagnostic.procedures[{i}].{key}[{j}].id",
                                     f"{ident!r} is already used by procedure {first!r}"))


def _check_bands(bands: Any, path: str, evidence: set[str], problems: list[tuple[str, str]]) -> None:
    """Each band names known evidence and bounds that are numbers, min below max."""
    if bands is None:
        return
    if not isinstance(bands, list):
        problems.append((path, "must be a list of {evidence, min, max}"))
        return
    for j, band in enumerate(bands):
        if not isinstance(band, Mapping) or band.get("evidence") not in evidence:
            problems.append((f"{path}[{j}].evidence", "must name evidence of this procedure"))
            continue
        bounds = [band.get(k) for k in ("min", "max") if band.get(k) is not None]
        if any(isinstance(b, bool) or not isinstance(b, int | float) for b in bounds):
            problems.append((f"{path}[{j}]", "min and max must be numbers"))
        elif len(bounds) == 2 and bounds[0] >= bounds[1]:
            problems.append((f"{path}[{j}]", "min must be below max"))


def _check_form(form: Mapping[str, Any], problems: list[tuple[str, str]]) -> None:
    questions = list(form.get("questions", []))
    if not questions:
        problems.append(("$.form.questions", "a form needs at least one question"))
    _check_ids(questions, "$.form.questions", problems)
    for i, q in enumerate(questions):
        if not isinstance(q, Mapping):
            continue
        answer_type = q.get("answer_type", "text")
        if answer_type not in ANSWER_TYPES:
            problems.append(
                (f"$.form.questions[{i}].answer_type", f"must be one of {ANSWER_TYPES}")
            )
        if answer_type == "choice" and not q.get("choices"):
            problems.append((f"$.form.questions[{i}].choices", "a choice question needs choices"))
        for j, choice in enumerate(q.get("choices", [])):
            if not isinstance(choice, Mapping) or "value" not in choice:
                problems.append((f"$.form.questions[{i}].choices[{j}]", "needs a 'value'"))
            else:
                _check_patterns(
                    choice.get("patterns"), f"$.form.questions[{i}].choices[{j}].patterns", problems
                )


def validate_config(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every problem in a conversation config as (json_path, message); empty when valid."""
    problems: list[tuple[str, str]] = []
    if not isinstance(data, Mapping):
        return [("$", "must be an object")]
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            problems.append((f"$.{key}", "unknown key"))
    slot_names = set((data.get("slots") or {}).keys()) | set(KNOWN_EXTRACTORS)
    for name, spec in (data.get("slots") or {}).items():
        extractor = (spec or {}).get("extractor") or name
        if extractor not in KNOWN_EXTRACTORS and not (spec or {}).get("patterns"):
            problems.append(
                (f"$.slots.{name}.extractor", f"unknown extractor {extractor!r} and no patterns")
            )
        _check_patterns((spec or {}).get("patterns"), f"$.slots.{name}.patterns", problems)
    _check_ids(list(data.get("intents", [])), "$.intents", problems, key="name")
    for i, intent in enumerate(data.get("intents", [])):
        if not isinstance(intent, Mapping):
            continue
        _check_patterns(intent.get("patterns"), f"$.intents[{i}].patterns", problems)
        for key in ("required_slots", "optional_slots"):
            for slot in _strs(intent.get(key)):
                if slot not in slot_names:
                    problems.append((f"$.intents[{i}].{key}", f"unknown slot {slot!r}"))
    submodes = _strs((data.get("modes") or {}).get("submodes"))
    for sub in submodes:
        if sub not in ALL_SUBMODES:
            problems.append(("$.modes.submodes", f"unknown submode {sub!r}"))
    global_evidence = _check_ids(list(data.get("evidence", [])), "$.evidence", problems)
    for i, proc in enumerate((data.get("diagnostic") or {}).get("procedures", [])):
        if isinstance(proc, Mapping) and proc.get("id"):
            _check_procedure(proc, f"$.diagnostic.procedures[{i}]", global_evidence, problems)
        else:
            problems.append((f"$.diagnostic.procedures[{i}]", "must be an object with an 'id'"))
    _check_unique_across_procedures((data.get("diagnostic") or {}).get("procedures", []), problems)
    _check_ids(list((data.get("diagnostic") or {}).get("other_systems", [])), "$.diagnostic.other_systems", problems)
    for i, other in enumerate((data.get("diagnostic") or {}).get("other_systems", [])):
        if isinstance(other, Mapping):
            _check_patterns(other.get("patterns"), f"$.diagnostic.other_systems[{i}].patterns", problems)
    _check_ids(list(data.get("side_topics", [])), "$.side_topics", problems)
    procedure_ids = {p.get("id") for p in (data.get("diagnostic") or {}).get("procedures", []) if isinstance(p, Mapping)}
    for i, topic in enumerate(data.get("side_topics", [])):
        if isinstance(topic, Mapping) and topic.get("system") is not None and topic["system"] not in procedure_ids:
            problems.append((f"$.side_topics[{i}].system", f"unknown procedure {topic['system']!r}"))
    if data.get("form"):
        _check_form(data["form"], problems)
    _check_ids(list(data.get("actions", [])), "$.actions", problems)
    for i, action in enumerate(data.get("actions", [])):
        if isinstance(action, Mapping):
            _check_patterns(action.get("keywords"), f"$.actions[{i}].keywords", problems)
    guard = data.get("loop_guard") or {}
    for key in guard:
        if key not in ("max_consecutive_fallbacks", "max_step_repeats", "topic_cooldown_turns"):
            problems.append((f"$.loop_guard.{key}", "unknown key"))
    return problems
