"""Create (if needed) a user, put it in its role's group, and print an API token as the last line."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token

from workflows import roles


class Command(BaseCommand):
    help = "Create the user if needed, put it in its role's group and print an API token as the last line of output."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("username")
        role = parser.add_mutually_exclusive_group()
        role.add_argument("--supervisor", action="store_true", help="put the user in the Supervisors group")
        role.add_argument("--operator", action="store_true", help="put the user in the Operators group")

    def handle(self, *args, username: str, supervisor: bool, operator: bool, **options) -> None:  # noqa: ANN002, ANN003
        username = username.strip()
        if not username or len(username) > 150:
            raise CommandError("USERNAME must be 1 to 150 characters.")
        if supervisor and operator:  # argparse refuses this too; call_command(..., supervisor=True, operator=True) does not
            raise CommandError("--supervisor and --operator are mutually exclusive.")
        role = roles.SUPERVISOR if supervisor else roles.OPERATOR if operator else roles.PERSON
        with transaction.atomic():
            user, created = get_user_model().objects.get_or_create(username=username)
            if created:
                user.set_unusable_password()
                user.save()
            roles.role_grant(user, role)
            token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(f"{'Created' if created else 'Found'} {role} {username}. API token:")
        self.stdout.write(token.key)
