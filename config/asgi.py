"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

from config.runtime import tune_gc

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_asgi_application()
tune_gc()
