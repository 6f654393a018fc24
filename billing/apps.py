from django.apps import AppConfig


class BillingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "billing"
    verbose_name = "Billing"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from conversations.dialogues import register_setup_loader

        from . import (
            handlers,  # noqa: F401  registers the billing tools and the fee decision
            knowledge,
        )
        from .datasets import dataset_load

        knowledge.connect()  # rule explanations follow new rule versions; the evaluation's billing part
        register_setup_loader(dataset_load)  # scripted dialogues' `setup` creates billing data

        # After migrate (billing's own permissions exist by then), the role groups hold every
        # permission their role lists, new models' included, with no manual step.
        post_migrate.connect(_sync_role_groups, sender=self, dispatch_uid="billing-role-groups")


def _sync_role_groups(**kwargs) -> None:  # noqa: ANN003
    from workflows.roles import ensure_role_groups

    ensure_role_groups()
