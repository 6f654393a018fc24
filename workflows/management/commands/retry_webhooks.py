"""Send the webhook deliveries that are due (inline mode has no worker to retry them)."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db.models import Q
from django.utils import timezone

from workflows.models import WebhookDelivery
from workflows.webhooks import webhook_attempt


class Command(BaseCommand):
    help = "Attempt every pending webhook delivery whose next attempt is due."

    def handle(self, *args, **options) -> None:  # noqa: ANN002, ANN003
        due = WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING).filter(
            Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=timezone.now()))
        counts: dict[str, int] = {}
        for pk in due.values_list("pk", flat=True):
            status = webhook_attempt(pk).status
            counts[status] = counts.get(status, 0) + 1
        self.stdout.write(f"attempted {sum(counts.values())}: {counts}")
