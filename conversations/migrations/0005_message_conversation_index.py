"""Drop the transcript's single-column conversation index: (conversation, turn_index) serves it.

Only the index is dropped (SQL that SQLite and PostgreSQL both take); an AlterField would
make SQLite rebuild the table.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0004_knowledge"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS conversations_message_conversation_id_f1a2d5e9",
                    reverse_sql="CREATE INDEX conversations_message_conversation_id_f1a2d5e9 ON conversations_message (conversation_id)",
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="message",
                    name="conversation",
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="messages",
                                            to="conversations.conversation"),
                ),
            ],
        ),
    ]
