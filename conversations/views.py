"""Pages for the person chatting (HTMX); each view calls one service or selector."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from workflows.services import plans_latest


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Start page: one card per workflow."""
    return render(request, "conversations/home.html", {"plans": plans_latest()})
