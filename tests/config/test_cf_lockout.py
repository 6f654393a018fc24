"""Failed logins lock a username out from one address (django-axes), on the sign-in page and in admin."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db

HOME = "10.0.0.5"
ELSEWHERE = "10.0.0.6"


@pytest.fixture
def limits(settings):  # noqa: ANN001, ANN201
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    return settings


def sign_in(client: Client, username: str, password: str, *, address: str = HOME, path: str = "/login/"):  # noqa: ANN201
    return client.post(path, {"username": username, "password": password, "next": "/"}, REMOTE_ADDR=address)


def test_failures_lock_that_username_from_that_address_until_the_cool_off(person, other_person, limits) -> None:  # noqa: ANN001
    client = Client()
    for _ in range(2):
        response = sign_in(client, "pat", "wrong")
        assert response.status_code == 200 and "didn't match" in response.content.decode()
    locked = sign_in(client, "pat", "wrong")
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Too many failed sign-ins" in page and "after 3 failed attempts" in page and "15 minutes" in page
    assert locked["Retry-After"] == str(15 * 60)
    assert locked["Content-Security-Policy"]  # an ordinary page of the product

    # The right password is refused too, from this address.
    refused = sign_in(client, "pat", "pat-pass-123")
    assert refused.status_code == 429 and "_auth_user_id" not in client.session
    # Other users at this address, and this user elsewhere, are not affected.
    assert sign_in(Client(), "mallory", "mallory-pass-123").status_code == 302
    assert sign_in(Client(), "pat", "pat-pass-123", address=ELSEWHERE).status_code == 302

    with time_machine.travel(timezone.now() + timedelta(minutes=16)):
        fresh = Client()
        signed_in = sign_in(fresh, "pat", "pat-pass-123")
        assert signed_in.status_code == 302 and signed_in["Location"] == "/"
        assert fresh.session["_auth_user_id"] == str(person.pk)


def test_a_success_before_the_limit_resets_the_count(person, limits) -> None:  # noqa: ANN001
    for _ in range(2):
        sign_in(Client(), "pat", "wrong")
    assert sign_in(Client(), "pat", "pat-pass-123").status_code == 302
    for _ in range(2):
        assert sign_in(Client(), "pat", "wrong").status_code == 200  # counting starts again


def test_the_admin_login_locks_out_with_an_admin_page(supervisor, limits) -> None:  # noqa: ANN001
    client = Client()
    for _ in range(2):
        assert sign_in(client, "sue", "wrong", path="/admin/login/?next=/admin/").status_code == 200
    locked = sign_in(client, "sue", "wrong", path="/admin/login/?next=/admin/")
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Concierge administration" in page and "Too many failed sign-ins" in page
    assert sign_in(client, "sue", "sue-pass-123", path="/admin/login/?next=/admin/").status_code == 429
    # The same username is locked on the person's sign-in page too: one count per username and address.
    assert sign_in(Client(), "sue", "sue-pass-123").status_code == 429
    assert sign_in(Client(), "sue", "sue-pass-123", address=ELSEWHERE, path="/admin/login/?next=/admin/").status_code == 302
