"""DRF permission classes for the roles: checked before a view's body, so before any validation.

A view lists its permission classes and declares what each method needs as Django model
permissions:

    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"POST": ("billing.add_parkingorder",)}

A method that is not listed needs only a signed-in user. A refusal is a 403 whose code names
the least role that may do it (`operator_required`, `supervisor_required`), in the product's
error shape; an anonymous request stays a 401 (DRF turns its refusal into NotAuthenticated).
"""

from __future__ import annotations

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from . import roles
from .access import is_supervisor

_ROLE_DENIALS = {
    roles.OPERATOR: "Only operators and supervisors may do this.",
    roles.SUPERVISOR: "Only supervisors may do this.",
}


class HoldsRequiredPerms(BasePermission):
    """The user holds every permission the view's `required_perms` lists for this method."""

    message = "You do not have permission to do this."
    code = "permission_required"

    def has_permission(self, request: Request, view: APIView) -> bool:
        needed = getattr(view, "required_perms", {}).get(request.method, ())
        if not needed or request.user.has_perms(needed):
            return True
        role = roles.least_role_for(needed)
        if role in _ROLE_DENIALS:  # instance attributes: DRF makes the permissions afresh per request
            self.message, self.code = _ROLE_DENIALS[role], f"{role}_required"
        return False


class IsSupervisor(BasePermission):
    """Supervisors only (they hold decide_review); token authentication answers it in its own query."""

    message = _ROLE_DENIALS[roles.SUPERVISOR]
    code = "supervisor_required"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return is_supervisor(request.user)
