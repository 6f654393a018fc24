"""Celery application: inline when CELERY_BROKER_URL is unset, Redis workers otherwise."""

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("concierge")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _start_worker_process(**_: object) -> None:
    from config.runtime import start_serving

    start_serving()
