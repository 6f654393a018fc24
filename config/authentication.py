"""Session authentication whose CSRF refusal carries the product's `csrf_failed` code.

API views are exempt from Django's CSRF middleware: DRF checks CSRF itself when a session
signs a request in, and raises a plain PermissionDenied (`forbidden`). The same failure of a
plain view goes to CSRF_FAILURE_VIEW (config.errors.csrf_failure) as `csrf_failed`; this makes
both answer alike. Kept free of the project's apps: DRF imports it while its settings load.
"""

from __future__ import annotations

from rest_framework import authentication, exceptions
from rest_framework.request import Request

CSRF_FAILED = "csrf_failed"


class SessionAuthentication(authentication.SessionAuthentication):
    """DRF's session authentication; a CSRF failure is a 403 with the code `csrf_failed`."""

    def enforce_csrf(self, request: Request) -> None:
        try:
            super().enforce_csrf(request)
        except exceptions.PermissionDenied as refusal:
            raise exceptions.PermissionDenied(str(refusal.detail), code=CSRF_FAILED) from refusal
