"""Drop the audit trail's single-column run and conversation indexes: (run, id) and
(conversation, id) serve those lookups, and every index costs each of a turn's inserts.

Only the indexes are dropped (SQL that SQLite and PostgreSQL both take); an AlterField would
make SQLite rebuild the table, and the rebuild would drop the audit trail's guard triggers.
"""

import django.db.models.deletion
from django.db import migrations, models

INDEXES = {
    "workflows_auditevent_conversation_id_f9337816": "conversation_id",
    "workflows_auditevent_run_id_50739d08": "run_id",
}


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0005_message_conversation_index"),
        ("workflows", "0003_webhooks"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(f"DROP INDEX IF EXISTS {name}", reverse_sql=f"CREATE INDEX {name} ON workflows_auditevent ({column})")
                for name, column in INDEXES.items()
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="auditevent",
                    name="conversation",
                    field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT,
                                            related_name="audit_events", to="conversations.conversation"),
                ),
                migrations.AlterField(
                    model_name="auditevent",
                    name="run",
                    field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT,
                                            related_name="audit_events", to="workflows.run"),
                ),
            ],
        ),
    ]
