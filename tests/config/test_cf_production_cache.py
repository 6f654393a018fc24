"""Production shares its cache (throttle counters, reply drafts) through Redis when one is configured
(issue 34, 5c). Each case imports the production settings in a fresh interpreter with its environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REDIS = "django.core.cache.backends.redis.RedisCache"
LOCMEM = "django.core.cache.backends.locmem.LocMemCache"
PRINT_CACHES = "import json, config.settings.production as p; print(json.dumps(p.CACHES['default']))"


def production_cache(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "REDIS_URL", "CELERY_BROKER_URL")}
    clean.update({"SECRET_KEY": "x" * 50, "ALLOWED_HOSTS": "example.org", **env})
    done = subprocess.run([sys.executable, "-c", PRINT_CACHES], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(("env", "backend", "location"), [
    ({}, LOCMEM, None),  # no Redis anywhere: one process's own memory
    ({"CELERY_BROKER_URL": "redis://redis:6379/0"}, REDIS, "redis://redis:6379/1"),  # the broker's server, next database
    ({"CELERY_BROKER_URL": "rediss://:secret@redis.internal:6380/2"}, REDIS, "rediss://:secret@redis.internal:6380/3"),
    ({"CELERY_BROKER_URL": "redis://redis:6379"}, REDIS, "redis://redis:6379/1"),
    ({"CELERY_BROKER_URL": "amqp://rabbit:5672//"}, LOCMEM, None),  # a broker that is not Redis
    ({"REDIS_URL": "redis://cache:6379/4", "CELERY_BROKER_URL": "redis://redis:6379/0"}, REDIS, "redis://cache:6379/4"),
    ({"CACHE_URL": "locmemcache://", "CELERY_BROKER_URL": "redis://redis:6379/0"}, LOCMEM, None),  # said outright wins
    ({"CACHE_URL": "redis://elsewhere:6379/7"}, REDIS, "redis://elsewhere:6379/7"),
], ids=["nothing", "broker", "broker_tls", "broker_no_db", "amqp_broker", "redis_url", "cache_url_locmem", "cache_url_redis"])
def test_the_default_cache_is_redis_when_redis_is_configured(env: dict, backend: str, location: str | None) -> None:
    cache = production_cache(**env)
    assert cache["BACKEND"] == backend
    if location is not None:
        assert cache["LOCATION"] == location


def test_the_redis_client_is_installed_and_the_socket_timeouts_are_short() -> None:
    import redis  # the built-in RedisCache needs it (celery[redis] brings it)

    assert redis.__version__
    cache = production_cache(CELERY_BROKER_URL="redis://redis:6379/0")
    assert cache["OPTIONS"] == {"socket_connect_timeout": 1, "socket_timeout": 1}
