"""Runs: starting one, publishing signals, choosing options, adding documents.

A run's state changes by compare-and-swap on `Run.version`, under the run's row lock (and
its conversation's, taken first), and its audit rows are written in the same transaction,
so a failure leaves nothing half-written. The services that change a run take the Run as
`run_for_update` locked it (or as the caller locked it, with its conversation, in the same
transaction).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from config.errors import ApplicationError, Conflict, NotFound
from workflows import engine
from workflows.access import is_supervisor
from workflows.audit import audit_record, audit_row, audit_write, conversation_of
from workflows.engine import Choice, DecisionPoint, RunState
from workflows.handlers import StepContext, effect_for, handler_for
from workflows.models import ConsentRecord, Review, Run, RunDocument
from workflows.selectors import plan_by_id, plan_latest, run_decision_point

from .events import emit_on_commit

MAX_AUTO_STEPS = 40


class OptionNotAvailable(Conflict):
    code = "option_not_available"


class ConsentRequired(Conflict):
    code = "consent_required"


class StaleRunState(Conflict):
    code = "concurrent_update"


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
    settled_for: str | None = None  # the locale `decision` is the participant's options in, as the run now stands

    @property
    def state(self) -> RunState:
        return self.run.engine_state

    def options_now(self, locale: str) -> DecisionPoint:
        """The participant's options at the run's current state (no second computation when settling left them)."""
        if self.settled_for == locale and self.decision is not None:
            return self.decision
        return run_decision_point(self.run, locale=locale)


class LatestDocuments(Mapping):
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


def run_for_update(run_id: int) -> Run:
    """Lock a run (its conversation first), inside the caller's transaction."""
    run_lock_parents(run_id)
    # The conversation comes along (the audit names it) but only the run row is locked.
    run = (Run.objects.select_for_update(of=("self",)).select_related("conversation")
           .defer("conversation__context").filter(pk=run_id).first())
    if run is None:
        raise NotFound(f"Run {run_id} not found.")
    return run


class RunTransaction:
    """One locked run inside a transaction: engine state in memory, written back by CAS."""

    def __init__(self, run: Run):
        """Work on a run its caller locked in the current transaction."""
        self.run = run
        self.plan = plan_by_id(run.plan_id)
        self.state = run.engine_state
        self.start_version = run.version
        self.auto_choices: list[Choice] = []
        self.review: Review | None = None
        self.audit: list = []  # this change's audit rows, written in one insert when it is saved
        self.decided_on: RunState | None = None  # the state settling last computed a decision point on

    @property
    def documents(self) -> Mapping[str, dict[str, Any]]:
        return LatestDocuments(self.run, self.state)  # includes versions written in this transaction

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
            emit_on_commit("action.executed", {"run_id": self.run.pk, "action": node.action or node.id,
                                                   "step_id": node.id, "owner_id": self.run.owner_id,
                                                   "conversation_id": _conversation_id(self.run)})

    def _apply(self, effect, depends_on: tuple[str, ...]) -> None:  # noqa: ANN001
        if effect.signals:
            self.state = self.state.with_signals(**effect.signals)
        for key, content in effect.documents.items():
            self.add_document(key, content, depends_on)

    def flush_audit(self) -> None:
        audit_write(self.audit)

    def save(self) -> None:
        """Write the audit rows, then the state if the run still has the version it was read at."""
        self.flush_audit()
        state = self.state.to_dict()
        now = timezone.now()
        written = Run.objects.filter(pk=self.run.pk, version=self.start_version).update(
            state=state, status=self.state.status, current_step=self.state.current_step,
            version=self.start_version + 1, updated_at=now)
        if written != 1:
            raise StaleRunState("The run was changed by someone else; try again.")
        if self.state.status == engine.COMPLETED and self.run.status != engine.COMPLETED:
            emit_on_commit("run.completed", self.run)
        self.run.state, self.run.status, self.run.updated_at = state, self.state.status, now
        self.run.current_step, self.run.version = self.state.current_step, self.start_version + 1
        self.run.engine_state = self.state


def _conversation_id(run: Run) -> int | None:
    conversation = conversation_of(run)
    return conversation.pk if conversation is not None else None


def _settle(tx: RunTransaction, actor: Actor, signals: Mapping[str, Any], locale: str) -> DecisionPoint:
    """Take every automatic step the selection rules allow, then stop at a decision point."""
    for _ in range(MAX_AUTO_STEPS):
        tx.decided_on = tx.state
        dp = engine.decision_point(tx.plan, tx.state, signals, locale=locale)
        if tx.state.status == engine.WAITING_REVIEW and _pending_review_holds(tx, dp):
            return dp  # the supervisor decides this gate: new signals meanwhile do not decide it instead
        if dp.selection.mode == "auto":
            choice = engine.choose(tx.plan, tx.state, dp.selection.option_id, signals, locale=locale, decision=dp)
            tx.audit.append(audit_row(
                "decision",
                run=tx.run,
                decision=dp,
                chosen_option_id=dp.selection.option_id,
                selection_mode="auto",
                outcome=choice.outcome,
                actor_label="engine",
                payload=_choice_payload(choice),
            ))
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


def _pending_review_holds(tx: RunTransaction, dp: DecisionPoint) -> bool:
    """Whether a review waits on the step the run stands at (it is the review the page shows)."""
    pending = Review.objects.filter(run=tx.run, step_id=dp.step_id, status=Review.Status.PENDING).first()
    if pending is not None:
        tx.review = pending
    return pending is not None


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


def _review_title(tx: RunTransaction, node) -> str:  # noqa: ANN001
    """The title the tool that asked for the review gave its subject; else what the person asked for."""
    subject = tx.state.signals.get("review_subject") or {}
    if subject.get("title"):
        return str(subject["title"])[:200]
    summary = next((str(tx.documents[key].get("summary")) for key in sorted(tx.state.documents)
                    if tx.documents[key].get("summary")), "")  # what the person asked for, not a run number
    if summary:
        return f"{engine.localize(node.label)}: {summary[:120]}{'…' if len(summary) > 120 else ''}"
    return f"{engine.localize(node.label)} — {tx.plan.workflow_id} run {tx.run.pk}"


def _review_open_for_gate(tx: RunTransaction, dp: DecisionPoint) -> None:
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
    emit_on_commit("review.pending", tx.review)


def run_start(*, workflow_id: str, owner, signals: Mapping[str, Any] | None = None, locale: str = "en") -> RunOutcome:  # noqa: ANN001
    """Start a run on the newest version of a workflow and take its automatic first steps."""
    plan_row = plan_latest(workflow_id)
    plan = plan_by_id(plan_row.pk)
    state = RunState.start(plan.start_step)
    if signals:
        state = state.with_signals(**signals)
    with transaction.atomic():
        run = Run.objects.create(
            plan=plan_row, owner=owner, state=state.to_dict(), status=state.status, current_step=state.current_step
        )
        audit_record("run_started", run=run, actor=owner, payload={"workflow_id": workflow_id, "plan_version": plan_row.version})
        tx = RunTransaction(run)  # created in this transaction: no one else sees it yet
        tx.enter_current()  # a plan may start on a task
        dp = _settle(tx, Actor.of(owner), {}, locale)
        tx.save()
    return RunOutcome(tx.run, auto_choices=tx.auto_choices, review=tx.review, decision=dp)


def run_signals_update(
    *, run: Run, signals: Mapping[str, Any], actor: Actor, locale: str = "en", transient: Mapping[str, Any] | None = None,
) -> RunOutcome:
    """Publish new signals (slots, facts, intent...) to a run and take any automatic steps.

    Call inside a transaction that holds the run's lock (`run_for_update`, or the
    conversation's lock taken with its run); a failure here fails the caller's work too.
    """
    with transaction.atomic(savepoint=False):
        tx = RunTransaction(run)
        tx.state = tx.state.with_signals(**signals)
        _refresh_documents(tx, actor)
        dp = _settle(tx, actor, transient or {}, locale)
        settled = tx.state is tx.decided_on and not transient
        tx.save()
    return RunOutcome(tx.run, auto_choices=tx.auto_choices, review=tx.review, decision=dp,
                      settled_for=locale if settled else None)


def _refresh_documents(tx: RunTransaction, actor: Actor) -> None:
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
        tx.audit.append(audit_row(
            "document_version", run=tx.run, actor=actor.user, actor_label=actor.label,
            payload={"key": node.produces, "version": tx.state.documents[node.produces].version,
                     "stale_documents": engine.stale_documents(tx.state.documents), "refreshed_at": tx.state.current_step}))


def run_option_choose(
    *,
    run: Run,
    option_id: str,
    actor: Actor,
    consent: bool = False,
    selection_mode: str | None = None,
    signals: Mapping[str, Any] | None = None,
    locale: str = "en",
    review: Review | None = None,
    raise_refusal: bool = True,
) -> RunOutcome:
    """Choose an option for a locked run; a refusal is audited and reported, and changes nothing else.

    With `raise_refusal=False` a refusal is returned (see `choice_refusal`) instead of
    raised, so the caller's transaction can commit its audit row and raise afterwards.
    """
    with transaction.atomic():
        tx = RunTransaction(run)
        outcome = choose_in(tx, option_id, actor, consent, selection_mode, signals or {}, locale, review)
    if raise_refusal:
        raise_for_refusal(outcome.choice)
    return outcome


def choice_refusal(outcome: RunOutcome) -> ApplicationError | None:
    """The error a refused choice answers with (option not available, consent required), or None."""
    try:
        raise_for_refusal(outcome.choice)
    except ApplicationError as refusal:
        return refusal
    return None


def choose_in(
    tx: RunTransaction,
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
    tx.audit.append(audit_row(
        "decision", run=tx.run, decision=dp, chosen_option_id=option_id, selection_mode=mode, outcome=choice.outcome,
        actor=actor.user, actor_label=actor.label, payload={
            **_choice_payload(choice),
            "recommended_option_id": dp.selection.recommended_option_id,
            "overrode_recommendation": bool(dp.selection.recommended_option_id) and dp.selection.recommended_option_id != option_id,
        }, review=review,
    ))
    tx.state = choice.state
    if choice.moved:
        tx.apply_edge_effect(choice, actor.user)
        tx.enter_current()
        _settle(tx, actor, signals, locale)
    tx.save()
    return RunOutcome(tx.run, choice=choice, auto_choices=tx.auto_choices, review=tx.review, decision=dp)


def raise_for_refusal(choice: Choice | None) -> None:
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


def run_document_add(*, run: Run, key: str, content: Mapping[str, Any], depends_on: tuple[str, ...] = (), actor: Actor | None = None) -> RunOutcome:
    """Record a new version of a locked run's document (downstream documents become stale)."""
    run_id = run.pk
    with transaction.atomic():
        tx = RunTransaction(run)
        tx.add_document(key, content, depends_on)
        stale = engine.stale_documents(tx.state.documents)
        if stale:
            from workflows.tasks import propagate_staleness

            transaction.on_commit(lambda: propagate_staleness.delay(run_id))
        audit_record(
            "document_version", run=tx.run, actor=actor.user if actor else None, actor_label=actor.label if actor else "engine",
            payload={"key": key, "version": tx.state.documents[key].version, "stale_documents": stale},
        )
        tx.save()
    return RunOutcome(tx.run)


