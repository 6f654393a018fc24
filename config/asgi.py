"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

from config.runtime import start_serving

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_asgi_application()
start_serving()
