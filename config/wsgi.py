"""WSGI entry point."""

import os

from django.core.wsgi import get_wsgi_application

from config.runtime import start_serving

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_wsgi_application()
start_serving()
