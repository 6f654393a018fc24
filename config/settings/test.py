"""Test settings: fast hashing, inline tasks, in-memory email and cache."""

from .base import *  # noqa: F403
from .base import env

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CONCIERGE_ASYNC_TURNS = False  # tests that need the worker path turn it on themselves
# Tests never use a real key from the environment; a worker under test gets a fake one.
OPENAI_API_KEY = env("CONCIERGE_TEST_OPENAI_API_KEY", default="")
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not shared-cache memory: threads in concurrency tests then queue on the
    # busy timeout like real processes would.
    import os
    import tempfile

    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": os.path.join(tempfile.gettempdir(), f"concierge-test-{os.getpid()}.sqlite3")
    }
# Tests roll back knowledge writes; a retrieval index must not outlive them for a second.
KNOWLEDGE_INDEX_RECHECK_SECONDS = 0
PLACES_RECHECK_SECONDS = 0  # the same for the names of cities and lots
BILLING_RULES_RECHECK_SECONDS = 0  # and for billing rules
# The receiver in tests/support listens on 127.0.0.1; the address-policy tests turn this off.
WEBHOOK_ALLOW_PRIVATE = True
# Throttles stay in the request path but far above what the suite sends; throttle tests lower them.
REST_FRAMEWORK = {  # noqa: F405
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {"user": "10000/s", "anon": "10000/s", "expensive": "10000/s"},
}
