"""Settings shared by every environment; the other modules only override.

Everything configurable comes from the environment (django-environ); a bad value
fails loudly at start.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def throttle_rate(value: str, name: str) -> str | None:
    """A DRF rate such as `500/s` or `60/min`; `off` disables that throttle; anything else stops the start."""
    value = value.strip().lower()
    if value in ("off", "none"):
        return None
    if not re.fullmatch(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)", value):
        raise ImproperlyConfigured(f"{name}={value!r}: expected a rate such as 500/s, 60/min, 1000/hour or off")
    return value


env = environ.Env(
    DEBUG=(bool, False),
    ALLOWED_HOSTS=(list, ["localhost", "127.0.0.1", "[::1]"]),
    CELERY_BROKER_URL=(str, ""),
    OPENAI_API_KEY=(str, ""),
    OPENAI_BASE_URL=(str, ""),
    CONCIERGE_LLM_MODEL=(str, "gpt-4o-mini"),
    CONCIERGE_LLM_TIMEOUT=(float, 20.0),
    CONCIERGE_TIMEZONE=(str, "Asia/Shanghai"),
)

SECRET_KEY = env("SECRET_KEY", default="dev-only-insecure-key-change-me")
DEBUG = env("DEBUG")
ALLOWED_HOSTS = env("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI assets served locally: the docs work offline
    "django_filters",
    "django_htmx",
    "workflows",
    "conversations",
    "billing",
    "axes",  # failed-login lockout (after the apps whose users it protects)
    "csp",  # Content-Security-Policy: its system checks
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.errors.ApiErrorMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: turns a lockout into its page
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions take the write lock up front, so concurrent writers queue
    # on the busy timeout instead of failing with "database is locked" mid-transaction.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Server-side binding lets psycopg prepare a statement once it has run DB_PREPARE_THRESHOLD
    # times on a connection: PostgreSQL then skips parsing and planning it (a turn repeats the
    # same dozen statements). Behind a pooler without prepared-statement support (PgBouncer in
    # transaction mode before 1.21), set DB_PREPARE_THRESHOLD=off or DB_SERVER_SIDE_BINDING=false.
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options.setdefault("server_side_binding", env.bool("DB_SERVER_SIDE_BINDING", default=True))
    _threshold = env("DB_PREPARE_THRESHOLD", default="2").strip().lower()
    if _options["server_side_binding"] and _threshold not in ("", "off", "none"):
        _options.setdefault("prepare_threshold", int(_threshold))
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=0))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Throttle counters are kept per process by default (locmem); with several web processes, point
# CACHE_URL at a shared cache (redis://redis:6379/1) so limits hold overall (production does so
# itself when Redis is configured). Login lockouts are in the database (django-axes).
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

# django-axes first: it refuses a locked-out username and address before any password is checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
# The languages of the pages; a conversation's pages speak its own locale (conversations/presentation.py).
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文"), ("ru", "Русский"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env("CONCIERGE_TIMEZONE")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Under /api/ a CSRF failure answers in the JSON error shape, elsewhere with Django's page.
CSRF_FAILURE_VIEW = "config.errors.csrf_failure"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "workflows.authentication.TokenAuthentication",
        "config.authentication.SessionAuthentication",  # its CSRF failures answer `csrf_failed`
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["config.renderers.JSONRenderer", "rest_framework.renderers.BrowsableAPIRenderer"],
    # JSON nested past a fixed depth or with integers beyond 64 bits is a 400 (config/parsers.py).
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "config.schema.AutoSchema",
    "EXCEPTION_HANDLER": "config.errors.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # Per user (token or session), per anonymous address, and a stricter per-user budget for
    # the expensive writes (plan uploads, knowledge ingestion); counters live in CACHES.
    "DEFAULT_THROTTLE_CLASSES": [
        "config.throttles.AnonRateThrottle",
        "config.throttles.UserRateThrottle",
        "config.throttles.ExpensiveRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        # One integrator token drives many people's conversations (the load benchmark posts
        # ~250 turns/s with one), so the user rate is per second: DRF keeps one timestamp per
        # request in the window, and a short window keeps that history small.
        "user": throttle_rate(env("THROTTLE_RATE_USER", default="500/s"), "THROTTLE_RATE_USER"),
        "anon": throttle_rate(env("THROTTLE_RATE_ANON", default="60/min"), "THROTTLE_RATE_ANON"),
        "expensive": throttle_rate(env("THROTTLE_RATE_EXPENSIVE", default="120/min"), "THROTTLE_RATE_EXPENSIVE"),
        # Per person, over the API and the chat pages alike (config/throttles.py): far above what
        # someone typing does, far below what a script does. A deployment whose one integrator
        # token speaks for many people sets these to off and relies on `user`.
        "turns": throttle_rate(env("THROTTLE_RATE_TURNS", default="30/min"), "THROTTLE_RATE_TURNS"),
        "conversations": throttle_rate(env("THROTTLE_RATE_CONVERSATIONS", default="60/hour"), "THROTTLE_RATE_CONVERSATIONS"),
    },
    # Client addresses come from REMOTE_ADDR unless this many proxies in front are trusted to
    # append to X-Forwarded-For (the login lockout uses the same address).
    "NUM_PROXIES": env.int("TRUSTED_PROXY_COUNT", default=0),
}

# Failed logins (the sign-in page and the admin) lock out a username from one address after
# AXES_FAILURE_LIMIT failures, for AXES_COOLOFF_MINUTES; other users and addresses carry on.
# An address whose failures over all usernames reach AXES_ADDRESS_FAILURE_LIMIT in that time is
# locked for every username (one script trying many names); set it well above AXES_FAILURE_LIMIT,
# so that a few people mistyping behind one shared address do not lock each other out.
AXES_ENABLED = env.bool("AXES_ENABLED", default=True)
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_ADDRESS_FAILURE_LIMIT = env.int("AXES_ADDRESS_FAILURE_LIMIT", default=20)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("AXES_COOLOFF_MINUTES", default=15))
if AXES_FAILURE_LIMIT < 1 or AXES_COOLOFF_TIME.total_seconds() <= 0:
    raise ImproperlyConfigured("AXES_FAILURE_LIMIT must be at least 1 and AXES_COOLOFF_MINUTES above 0")
if AXES_ADDRESS_FAILURE_LIMIT < AXES_FAILURE_LIMIT:
    raise ImproperlyConfigured("AXES_ADDRESS_FAILURE_LIMIT must be at least AXES_FAILURE_LIMIT")
AXES_HANDLER = "config.lockout.AddressLimitHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "config.lockout.lockout_response"
AXES_CLIENT_IP_CALLABLE = "config.lockout.client_ip"
AXES_VERBOSE = False  # no start-up banner on every management command

# Content-Security-Policy on every response (django-csp): scripts and styles from our own
# origin only; an inline block carries the request's nonce (only the Swagger UI has one).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Concierge API",
    "DESCRIPTION": "Governed conversational agents: workflow plans, conversations, reviews, billing and knowledge.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and the docs are the same for everyone: no session, so no CSRF check on a
    # POST that could do nothing anyway (it is a 405), and the anonymous throttle's budget.
    "SERVE_AUTHENTICATION": [],
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The API takes JSON; DRF's form parsers stay for old clients but are not the contract.
    "PARSER_WHITELIST": ["config.parsers.JSONParser"],
    # Several models have a `status`: each choice set gets its own component name.
    "ENUM_NAME_OVERRIDES": {
        "ConversationStatusEnum": "conversations.models.Conversation.Status",
        "ActiveStatusEnum": "conversations.knowledge.models.KnowledgeStatus",
        "IngestStatusEnum": "conversations.knowledge.models.IngestStatus",
        "OrderStatusEnum": "billing.models.ParkingOrder.Status",
        "DeliveryStatusEnum": "workflows.models.WebhookDelivery.Status",
        "ReviewStatusEnum": "workflows.models.Review.Status",
    },
}

# Webhook targets must be public addresses (checked on registration and again, after name
# resolution, on every delivery); true allows loopback and private networks (tests, intranets).
WEBHOOK_ALLOW_PRIVATE = env.bool("WEBHOOK_ALLOW_PRIVATE", default=False)
# /readyz: how long it waits for the broker before calling it down.
READYZ_BROKER_TIMEOUT = env.float("READYZ_BROKER_TIMEOUT", default=1.0)

# Celery: with no broker configured, tasks run inline (eagerly) in the web process.
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A message a killed worker held comes back to the queue after this many seconds. Redis hands
# out again any message unacknowledged this long, even one still running or waiting for its
# countdown: it must exceed the longest task (a turn's hard limit, CONCIERGE_TURN_TIME_LIMIT + 30)
# twice over (a prefetched message waits behind a running one) and the longest retry countdown
# (60 s for turns, 32 s for webhooks). A lost turn no longer waits for it: see the sweep below.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=300)}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE

# The concierge's model: offline rules backend unless an OpenAI-compatible key is set.
OPENAI_API_KEY = env("OPENAI_API_KEY")
OPENAI_BASE_URL = env("OPENAI_BASE_URL") or None
CONCIERGE_LLM_MODEL = env("CONCIERGE_LLM_MODEL")
CONCIERGE_LLM_TIMEOUT = env("CONCIERGE_LLM_TIMEOUT")  # seconds for all the model calls of one turn, retries included
if not 0 < CONCIERGE_LLM_TIMEOUT < float("inf"):
    raise environ.ImproperlyConfigured("CONCIERGE_LLM_TIMEOUT must be a positive, finite number of seconds")
# Model calls one process has open at once; a turn beyond them gets the rules' reply at once
# (audited model_busy), so a hung provider holds at most this many threads.
CONCIERGE_LLM_MAX_CONCURRENT = env.int("CONCIERGE_LLM_MAX_CONCURRENT", default=4)
if CONCIERGE_LLM_MAX_CONCURRENT < 1:
    raise environ.ImproperlyConfigured("CONCIERGE_LLM_MAX_CONCURRENT must be at least 1")
CONCIERGE_TIMEZONE = TIME_ZONE
# With a model: it also reads each message as commands (checked, the rules fill in); off: it only words replies.
CONCIERGE_LLM_UNDERSTANDING = env.bool("CONCIERGE_LLM_UNDERSTANDING", default=True)
# With a model: it also words each reply (checked, else the rules' words); off: replies keep the rules' words.
CONCIERGE_LLM_WORDING = env.bool("CONCIERGE_LLM_WORDING", default=True)
# Knowledge: the embedder (offline hashing by default) and where vectors are searched.
KNOWLEDGE_EMBEDDER = env("KNOWLEDGE_EMBEDDER", default="hash-ngram-v1")
KNOWLEDGE_VECTOR_BACKEND = env("KNOWLEDGE_VECTOR_BACKEND", default="auto")
# How long a process trusts its retrieval index before checking the database for knowledge
# written by other processes (its own writes take effect at once). 0 checks every retrieval.
KNOWLEDGE_INDEX_RECHECK_SECONDS = env.float("KNOWLEDGE_INDEX_RECHECK_SECONDS", default=1.0)
# The same for the names of cities and lots the help desk understands (its own saves take effect at once).
PLACES_RECHECK_SECONDS = env.float("PLACES_RECHECK_SECONDS", default=1.0)
# The same for billing rules and their versions (read by every fee question and verification).
BILLING_RULES_RECHECK_SECONDS = env.float("BILLING_RULES_RECHECK_SECONDS", default=1.0)
# Fee reviews one person's conversations may open per local day; beyond it the person is offered a member of
# staff instead. Joining an order's open review costs nothing; 0 lets conversations open none.
CONCIERGE_REVIEWS_PER_PERSON_PER_DAY = env.int("CONCIERGE_REVIEWS_PER_PERSON_PER_DAY", default=5)
if CONCIERGE_REVIEWS_PER_PERSON_PER_DAY < 0:
    raise ImproperlyConfigured("CONCIERGE_REVIEWS_PER_PERSON_PER_DAY must be 0 or more")
# Chat pages hand the turn to a worker and show the reply when it is ready (needs a broker).
CONCIERGE_ASYNC_TURNS = env.bool("CONCIERGE_ASYNC_TURNS", default=bool(CELERY_BROKER_URL))
# A queued turn still waiting this many seconds lost its task (a broker restarted with an empty
# queue, a worker killed): it is queued again, once; one still waiting as long again after that
# is marked failed and the page offers to send it again. Keep it above the longest a turn waits
# for a free worker plus CONCIERGE_LLM_TIMEOUT (a turn stops waiting once its rules phase ran).
CONCIERGE_TURN_REQUEUE_AFTER = env.float("CONCIERGE_TURN_REQUEUE_AFTER", default=60.0)
# The page says a queued turn is taking longer than usual after this many seconds.
CONCIERGE_TURN_DELAYED_AFTER = env.float("CONCIERGE_TURN_DELAYED_AFTER", default=8.0)
# A turn on a worker is stopped after this many seconds (SoftTimeLimitExceeded: a model still
# writing gives way to the rules reply), and its process killed 30 s later.
CONCIERGE_TURN_TIME_LIMIT = env.int("CONCIERGE_TURN_TIME_LIMIT", default=90)
if not 0 < CONCIERGE_TURN_REQUEUE_AFTER < float("inf") or not 0 <= CONCIERGE_TURN_DELAYED_AFTER < float("inf"):
    raise environ.ImproperlyConfigured("CONCIERGE_TURN_REQUEUE_AFTER and CONCIERGE_TURN_DELAYED_AFTER must be finite seconds")
if CONCIERGE_TURN_TIME_LIMIT <= CONCIERGE_LLM_TIMEOUT:
    raise environ.ImproperlyConfigured("CONCIERGE_TURN_TIME_LIMIT must exceed CONCIERGE_LLM_TIMEOUT (a turn's model calls)")
# `celery -A config beat` (or a worker started with -B) sweeps for lost turns; without beat the
# page that waits for a turn runs the same sweep for its conversation when it polls. A sweep not
# taken before the next is due expires (workers down for an hour do not come back to 120 of them).
_SWEEP_EVERY = max(5.0, CONCIERGE_TURN_REQUEUE_AFTER / 2)
CELERY_BEAT_SCHEDULE = {
    "requeue-overdue-turns": {"task": "conversations.requeue_overdue_turns", "schedule": _SWEEP_EVERY,
                              "options": {"expires": _SWEEP_EVERY}},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}
