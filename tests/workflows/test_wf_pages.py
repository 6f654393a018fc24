"""The product serves its pages: sign-in, and a start page with the workflows."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_start_page_needs_sign_in_and_lists_workflows(client, person, plans) -> None:  # noqa: ANN001
    assert client.get("/").status_code == 302
    assert client.get("/login/").status_code == 200
    client.force_login(person)
    page = client.get("/").content.decode()
    assert "Project intake" in page and "Parking help desk" in page


def test_page_404_is_html_and_api_404_is_json(client) -> None:  # noqa: ANN001
    assert client.get("/nowhere/").status_code == 404
    response = client.get("/api/v1/nowhere")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
