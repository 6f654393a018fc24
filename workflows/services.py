"""Workflow services: the only code that writes plans, runs, reviews, consent and audit.

Each service owns its transaction. A run's state changes by compare-and-swap on
`Run.version` (after a row lock where the database has them), and its audit rows are
written in the same transaction, so a failure leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from config.errors import ApplicationError, Conflict, NotFound
from config.writes import WriteBatch, versioned_update

from . import engine
from .access import access_review, is_supervisor
from .audit import audit_record, audit_write, conversation_of
from .engine import Choice, DecisionPoint, Plan, RunState
from .handlers import StepContext, effect_for, handler_for
from .models import ConsentRecord, Review, Run, RunDocument, WorkflowPlan

MAX_AUTO_STEPS = 40


class PlanInvalid(ApplicationError):
    code = "invalid_plan"


class OptionNotAvailable(Conflict):
    code = "option_not_available"


class ConsentRequired(Conflict):
    code = "consent_required"


class StaleRunState(Conflict):
    code = "concurrent_update"


# --- plans ------------------------------------------------------------------------


def _checksum(document: Mapping[str, Any]) -> str:
    body = {k: v for k, v in document.items() if k != "version"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


_PLANS: dict[int, Plan] = {}


def plan_by_id(plan_id: int) -> Plan:
    """The parsed engine Plan of a stored version. Stored versions never change, so a
    process parses each one once; the row is read only on a miss."""
    plan = _PLANS.get(plan_id)
    if plan is None:
        row = WorkflowPlan.objects.get(pk=plan_id)
        plan = replace(engine.parse_plan(row.definition), fingerprint=row.checksum)
        if len(_PLANS) > 256:
            _PLANS.clear()
        _PLANS[plan_id] = plan
    return plan


def plan_for(plan_row: WorkflowPlan) -> Plan:
    return plan_by_id(plan_row.pk)


def plans_cache_clear() -> None:
    _PLANS.clear()


_SECTION_VALIDATORS: dict[str, Callable[[Any], list[tuple[str, str]]]] = {}


def register_plan_section(key: str, validator: Callable[[Any], list[tuple[str, str]]]) -> None:
    """Let another app validate its own section of a plan (the conversation config)."""
    _SECTION_VALIDATORS[key] = validator


def plan_problems(document: Any) -> list[engine.PlanProblem]:
    """Every problem of a plan document: the graph's and each registered section's."""
    problems = engine.validate_plan(document)
    if isinstance(document, Mapping):
        for key, validator in _SECTION_VALIDATORS.items():
            if key in document and isinstance(document[key], Mapping):
                problems += [engine.PlanProblem(f"$.{key}{path.removeprefix('$')}" if path.startswith("$") else f"$.{key}.{path}", message)
                             for path, message in validator(document[key])]
    return problems


def plan_check(document: Any) -> None:
    """Raise PlanInvalid listing every problem (with its JSON path) of a plan document."""
    problems = plan_problems(document)
    if problems:
        raise PlanInvalid(
            f"The plan has {len(problems)} problem(s).",
            details={"problems": [p.to_dict() for p in problems]},
        )


def plan_upload(*, document: Any, user=None) -> tuple[WorkflowPlan, bool]:  # noqa: ANN001
    """Validate and store a plan as a new version; the same content again changes nothing."""
    plan_check(document)
    checksum = _checksum(document)
    workflow_id = document["workflow_id"]
    with transaction.atomic():
        latest = WorkflowPlan.objects.filter(workflow_id=workflow_id).order_by("-version").first()
        if latest is not None and latest.checksum == checksum:
            return latest, False
        version = (latest.version + 1) if latest else 1
        stored = {**document, "version": version}
        row = WorkflowPlan.objects.create(
            workflow_id=workflow_id,
            version=version,
            name=engine.localize(document["name"], "en"),
            description=engine.localize(document["description"], "en"),
            definition=stored,
            checksum=checksum,
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        audit_record("plan_uploaded", actor=user, payload={"workflow_id": workflow_id, "version": version})
    return row, True


def plan_latest(workflow_id: str) -> WorkflowPlan:
    row = WorkflowPlan.objects.filter(workflow_id=workflow_id).order_by("-version").first()
    if row is None:
        raise NotFound(f"Workflow '{workflow_id}' not found.", code="workflow_not_found")
    return row


def plans_latest() -> list[WorkflowPlan]:
    """The newest version of every workflow, in a fixed number of queries."""
    latest = WorkflowPlan.objects.values("workflow_id").annotate(v=Max("version"))
    keys = {(row["workflow_id"], row["v"]) for row in latest}
    rows = WorkflowPlan.objects.filter(workflow_id__in=[k[0] for k in keys]).order_by("workflow_id", "-version")
    return [r for r in rows if (r.workflow_id, r.version) in keys]


# --- runs -------------------------------------------------------------------------


@dataclass
class Actor:
    """Who acts on a run: the user, their role, and a label for the audit."""

    user: Any
    role: str = "participant"  # participant | supervisor | engine
    label: str = ""

    @classmethod
    def of(cls, user, label: str = "") -> Actor:  # noqa: ANN001
        role = "supervisor" if is_supervisor(user) else "participant"
        return cls(user=user, role=role, label=label or f"{role}:{user.username}")


@dataclass
class RunOutcome:
    """What a service call did to a run, for the API and the conversation layer."""

    run: Run
    choice: Choice | None = None
    auto_choices: list[Choice] = field(default_factory=list)
    review: Review | None = None
    decision: DecisionPoint | None = None

    @property
    def state(self) -> RunState:
        return run_state_of(self.run)


class _LatestDocuments(Mapping):
    """The newest content of each run document, loaded only if a handler reads one."""

    def __init__(self, run: Run, state: RunState):
        self._run, self._versions, self._loaded = run, {k: d.version for k, d in state.documents.items()}, None

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._loaded is None:
            wanted = Q()
            for key, version in self._versions.items():
                wanted |= Q(key=key, version=version)
            rows = RunDocument.objects.filter(wanted, run=self._run) if self._versions else []
            self._loaded = {doc.key: doc.content for doc in rows}
        return self._loaded

    def __getitem__(self, key: str) -> dict[str, Any]:
        return self._load()[key]

    def __iter__(self):  # noqa: ANN204
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


# Lock order everywhere: a run's conversation before the run itself. The conversations app
# registers how to lock a run's conversation (this app does not import it).
_RUN_PARENT_LOCKS: list[Callable[[int], None]] = []


def register_run_parent_lock(lock: Callable[[int], None]) -> None:
    """Register a function that row-locks whatever owns a run (its conversation), by run id."""
    if lock not in _RUN_PARENT_LOCKS:
        _RUN_PARENT_LOCKS.append(lock)


def run_lock_parents(run_id: int) -> None:
    """Take the locks that come before a run's own (call inside a transaction)."""
    for lock in _RUN_PARENT_LOCKS:
        lock(run_id)


class _RunTx:
    """One locked run inside a transaction: engine state in memory, written back by CAS."""

    def __init__(self, run_id: int, *, locked: Run | None = None, audit: list | None = None):
        """Lock the run, or take one the caller already locked in this transaction.

        With an audit list the caller owns the rows and writes them (with its own) later.
        """
        run = locked
        if run is None:
            run_lock_parents(run_id)
            # The conversation comes along (the audit names it) but only the run row is locked.
            run = (Run.objects.select_for_update(of=("self",)).select_related("conversation")
                   .defer("conversation__context").filter(pk=run_id).first())
        if run is None:
            raise NotFound(f"Run {run_id} not found.")
        self.run = run
        self.plan = plan_by_id(run.plan_id)
        self.state = run_state_of(run)
        self.start_version = run.version
        self.auto_choices: list[Choice] = []
        self.review: Review | None = None
        self.owns_audit = audit is None
        self.audit: list = [] if audit is None else audit  # rows written in one bulk insert
        self.decided_on: RunState | None = None  # the state settling last computed a decision point on

    @property
    def documents(self) -> Mapping[str, dict[str, Any]]:
        return _LatestDocuments(self.run, self.state)  # includes versions written in this transaction

    def add_document(self, key: str, content: Mapping[str, Any], depends_on: tuple[str, ...] = ()) -> None:
        self.state = engine.document_add_version(self.state, key, depends_on)
        doc = self.state.documents[key]
        RunDocument.objects.create(
            run=self.run, key=key, version=doc.version, content=dict(content), upstream_versions=dict(doc.upstream_versions)
        )

    def _context(self, node_id: str) -> StepContext:
        return StepContext(
            plan=self.plan,
            node=self.plan.node(node_id),
            state=self.state,
            run_id=self.run.pk,
            owner_id=self.run.owner_id,
            documents=self.documents,
            conversation_id=_conversation_id(self.run),
        )

    def apply_edge_effect(self, choice: Choice, user) -> None:  # noqa: ANN001
        """Run the effect handler the taken edge names (e.g. apply a fee decision)."""
        edge = next(e for e in self.plan.edges_from(choice.decision.step_id) if e.option_id == choice.option.option_id)
        handler = effect_for(edge.effect)
        if handler is not None:
            self._apply(handler(self._context(choice.decision.step_id), choice.option, user), ())

    def enter_current(self) -> None:
        """Run the handler of the node the run just entered (tasks, QA, actions)."""
        node = self.plan.node(self.state.current_step)
        if node.type not in ("task", "qa", "action"):
            return
        handler = handler_for(node)
        if handler is None:
            return
        self._apply(handler(self._context(node.id)), node.depends_on)
        if node.type == "action":
            _emit_after_commit("action.executed", {"run_id": self.run.pk, "action": node.action or node.id,
                                                   "step_id": node.id, "owner_id": self.run.owner_id,
                                                   "conversation_id": _conversation_id(self.run)})

    def _apply(self, effect, depends_on: tuple[str, ...]) -> None:  # noqa: ANN001
        if effect.signals:
            self.state = self.state.with_signals(**effect.signals)
        for key, content in effect.documents.items():
            self.add_document(key, content, depends_on)

    def flush_audit(self) -> None:
        audit_write(self.audit)

    def save(self, batch: WriteBatch | None = None) -> None:
        """Write the state back if the run still has the version it was read at.

        With a batch the update joins the caller's other writes (sent together at its flush).
        """
        if self.owns_audit:
            self.flush_audit()
        state = self.state.to_dict()
        values = {"state": state, "status": self.state.status, "current_step": self.state.current_step,
                  "version": self.start_version + 1, "updated_at": timezone.now()}
        versioned_update(Run, self.run.pk, version=self.start_version, values=values, batch=batch,
                         stale=StaleRunState("The run was changed by someone else; try again."))
        if self.state.status == engine.COMPLETED and self.run.status != engine.COMPLETED:
            _emit_after_commit("run.completed", self.run)
        self.run.state, self.run.status = state, self.state.status
        self.run.current_step, self.run.version = self.state.current_step, self.start_version + 1
        self.run._parsed_state = (state, self.state)  # what run_state_of would parse back


def _conversation_id(run: Run) -> int | None:
    conversation = conversation_of(run)
    return conversation.pk if conversation is not None else None


def _settle(tx: _RunTx, actor: Actor, signals: Mapping[str, Any], locale: str) -> DecisionPoint:
    """Take every automatic step the selection rules allow, then stop at a decision point."""
    for _ in range(MAX_AUTO_STEPS):
        tx.decided_on = tx.state
        dp = engine.decision_point(tx.plan, tx.state, signals, locale=locale)
        if dp.selection.mode == "auto":
            choice = engine.choose(tx.plan, tx.state, dp.selection.option_id, signals, locale=locale, decision=dp)
            audit_record(
                "decision",
                run=tx.run,
                decision=dp,
                chosen_option_id=dp.selection.option_id,
                selection_mode="auto",
                outcome=choice.outcome,
                actor_label="engine",
                payload=_choice_payload(choice),
                buffer=tx.audit,
            )
            tx.state = choice.state
            tx.auto_choices.append(choice)
            tx.apply_edge_effect(choice, None)
            tx.enter_current()
            continue
        if dp.needs_review:
            _review_open_for_gate(tx, dp)
        elif tx.state.status == engine.WAITING_REVIEW:
            tx.state = replace(tx.state, status=engine.ACTIVE)
        return dp
    audit_record("needs_system_intervention", run=tx.run, actor_label="engine", payload={"reason": "auto-step limit reached"})
    return engine.decision_point(tx.plan, tx.state, signals, locale=locale)


def _choice_payload(choice: Choice) -> dict[str, Any]:
    payload: dict[str, Any] = {"to_step": choice.state.current_step, "from_step": choice.decision.step_id}
    if choice.breaker_tripped:
        payload["breaker_tripped"] = True
    if choice.decision.breaker:
        payload["retry_count"] = choice.state.qa_failures.get(choice.decision.breaker.generating_node, 0)
    if choice.change_workflow:
        payload["change_workflow"] = choice.change_workflow
    if choice.reason:
        payload["reason"] = choice.reason
    if choice.closest:
        payload["closest_options"] = list(choice.closest)
    return payload


def _review_title(tx: _RunTx, node) -> str:  # noqa: ANN001
    subject = tx.state.signals.get("review_subject") or {}
    if subject.get("order_no"):
        return (f"Fee mismatch on {subject['order_no']}: order {subject.get('order_total_amount')} "
                f"vs rule {subject.get('simulated_total_amount')}")
    summary = next((str(tx.documents[key].get("summary")) for key in sorted(tx.state.documents)
                    if tx.documents[key].get("summary")), "")  # what the person asked for, not a run number
    if summary:
        return f"{engine.localize(node.label)}: {summary[:120]}{'…' if len(summary) > 120 else ''}"
    return f"{engine.localize(node.label)} — {tx.plan.workflow_id} run {tx.run.pk}"


def _review_open_for_gate(tx: _RunTx, dp: DecisionPoint) -> None:
    tx.state = replace(tx.state, status=engine.WAITING_REVIEW)
    existing = Review.objects.filter(run=tx.run, step_id=dp.step_id, status=Review.Status.PENDING).first()
    if existing is not None:
        tx.review = existing
        return
    tx.state = replace(tx.state, reviews_opened=(tx.state.reviews_opened or 0) + 1)
    supervisor_view = engine.decision_point(tx.plan, tx.state, dp.signals, actor="supervisor")
    node = tx.plan.node(dp.step_id)
    reject = next((o.option_id for o in supervisor_view.options if o.outcome == node.gate.reject_outcome), "")
    tx.review = Review.objects.create(
        kind=Review.Kind.GATE,
        run=tx.run,
        workflow_id=tx.plan.workflow_id,
        step_id=dp.step_id,
        title=_review_title(tx, node),
        options=supervisor_view.snapshot(),
        signals=dp.gate.to_dict()["signals"] if dp.gate else {},
        recommended_option_id=supervisor_view.selection.recommended_option_id or "",
        recommendation_reasons=list(supervisor_view.selection.reasons),
        reject_option_id=reject,
        subject={**dict(tx.state.signals.get("review_subject") or {}), "run_id": tx.run.pk, "conversation_id": _conversation_id(tx.run)},
    )
    tx.flush_audit()  # keep the trail in order: the decisions that led here come first
    audit_record("review_opened", run=tx.run, review=tx.review, decision=supervisor_view, actor_label="engine")
    _emit_after_commit("review.pending", tx.review)


_EVENT_LISTENERS: list[Callable[[str, Any], None]] = []


def on_event(listener: Callable[[str, Any], None]) -> Callable[[str, Any], None]:
    """Subscribe to domain events (webhooks, page updates); called after commit."""
    _EVENT_LISTENERS.append(listener)
    return listener


def _emit_after_commit(event: str, subject: Any) -> None:
    for listener in list(_EVENT_LISTENERS):
        transaction.on_commit(lambda listener=listener: listener(event, subject))


def run_start(*, workflow_id: str, owner, signals: Mapping[str, Any] | None = None, locale: str = "en") -> RunOutcome:  # noqa: ANN001
    """Start a run on the newest version of a workflow and take its automatic first steps."""
    plan_row = plan_latest(workflow_id)
    plan = plan_for(plan_row)
    state = RunState.start(plan.start_step)
    if signals:
        state = state.with_signals(**signals)
    with transaction.atomic():
        run = Run.objects.create(
            plan=plan_row, owner=owner, state=state.to_dict(), status=state.status, current_step=state.current_step
        )
        audit_record("run_started", run=run, actor=owner, payload={"workflow_id": workflow_id, "plan_version": plan_row.version})
        outcome = _run_settle(run.pk, Actor.of(owner), {}, locale)
    return outcome


def _run_settle(run_id: int, actor: Actor, signals: Mapping[str, Any], locale: str) -> RunOutcome:
    tx = _RunTx(run_id)
    tx.enter_current()  # a plan may start on a task
    dp = _settle(tx, actor, signals, locale)
    tx.save()
    return RunOutcome(tx.run, auto_choices=tx.auto_choices, review=tx.review, decision=dp)


def run_signals_update(
    *, run_id: int, signals: Mapping[str, Any], actor: Actor, locale: str = "en", transient: Mapping[str, Any] | None = None,
    locked: Run | None = None, audit: list | None = None, batch: WriteBatch | None = None,
) -> RunOutcome:
    """Publish new signals (slots, facts, intent...) to a run and take any automatic steps.

    A caller that already holds the run's row lock passes the run as `locked` (no second
    read) and may pass an `audit` list to write the rows together with its own, and a
    `batch` that takes the run's update to send with its other writes. Inside the caller's
    transaction no savepoint is taken: a failure here fails the caller's work too.
    """
    with transaction.atomic(savepoint=False):
        tx = _RunTx(run_id, locked=locked, audit=audit)
        tx.state = tx.state.with_signals(**signals)
        _refresh_documents(tx, actor)
        dp = _settle(tx, actor, transient or {}, locale)
        settled = tx.state is tx.decided_on
        tx.save(batch)
    if settled and not transient:
        _remember_decision_point(tx.run, dp, locale)
    return RunOutcome(tx.run, auto_choices=tx.auto_choices, review=tx.review, decision=dp)


def _refresh_documents(tx: _RunTx, actor: Actor) -> None:
    """Redraft a document its node builds from the signals when they changed after it was written,
    at the steps the node names (`refresh_at`): what was built on the old version becomes stale."""
    for node in tx.plan.nodes.values():
        if not node.produces or node.produces not in tx.state.documents or tx.state.current_step not in (node.settings.get("refresh_at") or ()):
            continue
        handler = handler_for(node)
        content = handler(tx._context(node.id)).documents.get(node.produces) if handler is not None else None
        if content is None or dict(content) == dict(tx.documents[node.produces]):
            continue
        tx.add_document(node.produces, content, node.depends_on)
        audit_record("document_version", run=tx.run, actor=actor.user, actor_label=actor.label, buffer=tx.audit,
                     payload={"key": node.produces, "version": tx.state.documents[node.produces].version,
                              "stale_documents": engine.stale_documents(tx.state.documents), "refreshed_at": tx.state.current_step})


def run_state_of(run: Run) -> RunState:
    """The run's engine state, parsed once per stored state (a turn reads it several times)."""
    parsed = run.__dict__.get("_parsed_state")
    if parsed is None or parsed[0] is not run.state:
        parsed = run._parsed_state = (run.state, RunState.from_dict(run.state))
    return parsed[1]


def run_decision_point(run: Run, *, actor_role: str = "participant", locale: str = "en", signals=None) -> DecisionPoint:  # noqa: ANN001
    """The current options of a run, as the given role sees them (read-only).

    Without transient signals the answer depends only on the stored state, so it is worked
    out once per state, role and locale.
    """
    if signals is not None:
        return engine.decision_point(plan_by_id(run.plan_id), run_state_of(run), signals, actor=actor_role, locale=locale)
    memos = _decision_points_of(run)
    key = (actor_role, locale)
    if key not in memos:
        memos[key] = engine.decision_point(plan_by_id(run.plan_id), run_state_of(run), None, actor=actor_role, locale=locale)
    return memos[key]


def _decision_points_of(run: Run) -> dict[tuple[str, str], DecisionPoint]:
    memo = run.__dict__.get("_decision_points")
    if memo is None or memo[0] is not run.state:
        memo = run._decision_points = (run.state, {})
    return memo[1]


def _remember_decision_point(run: Run, dp: DecisionPoint, locale: str) -> None:
    """Keep the participant's decision point that settling computed on the state just saved."""
    _decision_points_of(run)[("participant", locale)] = dp


def run_option_choose(
    *,
    run_id: int,
    option_id: str,
    actor: Actor,
    consent: bool = False,
    selection_mode: str | None = None,
    signals: Mapping[str, Any] | None = None,
    locale: str = "en",
    review: Review | None = None,
    locked: Run | None = None,
    raise_refusal: bool = True,
) -> RunOutcome:
    """Choose an option for a run; a refusal is audited and reported, and changes nothing else.

    A caller that holds the run's lock passes it as `locked`. With `raise_refusal=False` a
    refusal is returned (see `choice_refusal`) instead of raised, so the caller's transaction
    can commit its audit row and raise afterwards.
    """
    with transaction.atomic():
        tx = _RunTx(run_id, locked=locked)
        outcome = _choose_in(tx, option_id, actor, consent, selection_mode, signals or {}, locale, review)
    if raise_refusal:
        _raise_for(outcome.choice)
    return outcome


def choice_refusal(outcome: RunOutcome) -> ApplicationError | None:
    """The error a refused choice answers with (option not available, consent required), or None."""
    try:
        _raise_for(outcome.choice)
    except ApplicationError as refusal:
        return refusal
    return None


def _choose_in(
    tx: _RunTx,
    option_id: str,
    actor: Actor,
    consent: bool,
    selection_mode: str | None,
    signals: Mapping[str, Any],
    locale: str,
    review: Review | None,
) -> RunOutcome:
    choice = engine.choose(tx.plan, tx.state, option_id, signals, consent=consent, actor=actor.role, locale=locale)
    dp = choice.decision
    mode = selection_mode or (
        "recommended" if dp.selection.recommended_option_id == option_id and actor.role == "engine" else "user_confirmed"
    )
    if choice.outcome in (engine.REFUSED, engine.NEEDS_CONSENT, engine.NEEDS_SYSTEM_INTERVENTION):
        event = {engine.REFUSED: "choice_refused", engine.NEEDS_CONSENT: "consent_missing"}.get(choice.outcome, "needs_system_intervention")
        audit_record(
            event, run=tx.run, decision=dp, chosen_option_id=option_id, selection_mode=mode, outcome=choice.outcome,
            actor=actor.user, actor_label=actor.label, payload=_choice_payload(choice), review=review,
        )
        return RunOutcome(tx.run, choice=choice, decision=dp)
    if choice.option.requires_consent:
        ConsentRecord.objects.create(
            run=tx.run, step_id=dp.step_id, option_id=option_id, given_by=actor.user, actor_role=actor.role
        )
        audit_record(
            "consent_recorded", run=tx.run, step_id=dp.step_id, chosen_option_id=option_id,
            actor=actor.user, actor_label=actor.label, payload={"effects_summary": choice.option.effects_summary},
        )
    audit_record(
        "decision", run=tx.run, decision=dp, chosen_option_id=option_id, selection_mode=mode, outcome=choice.outcome,
        actor=actor.user, actor_label=actor.label, buffer=tx.audit, payload={
            **_choice_payload(choice),
            "recommended_option_id": dp.selection.recommended_option_id,
            "overrode_recommendation": bool(dp.selection.recommended_option_id) and dp.selection.recommended_option_id != option_id,
        }, review=review,
    )
    tx.state = choice.state
    if choice.moved:
        tx.apply_edge_effect(choice, actor.user)
        tx.enter_current()
        _settle(tx, actor, signals, locale)
    tx.save()
    return RunOutcome(tx.run, choice=choice, auto_choices=tx.auto_choices, review=tx.review, decision=dp)


def _raise_for(choice: Choice | None) -> None:
    if choice is None:
        return
    if choice.outcome == engine.REFUSED:
        raise OptionNotAvailable(
            choice.reason,
            details={
                "blockers": list(choice.option.blockers) if choice.option else [],
                "closest_options": list(choice.closest),
                "available_options": [o.option_id for o in choice.decision.options if o.eligible],
            },
        )
    if choice.outcome == engine.NEEDS_SYSTEM_INTERVENTION:
        raise OptionNotAvailable(choice.reason, code="needs_system_intervention", details={"blockers": list(choice.decision.selection.reasons)})
    if choice.outcome == engine.NEEDS_CONSENT:
        raise ConsentRequired(
            choice.reason,
            details={"option_id": choice.option.option_id, "effects_summary": choice.option.effects_summary},
        )


def run_document_add(*, run_id: int, key: str, content: Mapping[str, Any], depends_on: tuple[str, ...] = (), actor: Actor | None = None) -> RunOutcome:
    """Record a new version of a run document (downstream documents become stale)."""
    with transaction.atomic():
        tx = _RunTx(run_id)
        tx.add_document(key, content, depends_on)
        stale = engine.stale_documents(tx.state.documents)
        if stale:
            from .tasks import propagate_staleness

            transaction.on_commit(lambda: propagate_staleness.delay(run_id))
        audit_record(
            "document_version", run=tx.run, actor=actor.user if actor else None, actor_label=actor.label if actor else "engine",
            payload={"key": key, "version": tx.state.documents[key].version, "stale_documents": stale},
        )
        tx.save()
    return RunOutcome(tx.run)


# --- reviews ----------------------------------------------------------------------

REVIEW_APPLIERS: dict[str, Callable[[Review, str, Any], None]] = {}


def review_applier(kind: str) -> Callable[[Callable[[Review, str, Any], None]], Callable[[Review, str, Any], None]]:
    """Register how a decided review of a kind takes effect (billing registers fee reviews)."""

    def register(fn: Callable[[Review, str, Any], None]) -> Callable[[Review, str, Any], None]:
        REVIEW_APPLIERS[kind] = fn
        return fn

    return register


_STATUS_FOR = {
    Review.Outcome.APPROVE: Review.Status.APPROVED,
    Review.Outcome.REJECT: Review.Status.REJECTED,
    Review.Outcome.OVERRIDE: Review.Status.OVERRIDDEN,
}


def _decided_option(review: Review, outcome: str, option_id: str | None) -> str:
    offered = {o["option_id"]: o for o in review.options}
    if outcome == Review.Outcome.APPROVE:
        chosen = review.recommended_option_id
    elif outcome == Review.Outcome.REJECT:
        chosen = review.reject_option_id
        if not chosen:
            raise ApplicationError("This review has no reject outcome; override with an option instead.", code="no_reject_option")
    else:
        if not option_id:
            raise ApplicationError("An override names the option to take (option_id).", code="option_required")
        chosen = option_id
    if chosen not in offered or offered[chosen].get("eligibility") != engine.ELIGIBLE:
        raise ApplicationError(
            f"Option '{chosen}' is not one of this review's legal outcomes.",
            code="option_not_available",
            details={"options": [k for k, o in offered.items() if o.get("eligibility") == engine.ELIGIBLE]},
        )
    return chosen


def review_decide(*, review_id: int, outcome: str, reason: str, user, option_id: str | None = None) -> Review:  # noqa: ANN001
    """Decide a pending review exactly once; the decision and its effect commit together."""
    if outcome not in Review.Outcome.values:
        raise ApplicationError(f"outcome must be one of {', '.join(Review.Outcome.values)}.", code="invalid_outcome")
    if not (reason or "").strip():
        raise ApplicationError("A decision needs a reason.", code="reason_required")
    review = access_review(user, review_id)
    if not review.is_pending:
        raise Conflict(f"Review {review_id} was already decided ({review.status}).", code="already_decided")
    chosen = _decided_option(review, outcome, option_id)
    now = timezone.now()
    with transaction.atomic():
        if review.run_id is not None:
            run_lock_parents(review.run_id)  # the conversation before the run, as everywhere
        # Compare-and-swap on the pending state: exactly one concurrent decision wins.
        won = Review.objects.filter(pk=review.pk, status=Review.Status.PENDING).update(
            status=_STATUS_FOR[outcome], decided_by=user, decided_at=now, reason=reason.strip(), decided_option_id=chosen
        )
        if won != 1:
            raise Conflict(f"Review {review_id} was already decided by someone else.", code="already_decided")
        review.refresh_from_db()
        mode = "recommended" if chosen == review.recommended_option_id else "supervisor_override"
        actor = Actor(user=user, role="supervisor", label=f"supervisor:{user.username}")
        if review.kind == Review.Kind.GATE:
            tx = _RunTx(review.run_id)
            result = _choose_in(tx, chosen, actor, True, mode, {}, "en", review)
            _raise_for(result.choice)
        else:
            REVIEW_APPLIERS[review.kind](review, chosen, user)
        audit_record(
            "review_decided", run=review.run, review=review, step_id=review.step_id, chosen_option_id=chosen,
            selection_mode=mode, outcome=review.status, actor=user, actor_label=actor.label,
            payload={"reason": review.reason, "decision": outcome, "recommended_option_id": review.recommended_option_id},
        )
        _emit_after_commit("review.decided", review)
    return review
