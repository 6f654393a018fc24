from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "conversations"
    verbose_name = "Conversations and knowledge"

    def ready(self) -> None:
        from config.runtime import process_started
        from workflows.handlers import publishes_signals
        from workflows.services.plans import register_plan_check, register_plan_section
        from workflows.services.runs import register_run_parent_lock
        from workflows.signals import review_decided

        from . import handlers  # noqa: F401  registers the conversation-fed step handlers
        from .engine.config import plan_reference_problems, validate_config
        from .knowledge.apps_hooks import connect
        from .packs import builder_problems, source_problems
        from .services import CONVERSATION_SIGNALS, lock_conversation_of_run, on_review_decided

        review_decided.connect(on_review_decided, dispatch_uid="conversation-review-decided")
        register_run_parent_lock(lock_conversation_of_run)  # lock order: conversation, then run
        register_plan_section("conversation", validate_config)
        register_plan_check(plan_reference_problems)
        register_plan_check(builder_problems)
        register_plan_check(source_problems)
        publishes_signals("conversation", *CONVERSATION_SIGNALS)
        connect()  # billing rule versions regenerate their knowledge explanations
        process_started.connect(_warm_plans, dispatch_uid="conversations-warm-plans")


def _warm_plans(**kwargs: object) -> None:
    """Parse the newest plans and their conversation configs (compiling their patterns) before
    the first message, which would otherwise wait for it. Routing an empty message compiles the
    joined patterns of every built-in and plan intent, which routing reads on every message."""
    from workflows.selectors import plan_by_id, plans_latest

    from .engine import route_intent
    from .selectors import conversation_config

    for row in plans_latest():
        route_intent("", domain_intents=conversation_config(plan_by_id(row.pk)).intents)
