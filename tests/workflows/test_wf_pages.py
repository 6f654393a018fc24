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


def test_api_errors_are_json_even_with_debug(client, settings) -> None:  # noqa: ANN001
    settings.DEBUG = True
    response = client.get("/api/v1/nowhere/at/all")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_an_unexpected_api_failure_is_a_json_500(api, monkeypatch, plans) -> None:  # noqa: ANN001
    from workflows import selectors

    def boom() -> None:
        raise RuntimeError("database on fire")

    monkeypatch.setattr(selectors, "plans_latest", boom)
    response = api.get("/api/v1/workflow-plans")
    assert response.status_code == 500
    assert response.json() == {"error": {"code": "server_error", "message": "An internal error occurred.", "details": {}}}


def test_nul_characters_are_refused_as_bad_requests(api) -> None:  # noqa: ANN001
    assert api.get("/api/v1/arrears-orders?plate_no=%00abc").status_code == 400
    response = api.post("/api/v1/conversations", '{"workflow_id": "a\\u0000b"}', content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_characters"


def test_a_form_body_with_too_many_fields_is_a_400(api, settings) -> None:  # noqa: ANN001
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 5
    body = "&".join(f"f{i}=x" for i in range(20))
    response = api.post("/api/v1/retrieve", body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and response.json()["error"]["code"] == "bad_request"
