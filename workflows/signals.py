"""What happens to runs and reviews, for other apps to react to.

Sent by `workflows.services.events` after the transaction that made the change commits,
with the event's name as `sender` and what it is about as `subject`.
"""

from django.dispatch import Signal

run_completed = Signal()  # subject: the Run
review_pending = Signal()  # subject: the Review a gate opened
review_decided = Signal()  # subject: the decided Review
action_executed = Signal()  # subject: {"run_id", "action", "step_id", "owner_id", "conversation_id"}

EVENTS: dict[str, Signal] = {
    "run.completed": run_completed,
    "review.pending": review_pending,
    "review.decided": review_decided,
    "action.executed": action_executed,
}
