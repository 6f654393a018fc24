"""Failed sign-ins from one address over many usernames lock that address (issue 34, 5a), with the
shipped limits: AXES_FAILURE_LIMIT 5 per username and address, AXES_ADDRESS_FAILURE_LIMIT 20 per address."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

pytestmark = pytest.mark.django_db

SCRIPT = "10.0.1.5"  # one address trying many usernames
OFFICE = "10.0.1.6"  # people behind one shared address
ELSEWHERE = "10.0.1.7"


def sign_in(username: str, password: str, address: str, path: str = "/login/"):  # noqa: ANN201
    return Client().post(path, {"username": username, "password": password, "next": "/"}, REMOTE_ADDR=address)


def test_the_shipped_limits() -> None:
    assert (settings.AXES_FAILURE_LIMIT, settings.AXES_ADDRESS_FAILURE_LIMIT) == (5, 20)


def test_one_address_trying_many_usernames_is_locked_for_every_username(person, other_person) -> None:  # noqa: ANN001
    statuses = [sign_in(f"guess{i}", "wrong", SCRIPT).status_code for i in range(20)]
    assert statuses == [200] * 19 + [429]  # one wrong password each: the 20th failure locks the address
    refused = sign_in("guess20", "wrong", SCRIPT)
    assert refused.status_code == 429 and "after 20 failed attempts" in refused.content.decode()
    # Every username from there now, even with the right password, and in the admin too.
    assert sign_in("pat", "pat-pass-123", SCRIPT).status_code == 429
    assert sign_in("mallory", "mallory-pass-123", SCRIPT, path="/admin/login/?next=/admin/").status_code == 429
    # Another address signs in.
    signed_in = sign_in("pat", "pat-pass-123", ELSEWHERE)
    assert signed_in.status_code == 302 and signed_in["Location"] == "/"


def test_people_mistyping_behind_one_address_do_not_lock_each_other_out(person, other_person) -> None:  # noqa: ANN001
    for _ in range(5):  # one person locks only their own username
        sign_in("pat", "wrong", OFFICE)
    assert sign_in("pat", "pat-pass-123", OFFICE).status_code == 429
    for i in range(3):  # a few colleagues mistype a couple of times: 11 failures from the address
        for _ in range(2):
            assert sign_in(f"colleague{i}", "wrong", OFFICE).status_code == 200
    assert sign_in("mallory", "mallory-pass-123", OFFICE).status_code == 302
