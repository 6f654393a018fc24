"""The Supervisors group with the decide_review permission, and a database guard that
keeps audit rows append-only even against raw SQL updates."""

from django.contrib.auth.management import create_permissions
from django.db import migrations


def create_supervisors(apps, schema_editor):
    # Permissions are normally made after migrate; make them now so the group can hold them.
    app_config = apps.get_app_config("workflows")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="Supervisors")
    wanted = Permission.objects.filter(
        content_type__app_label="workflows",
        codename__in=["decide_review", "view_review", "view_auditevent", "view_run", "view_workflowplan", "add_workflowplan"],
    )
    group.permissions.add(*wanted)


def drop_supervisors(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="Supervisors").delete()


def add_audit_guard(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        schema_editor.execute(
            "CREATE TRIGGER IF NOT EXISTS audit_append_only BEFORE UPDATE ON workflows_auditevent "
            "BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;"
        )
    elif vendor == "postgresql":
        schema_editor.execute(
            "CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger AS $$ "
            "BEGIN RAISE EXCEPTION 'audit events are append-only'; END; $$ LANGUAGE plpgsql;"
        )
        schema_editor.execute(
            "CREATE TRIGGER audit_append_only BEFORE UPDATE ON workflows_auditevent "
            "FOR EACH ROW EXECUTE FUNCTION audit_append_only();"
        )


def drop_audit_guard(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor in ("sqlite", "postgresql"):
        table = " ON workflows_auditevent" if vendor == "postgresql" else ""
        schema_editor.execute(f"DROP TRIGGER IF EXISTS audit_append_only{table};")


class Migration(migrations.Migration):
    dependencies = [
        ("workflows", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RunPython(create_supervisors, drop_supervisors),
        migrations.RunPython(add_audit_guard, drop_audit_guard),
    ]
