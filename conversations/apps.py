from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "conversations"
    verbose_name = "Conversations and knowledge"

    def ready(self) -> None:
        from workflows.services import on_event, register_plan_section, register_run_parent_lock

        from . import handlers  # noqa: F401  registers the conversation-fed step handlers
        from .engine.config import validate_config
        from .knowledge.apps_hooks import connect
        from .services import lock_conversation_of_run, on_review_decided

        on_event(on_review_decided)
        register_run_parent_lock(lock_conversation_of_run)  # lock order: conversation, then run
        register_plan_section("conversation", validate_config)
        connect()  # billing rule versions regenerate their knowledge explanations
