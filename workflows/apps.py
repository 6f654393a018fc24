from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "workflows"
    verbose_name = "Workflows and governance"

    def ready(self) -> None:
        from . import handlers  # noqa: F401  registers the built-in step handlers
