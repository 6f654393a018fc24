"""Create (if needed) a user and print an API token for it as the last line."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token

from workflows.demo import make_supervisor


class Command(BaseCommand):
    help = "Create the user if needed and print an API token as the last line of output."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("username")
        parser.add_argument("--supervisor", action="store_true", help="put the user in the Supervisors group")

    def handle(self, *args, username: str, supervisor: bool, **options) -> None:  # noqa: ANN002, ANN003
        username = username.strip()
        if not username or len(username) > 150:
            raise CommandError("USERNAME must be 1 to 150 characters.")
        with transaction.atomic():
            user, created = get_user_model().objects.get_or_create(username=username)
            if created:
                user.set_unusable_password()
                user.save()
            if supervisor:
                make_supervisor(user)
            token, _ = Token.objects.get_or_create(user=user)
        role = "supervisor" if supervisor else "user"
        self.stdout.write(f"{'Created' if created else 'Found'} {role} {username}. API token:")
        self.stdout.write(token.key)
