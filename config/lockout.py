"""Login lockout (django-axes): which address a request comes from, and the page a locked-out
person sees, on the sign-in page and in the admin alike."""

from __future__ import annotations

import math
from typing import Any

from axes.helpers import get_cool_off, get_failure_limit
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.throttling import BaseThrottle


def client_ip(request: HttpRequest) -> str:
    """The client address, decided as the API throttles decide it (`TRUSTED_PROXY_COUNT`)."""
    return BaseThrottle().get_ident(request)


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None,
                     credentials: dict[str, Any] | None = None) -> HttpResponse:
    """429 with a page saying what happened and when to try again (admin look under /admin/)."""
    cool_off = get_cool_off(request)
    minutes = math.ceil(cool_off.total_seconds() / 60) if cool_off else None
    context = {"failure_limit": get_failure_limit(request, credentials), "minutes": minutes}
    admin = request.path.startswith("/admin/")
    template = "admin/locked_out.html" if admin else "registration/locked_out.html"
    if admin:
        from django.contrib import admin as django_admin

        context.update(django_admin.site.each_context(request))
    response = render(request, template, context, status=settings.AXES_HTTP_RESPONSE_CODE)
    if cool_off:
        response["Retry-After"] = str(math.ceil(cool_off.total_seconds()))
    return response
