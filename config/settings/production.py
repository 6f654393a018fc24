"""Production: secrets required from the environment, HTTPS everywhere, a shared cache with Redis."""

from urllib.parse import urlsplit, urlunsplit

from .base import *  # noqa: F403
from .base import CELERY_BROKER_URL, env

DEBUG = False
SECRET_KEY = env("SECRET_KEY")  # no default: refuse to start without one
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Throttle counters (and the page's reply drafts) must be shared by every web process and
# worker, or each process counts alone. CACHE_URL wins (base.py); without it, a configured Redis
# is the default cache: REDIS_URL as given, else a redis:// Celery broker's server on the
# database after the broker's (a cache's clear() empties its whole database). Short socket
# timeouts: an unreachable Redis fails a request in a second instead of holding its thread.
_REDIS_SCHEMES = ("redis://", "rediss://")


def _redis_cache_url() -> str | None:
    """The Redis the default cache should use, or None to keep base.py's (CACHE_URL, else locmem)."""
    if env("CACHE_URL", default=""):
        return None
    if url := env("REDIS_URL", default=""):
        return url
    if not CELERY_BROKER_URL.startswith(_REDIS_SCHEMES):
        return None
    parts = urlsplit(CELERY_BROKER_URL)
    database = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{database + 1}"))


if _cache_url := _redis_cache_url():
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _cache_url,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
