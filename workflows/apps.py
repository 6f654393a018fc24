from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "workflows"
    verbose_name = "Workflows and governance"

    def ready(self) -> None:
        from . import handlers  # noqa: F401  registers the built-in step handlers
        from .signals import EVENTS

        for event, signal in EVENTS.items():
            signal.connect(_send_webhooks, dispatch_uid=f"webhooks-{event}")


def _send_webhooks(sender: str, subject: object, **kwargs: object) -> None:
    """Every workflow event becomes signed webhooks; "run.completed" is a conversation completing."""
    from .webhooks import webhook_emit

    webhook_emit("conversation.completed" if sender == "run.completed" else sender, subject)
