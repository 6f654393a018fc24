"""Login lockout (django-axes): which address a request comes from, the limit per address over
all usernames, and the page a locked-out person sees, on the sign-in page and in the admin alike.

django-axes compares one failure limit with the largest count of its lockout parameter sets, so
adding `"ip_address"` as a set would lock a whole shared address after AXES_FAILURE_LIMIT
failures of one person. The handler below keeps axes' count per username and address, and also
locks an address once its failures over every username reach AXES_ADDRESS_FAILURE_LIMIT.
"""

from __future__ import annotations

import math
from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.throttling import BaseThrottle


def client_ip(request: HttpRequest) -> str:
    """The client address, decided as the API throttles decide it (`TRUSTED_PROXY_COUNT`)."""
    return BaseThrottle().get_ident(request)


def address_failures(request: HttpRequest) -> int:
    """Failed sign-ins from the request's address within the cool-off, over every username."""
    failures = AccessAttempt.objects.filter(
        ip_address=request.axes_ip_address, attempt_time__gte=get_cool_off_threshold(request),
    ).aggregate(total=Sum("failures_since_start"))["total"]
    return failures or 0


def address_locked(request: HttpRequest) -> bool:
    return address_failures(request) >= settings.AXES_ADDRESS_FAILURE_LIMIT


class AddressLimitHandler(AxesDatabaseHandler):
    """axes' database handler, with a second, higher limit per address (AXES_ADDRESS_FAILURE_LIMIT)."""

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        # axes locks when this reaches its limit, before a password is checked and after a failure.
        failures = super().get_failures(request, credentials)
        if address_locked(request):
            return max(failures, get_failure_limit(request, credentials))
        return failures


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None,
                     credentials: dict[str, Any] | None = None) -> HttpResponse:
    """429 with a page saying what happened and when to try again (admin look under /admin/)."""
    cool_off = get_cool_off(request)
    minutes = math.ceil(cool_off.total_seconds() / 60) if cool_off else None
    # An address locked over all usernames: the page counts that address's failures.
    limit = settings.AXES_ADDRESS_FAILURE_LIMIT if address_locked(request) else get_failure_limit(request, credentials)
    context = {"failure_limit": limit, "minutes": minutes}
    admin = request.path.startswith("/admin/")
    template = "admin/locked_out.html" if admin else "registration/locked_out.html"
    if admin:
        from django.contrib import admin as django_admin

        context.update(django_admin.site.each_context(request))
    response = render(request, template, context, status=settings.AXES_HTTP_RESPONSE_CODE)
    if cool_off:
        response["Retry-After"] = str(math.ceil(cool_off.total_seconds()))
    return response
