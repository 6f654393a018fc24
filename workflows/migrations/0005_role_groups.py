"""The role groups: Operators (orders, arrears, fee verification, knowledge ingestion) and
Supervisors (everything an operator may, plus billing rules, plans, reviews, every
conversation, and the admin screens for them).

A frozen copy of workflows/roles.py as it was when written; `seed_demo` and
`create_api_token` bring the groups up to date with that module later. Permissions added by
hand stay; reversing removes the Operators group and leaves Supervisors (0002 made it).
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations
from django.db.models import Q

OPERATOR = (
    "billing.view_billingrule", "billing.view_billingruleversion",
    "billing.add_parkingorder", "billing.view_parkingorder",
    "billing.add_feeverification", "billing.view_feeverification",
    "conversations.add_knowledgesource", "conversations.change_knowledgesource", "conversations.view_knowledgesource",
    "conversations.add_knowledgechunk", "conversations.view_knowledgechunk",
    "workflows.view_workflowplan",
)
SUPERVISOR = (
    *OPERATOR,
    "billing.add_billingrule", "billing.change_billingrule", "billing.add_billingruleversion",
    "workflows.decide_review", "workflows.view_review", "workflows.view_auditevent",
    "workflows.view_run", "workflows.view_rundocument", "workflows.view_consentrecord",
    "workflows.add_workflowplan", "workflows.view_webhookendpoint", "workflows.view_webhookdelivery",
    "conversations.view_conversation", "conversations.view_message",
)
GROUPS = {"Operators": OPERATOR, "Supervisors": SUPERVISOR}


def _make_permissions(apps, app_label):
    # Permissions are normally made after migrate; make them now so the groups can hold them.
    app_config = apps.get_app_config(app_label)
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None


def create_role_groups(apps, schema_editor):
    for app_label in ("billing", "conversations", "workflows"):
        _make_permissions(apps, app_label)
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, perms in GROUPS.items():
        wanted = Q(pk__in=[])
        for perm in perms:
            app_label, codename = perm.split(".")
            wanted |= Q(content_type__app_label=app_label, codename=codename)
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*Permission.objects.filter(wanted))


def drop_operators(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="Operators").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("workflows", "0004_auditevent_single_column_indexes"),
        ("billing", "0001_initial"),
        ("conversations", "0004_knowledge"),
    ]

    operations = [migrations.RunPython(create_role_groups, drop_operators)]
