"""A CSRF failure under /api/ is a JSON 403 `csrf_failed`, whichever check refused it.

Two places enforce CSRF: DRF's session authentication (API views are exempt from Django's
middleware and check for themselves when a session signs the request in) and Django's
middleware for a plain view, whose failure goes to CSRF_FAILURE_VIEW. Both answer alike.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.test import Client
from django.urls import include, path
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db

SECRET = "a" * 32  # a CSRF secret as the cookie carries it; Django takes it unmasked in the header too
OTHER = "b" * 32
BODY = {"query": "parking fees"}
RETRIEVE = "/api/v1/retrieve"


def _plain_view(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"ok": True})


# A plain Django view under /api/ (none ships today): Django's own middleware guards it.
urlpatterns = [
    path("api/plain", _plain_view),
    path("", include("config.urls")),
]


def _signed_in(**client_kwargs) -> Client:  # noqa: ANN003
    client = Client(enforce_csrf_checks=True, **client_kwargs)
    client.force_login(get_user_model().objects.get_or_create(username="csrf-person")[0])
    return client


def _with_cookie(client: Client, secret: str = SECRET) -> Client:
    client.cookies["csrftoken"] = secret
    return client


def _assert_csrf_failed(response, reason: str) -> None:  # noqa: ANN001
    assert response.status_code == 403, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == "csrf_failed", body
    assert reason in body["error"]["message"] and body["error"]["details"] == {}


def test_a_session_post_without_any_token_is_csrf_failed() -> None:
    response = _signed_in().post(RETRIEVE, BODY, content_type="application/json")
    _assert_csrf_failed(response, "CSRF cookie not set")


def test_a_session_post_with_a_cookie_but_no_header_is_csrf_failed() -> None:
    response = _with_cookie(_signed_in()).post(RETRIEVE, BODY, content_type="application/json")
    _assert_csrf_failed(response, "CSRF token missing")


def test_a_session_post_with_a_wrong_token_is_csrf_failed() -> None:
    client = _with_cookie(_signed_in())
    response = client.post(RETRIEVE, BODY, content_type="application/json", HTTP_X_CSRFTOKEN=OTHER)
    _assert_csrf_failed(response, "incorrect")


def test_a_session_post_from_another_origin_is_csrf_failed() -> None:
    client = _with_cookie(_signed_in())
    response = client.post(RETRIEVE, BODY, content_type="application/json", HTTP_X_CSRFTOKEN=SECRET,
                           HTTP_ORIGIN="https://attacker.example")
    _assert_csrf_failed(response, "Origin checking failed")


def test_a_session_post_over_https_without_a_referer_is_csrf_failed() -> None:
    client = _with_cookie(_signed_in())
    response = client.post(RETRIEVE, BODY, content_type="application/json", HTTP_X_CSRFTOKEN=SECRET, secure=True)
    _assert_csrf_failed(response, "Referer checking failed")


@pytest.mark.parametrize(("method", "path"), [
    ("post", "/api/v1/conversations"), ("delete", "/api/v1/webhooks/1"), ("post", "/api/v1/reviews/1/decision"),
    ("put", "/api/v1/knowledge/sources"),
])
def test_every_unsafe_session_request_without_a_token_is_csrf_failed(method: str, path: str) -> None:
    # Before the view looks at the body, the method or the permissions: authentication comes first.
    response = getattr(_signed_in(), method)(path, {}, content_type="application/json")
    _assert_csrf_failed(response, "CSRF cookie not set")


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"])
def test_the_schema_and_docs_take_no_session_so_a_post_there_is_just_not_allowed(path: str) -> None:
    response = _signed_in().post(path, {}, content_type="application/json")
    assert response.status_code == 405, response.content


def test_a_session_post_with_the_right_token_goes_through() -> None:
    client = _with_cookie(_signed_in())
    response = client.post(RETRIEVE, BODY, content_type="application/json", HTTP_X_CSRFTOKEN=SECRET)
    assert response.status_code == 200, response.content


def test_token_authentication_needs_no_csrf_token() -> None:
    token = Token.objects.create(user=get_user_model().objects.create_user("csrf-integrator", password="x"))
    client = Client(enforce_csrf_checks=True)
    response = client.post(RETRIEVE, BODY, content_type="application/json", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200, response.content


def test_an_anonymous_post_is_not_authenticated_not_a_csrf_failure() -> None:
    response = Client(enforce_csrf_checks=True).post(RETRIEVE, BODY, content_type="application/json")
    assert response.status_code in (401, 403) and response.json()["error"]["code"] == "not_authenticated"


@pytest.mark.urls(__name__)
def test_a_plain_view_under_api_is_csrf_failed_through_the_failure_view() -> None:
    _assert_csrf_failed(_signed_in().post("/api/plain", {}), "CSRF cookie not set")
    _assert_csrf_failed(_with_cookie(_signed_in()).post("/api/plain", {}, HTTP_X_CSRFTOKEN=OTHER), "incorrect")


@pytest.mark.urls(__name__)
def test_a_plain_view_under_api_takes_the_right_token() -> None:
    assert _with_cookie(_signed_in()).post("/api/plain", {}, HTTP_X_CSRFTOKEN=SECRET).json() == {"ok": True}


def test_outside_the_api_a_csrf_failure_is_django_s_page() -> None:
    response = Client(enforce_csrf_checks=True).post("/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403 and response["Content-Type"].startswith("text/html")
