from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "workflows"
    verbose_name = "Workflows and governance"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from config.database import use_c_timestamp_loader

        from . import handlers  # noqa: F401  registers the built-in step handlers

        connection_created.connect(use_c_timestamp_loader, dispatch_uid="c-timestamp-loader")
        from .services import on_event
        from .webhooks import webhook_emit

        # Domain events become signed webhooks; "run.completed" is a conversation completing.
        on_event(lambda event, subject: webhook_emit("conversation.completed" if event == "run.completed" else event, subject))
