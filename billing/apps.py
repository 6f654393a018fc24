from django.apps import AppConfig


class BillingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "billing"
    verbose_name = "Billing"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_migrate, post_save

        from config.runtime import process_started
        from conversations.dialogues import register_setup_loader

        # handlers: the billing tools and the fee decision; review_summary: how a supervisor reads
        # a fee mismatch. Both register themselves with workflows on import.
        from . import handlers, knowledge, review_summary  # noqa: F401
        from .datasets import dataset_load
        from .models import BillingRule, BillingRuleVersion, City, Lot
        from .places import forget_place_names
        from .selectors import forget_rule_versions
        from .signals import rule_version_added

        # Billing plugs into conversations (never the other way): its identifier lookups and place finder,
        handlers.register_lookups()
        knowledge.connect()  # rule explanations that follow new rule versions, the evaluation's billing part,
        register_setup_loader(dataset_load)  # and the billing data scripted dialogues' `setup` creates
        for model in (City, Lot):  # a city or lot saved here is named in the next message at once
            post_save.connect(forget_place_names, sender=model, dispatch_uid=f"places-saved-{model.__name__}")
            post_delete.connect(forget_place_names, sender=model, dispatch_uid=f"places-deleted-{model.__name__}")
        for model in (BillingRule, BillingRuleVersion):  # and a rule or version saved here is in force at once
            post_save.connect(forget_rule_versions, sender=model, dispatch_uid=f"rules-saved-{model.__name__}")
            post_delete.connect(forget_rule_versions, sender=model, dispatch_uid=f"rules-deleted-{model.__name__}")
        rule_version_added.connect(forget_rule_versions, dispatch_uid="rules-version-added")
        process_started.connect(_warm, dispatch_uid="billing-warm")

        # After migrate (billing's own permissions exist by then), the role groups hold every
        # permission their role lists, new models' included, with no manual step.
        post_migrate.connect(_sync_role_groups, sender=self, dispatch_uid="billing-role-groups")


def _sync_role_groups(**kwargs) -> None:  # noqa: ANN003
    from workflows.roles import ensure_role_groups

    ensure_role_groups()


def _warm(**kwargs: object) -> None:
    """Read the rule versions and the place names in every language of the pages when a server or
    worker starts: a person's first message would otherwise wait for six more queries."""
    from django.conf import settings

    from .places import place_names_warm
    from .selectors import rule_versions_warm

    rule_versions_warm()
    place_names_warm(sorted({code.split("-")[0] for code, _ in settings.LANGUAGES}))
