"""The working memory of one turn: what each stage of the pipeline found, typed.

`advance_context` (in `turn`) creates a `TurnWork`, passes it through the stages
(`turn_understand` → `turn_diagnostic` / `turn_form` → `turn_clarify`) and assembles the
`TurnOutcome` from it. It is internal and mutable by design, and never leaves the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .commands import Command
from .intents import IntentResult
from .loop_guard import ProposedAction
from .slots import ASK, CONTINUE
from .state import FinalizedAnswer
from .topics import SideQuestion

Lookups = Mapping[str, Callable[..., Any]]

# What a turn means (TurnOutcome.meaning).
ANSWER, SIDE_QUESTION, REQUEST, FOLLOW_UP = "answer", "side_question", "request", "follow_up"
EVIDENCE, DISPUTE_MEANING, CONFIRM, ESTIMATE, REPORT, UNCLEAR_MEANING = (
    "new_evidence",
    "dispute",
    "confirmation",
    "estimate",
    "report",
    "unclear",
)
# Repair: the person drops the request in progress, or asks for a human being.
CANCEL_MEANING, HANDOFF_MEANING = "cancel", "handoff"
NEXT_STEP_MEANING = "next_step"  # "what's the next step?": the check to do now, not an explanation
# Meanings that never answer the pending question nor complete a step.
NOT_AN_ANSWER = (CANCEL_MEANING, HANDOFF_MEANING)

FALLBACK_TEXT = {
    "en": "Could you tell me a bit more about what you see?",
    "zh": "能再具体说说您看到的情况吗？",
    "ru": "Расскажите, пожалуйста, чуть подробнее, что вы видите?",
    "es": "¿Podría contarme un poco más de lo que ve?",
}


# Diagnostic notices in the plan's four languages ({system}: the procedure's label).
SWITCHED_TEXT = {
    "en": "OK, let's look at the {system} instead.",
    "zh": "好的，那我们改为诊断{system}。",
    "ru": "Хорошо, тогда займёмся другой системой: {system}.",
    "es": "De acuerdo, pasemos a {system}.",
}
ALSO_TEXT = {  # a second fault mentioned mid-diagnosis: noted, the first one is finished first
    "en": "Noted: the {other} as well. Let's finish the {system} first; say “switch to the {other}” when you want to move on.",
    "zh": "记下了：{other}也有问题。我们先把{system}查完；想换过去时说“换到{other}”。",
    "ru": "Принято: ещё и {other}. Сначала закончим с системой «{system}»; скажите «перейти на {other}», когда захотите.",
    "es": "Anotado: también {other}. Terminemos primero con {system}; diga «cambiar a {other}» cuando quiera.",
}
WHICH_SYSTEM_TEXT = {  # the system was said to be wrong, and no other one named
    "en": "OK, not the {system}. What I found so far stays with it.",
    "zh": "好的，不是{system}。目前的检查结果仍记在{system}名下。",
    "ru": "Хорошо, не {system}. Найденное до сих пор остаётся за этой системой.",
    "es": "De acuerdo, no es {system}. Lo encontrado hasta ahora queda con ese sistema.",
}
TWO_SYSTEMS_TEXT = {  # {systems}: the systems the message named
    "en": "You mentioned more than one system ({systems}). I'll take them one at a time: which should we start with?",
    "zh": "您提到了不止一个系统（{systems}）。我们一次处理一个：先从哪个开始？",
    "ru": "Вы упомянули несколько систем ({systems}). Разберём их по одной: с какой начнём?",
    "es": "Ha mencionado más de un sistema ({systems}). Los veremos de uno en uno: ¿por cuál empezamos?",
}
DEFERRED_TEXT = {
    "en": "No problem: this check stays open until you've had a look.",
    "zh": "没关系，这项检查先保留，等您查看后再告诉我。",
    "ru": "Ничего страшного: эта проверка остаётся открытой, пока вы не посмотрите.",
    "es": "No hay problema: esta comprobación queda pendiente hasta que lo revise.",
}
NO_MORE_STEPS_TEXT = {
    "en": "That's every check I have for the {system}, and they don't single out one cause yet. "
          "Tell me anything else you find, or say “talk to a person” and a member of staff will take over.",
    "zh": "{system}的检查项都已完成，但还不能确定唯一的原因。您可以告诉我新的发现，或者说“转人工”由工作人员接手。",
    "ru": "Это все проверки, которые у меня есть для системы «{system}», и единственная причина пока не найдена. "
          "Сообщите, что ещё обнаружите, или напишите «поговорить с человеком», и подключится сотрудник.",
    "es": "Esas son todas las comprobaciones que tengo para {system} y aún no señalan una sola causa. "
          "Cuénteme cualquier otra cosa que encuentre, o diga «hablar con una persona» y le atenderá alguien del personal.",
}
# A check that expects a measurement, answered without one ({what}: the reading it needs).
NEED_READING_TEXT = {
    "en": "I didn't get a reading there: for this check I need {what}.",
    "zh": "这还不是读数：这项检查需要{what}。",
    "ru": "Это пока не показание: для этой проверки нужно {what}.",
    "es": "Eso todavía no es una lectura: para esta comprobación necesito {what}.",
}
WRONG_READING_TEXT = {  # {value}: what was read; {got} / {expected}: its kind and the one needed
    "en": "“{value}” is {got}, not {expected}: for this check I need {what}.",
    "zh": "“{value}”是{got}，不是{expected}：这项检查需要{what}。",
    "ru": "«{value}» — это {got}, а не {expected}: для этой проверки нужно {what}.",
    "es": "«{value}» es {got}, no {expected}: para esta comprobación necesito {what}.",
}
LEFT_OPEN_TEXT = {  # a check asked twice without an answer: not asked a third time in a row
    "en": "Let's leave that check open for now (you can still answer it later) and go on.",
    "zh": "这项检查先留着（之后仍可回答），我们继续下一项。",
    "ru": "Оставим эту проверку пока открытой (ответить можно позже) и пойдём дальше.",
    "es": "Dejemos esa comprobación pendiente por ahora (puede responderla más tarde) y sigamos.",
}
NEXT_STEP_TEXT = {
    "en": "The next step is this check:",
    "zh": "下一步是这项检查：",
    "ru": "Следующий шаг — эта проверка:",
    "es": "El siguiente paso es esta comprobación:",
}
NOTHING_LEFT_TEXT = {
    "en": "There is nothing left to check: the cause is isolated. You can write the final report now, and confirm or skip the labor estimate.",
    "zh": "已经没有需要检查的项目了：原因已定位。现在可以生成最终报告，并确认或跳过工时估算。",
    "ru": "Проверять больше нечего: причина найдена. Можно составить итоговый отчёт и подтвердить или пропустить смету работ.",
    "es": "No queda nada por comprobar: la causa está aislada. Puede redactar el informe final y confirmar u omitir el presupuesto.",
}
NEED_ANSWER_TEXT = {
    "en": "That doesn't answer the check yet: I need {what}.",
    "zh": "这还没有回答这项检查：需要{what}。",
    "ru": "Это пока не ответ на проверку: нужно {what}.",
    "es": "Eso todavía no responde a la comprobación: necesito {what}.",
}
READING_KINDS = {  # kind -> (a reading of that kind, what a check of that kind needs) per language
    "answer": {
        "en": ("an answer", "what you found at this check"),
        "zh": ("回答", "这项检查的结果"),
        "ru": ("ответ", "знать, что вы обнаружили при этой проверке"),
        "es": ("una respuesta", "lo que encontró en esta comprobación"),
    },
    "yes_no": {
        "en": ("a yes or no", "a yes or a no (or what you saw)"),
        "zh": ("是或否", "“是”或“否”（或者您看到的情况）"),
        "ru": ("да или нет", "«да» или «нет» (или что вы увидели)"),
        "es": ("un sí o un no", "un «sí» o un «no» (o lo que vio)"),
    },
    "pressure": {
        "en": ("a pressure", "the pressure you read (for example “11 in. WC” on a manometer, or “0.4 psi”)"),
        "zh": ("压力", "压力读数（例如压力计上“11英寸水柱”，或“27毫巴”）"),
        "ru": ("давление", "показание давления (например, «11 дюймов водяного столба» или «27 мбар»)"),
        "es": ("una presión", "la presión que mide (por ejemplo «11 pulgadas de columna de agua» o «27 mbar»)"),
    },
    "temperature": {
        "en": ("a temperature", "the temperature you read (for example “38 °F” or “4 °C”)"),
        "zh": ("温度", "温度读数（例如“4°C”或“38°F”）"),
        "ru": ("температура", "показание температуры (например, «4 °C»)"),
        "es": ("una temperatura", "la temperatura que mide (por ejemplo «4 °C» o «38 °F»)"),
    },
    "frequency": {
        "en": ("a frequency", "the frequency you read, in Hz (for example “60 Hz”)"),
        "zh": ("频率", "频率读数，单位赫兹（例如“60Hz”）"),
        "ru": ("частота", "показание частоты в герцах (например, «60 Гц»)"),
        "es": ("una frecuencia", "la frecuencia que mide, en Hz (por ejemplo «60 Hz»)"),
    },
    "voltage": {
        "en": ("a voltage", "the voltage you read, in volts (for example “118 V” or “12.4 V”; “0 V” if there is none)"),
        "zh": ("电压", "电压读数，单位伏（例如“118V”或“12.4V”；没有电压就说“0V”）"),
        "ru": ("напряжение", "показание напряжения в вольтах (например, «118 В» или «12,4 В»; «0 В», если напряжения нет)"),
        "es": ("un voltaje", "el voltaje que mide, en voltios (por ejemplo «118 V» o «12,4 V»; «0 V» si no hay)"),
    },
    "current": {
        "en": ("a current", "the current you read, in amps (for example “14 A”)"),
        "zh": ("电流", "电流读数，单位安（例如“14A”）"),
        "ru": ("ток", "показание тока в амперах (например, «14 А»)"),
        "es": ("una corriente", "la corriente que mide, en amperios (por ejemplo «14 A»)"),
    },
    "resistance": {
        "en": ("a resistance", "the resistance you read, in ohms (for example “3.2 Ω”)"),
        "zh": ("电阻", "电阻读数，单位欧姆（例如“3.2Ω”）"),
        "ru": ("сопротивление", "показание сопротивления в омах (например, «3,2 Ом»)"),
        "es": ("una resistencia", "la resistencia que mide, en ohmios (por ejemplo «3,2 Ω»)"),
    },
    "capacitance": {
        "en": ("a capacitance", "the capacitance you read, in µF, and its rating (for example “35 µF, rated 45”)"),
        "zh": ("电容值", "电容实测值（微法）和额定值（例如“实测35微法，额定45”）"),
        "ru": ("ёмкость", "измеренную ёмкость в мкФ и номинал (например, «35 мкФ, номинал 45»)"),
        "es": ("una capacidad", "la capacidad que mide, en µF, y su valor nominal (por ejemplo «35 µF, nominal 45»)"),
    },
}
READING_WAY_OUT_TEXT = {
    "en": "If you can't measure it now, say “not sure” and we'll go on to the next check, "
          "or say “talk to a person” and a member of staff will take over.",
    "zh": "如果现在没法测量，可以说“不确定”，我们先做下一项检查；或者说“转人工”，由工作人员接手。",
    "ru": "Если сейчас измерить нельзя, напишите «не знаю» — перейдём к следующей проверке, "
          "или напишите «поговорить с человеком», и подключится сотрудник.",
    "es": "Si ahora no puede medirlo, diga «no sé» y pasamos a la siguiente comprobación, "
          "o diga «hablar con una persona» y le atenderá alguien del personal.",
}
REPORT_NOT_YET_TEXT = {
    "en": "Here is the report so far. The cause isn't isolated yet, so it lists what is still unknown: the suspected causes and the checks not done.",
    "zh": "这是目前的报告。原因尚未定位，报告列出了仍未确定的内容：疑似原因和尚未完成的检查。",
    "ru": "Вот отчёт на данный момент. Причина ещё не найдена, поэтому в нём перечислено, что пока неизвестно: предполагаемые причины и невыполненные проверки.",
    "es": "Aquí está el informe hasta ahora. La causa aún no está aislada, así que indica lo que sigue sin saberse: las causas sospechadas y las comprobaciones pendientes.",
}
REPORT_READY_TEXT = {
    "en": "Here is the final report: complaint, cause and correction, with the labor estimate as it stands.",
    "zh": "这是最终报告：故障、原因和处理，以及当前的工时估算。",
    "ru": "Вот итоговый отчёт: жалоба, причина и исправление, со сметой работ в её текущем виде.",
    "es": "Aquí está el informe final: avería, causa y corrección, con el presupuesto de mano de obra tal como está.",
}


@dataclass
class TurnWork:
    """One pipeline run: the message, its reading, and what each stage decided."""

    text: str
    turn: int
    routed: IntentResult
    language: str
    commands: tuple[Command, ...] = ()  # validated commands from a generator (the model)
    meaning: str = ANSWER
    decision: str = CONTINUE
    reply_action: str = "acknowledge"
    action: ProposedAction = field(default_factory=lambda: ProposedAction("statement"))
    trace: list[str] = field(default_factory=list)
    # said before the question (no procedure for a named system, a switch, no checks left)
    notice: str | None = None
    deferred: bool = False  # the person has not checked yet / is unsure: the step stays open
    # a check expecting a measurement got none of its kind: it stays open (and, with no other
    # evidence, is asked again saying what reading it needs)
    step_unanswered: bool = False
    evidence_seen: list | None = None  # this system's evidence in the message, when already read this turn
    reading_needed: str | None = None
    reading_got: Any = None  # the evidence.Reading of another kind, if any
    # the question the reply must ask
    question: str | None = None
    question_kind: str | None = None
    # understanding: the request and its slots
    cancelled: bool = False
    restarted: bool = False
    handoff_requested: bool = False
    resolved_intent: str | None = None
    intent_source: str | None = None
    slots_changed: tuple[str, ...] = ()
    slots_corrected: tuple[str, ...] = ()
    slots_mentioned: tuple[str, ...] = ()
    ambiguous_slots: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # slot -> (value, label)...
    pointed_at: str | None = None  # the slot of a listed item the message points at by its details ("the one at ...")
    missing_slots: tuple[str, ...] = ()
    invalid_slots: tuple[str, ...] = ()
    side_question: SideQuestion | None = None
    returned_to_step: str | None = None
    # diagnostic
    facts_added: tuple[str, ...] = ()
    facts_superseded: tuple[str, ...] = ()
    contradictions_added: tuple[str, ...] = ()
    hypotheses_eliminated: tuple[str, ...] = ()
    hypotheses_confirmed: tuple[str, ...] = ()
    replan: bool = False
    replan_reason: str | None = None
    isolation_completed: bool = False
    completed_steps: tuple[str, ...] = ()
    next_step_id: str | None = None
    next_step_question: str | None = None
    loop_violations: tuple[str, ...] = ()
    estimate_drafted: bool = False
    estimate_changed: bool = False
    ready_for_report: bool = False
    report_blockers: tuple[str, ...] = ()
    # form
    form_question_id: str | None = None
    form_answer_finalized: FinalizedAnswer | None = None
    clarify_form_question_id: str | None = None
    form_complete: bool = False
    form_changed_question: str | None = None
    form_changed_from: str | None = None
    form_changed_to: str | None = None
    # what the message says about the actions: the one wanted, the ones refused
    action_requested: str | None = None
    actions_declined: tuple[str, ...] = ()
    form_note: str | None = None  # a word about the form to say before the rest ("nothing changed")

    def command(self, *kinds: str) -> Command | None:
        """The first given command of one of these kinds."""
        return next((c for c in self.commands if c.kind in kinds), None)

    def ask(self, question: str | None, kind: str) -> None:
        self.decision = ASK
        self.question, self.question_kind = question, kind
