"""Webhook targets must be public addresses: checked on registration and again on every delivery."""

from __future__ import annotations

import io
import ipaddress
import socket

import pytest
from django.core.management import call_command

from workflows.models import WebhookDelivery, WebhookEndpoint
from workflows.webhooks import (
    WebhookTargetRefused,
    address_refusal,
    webhook_emit,
    webhook_target_check,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def public_only(settings):  # noqa: ANN001, ANN201
    settings.WEBHOOK_ALLOW_PRIVATE = False
    return settings


@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("10.1.2.3", "private"), ("172.16.0.1", "private"),
    ("192.168.1.1", "private"), ("169.254.169.254", "link-local"), ("0.0.0.0", "unspecified"),  # noqa: S104
    ("224.0.0.1", "multicast"), ("240.0.0.1", "reserved"), ("100.64.0.1", "not globally routable"),
    ("::1", "loopback"), ("::", "unspecified"), ("fe80::1", "link-local"), ("fc00::1", "private"),
    ("ff02::1", "multicast"), ("ff0e::1", "multicast"), ("2001:db8::1", "private"),
    ("::ffff:127.0.0.1", "loopback (embedded in ::ffff:7f00:1)"), ("::ffff:10.0.0.1", "private (embedded in ::ffff:a00:1)"),
    ("2002:7f00:1::", "loopback (embedded in 2002:7f00:1::)"), ("64:ff9b::a00:1", "private (embedded in 64:ff9b::a00:1)"),
])
def test_addresses_that_are_not_public_are_refused_with_the_reason(address: str, reason: str) -> None:
    assert address_refusal(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_pass(address: str) -> None:
    assert address_refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://[::1]/hook", "http://[::ffff:127.0.0.1]/hook",
    "http://2130706433/hook", "http://0x7f.1/hook", "https://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data",
])
def test_names_and_spellings_that_reach_private_addresses_are_refused(public_only, url: str) -> None:  # noqa: ANN001
    with pytest.raises(WebhookTargetRefused) as refused:
        webhook_target_check(url)
    assert refused.value.code == "webhook_target_refused" and refused.value.details["refused"]


def test_only_http_and_https_are_accepted(public_only) -> None:  # noqa: ANN001
    with pytest.raises(WebhookTargetRefused) as refused:
        webhook_target_check("ftp://8.8.8.8/hook")
    assert refused.value.details["reason"] == "scheme"


def test_registration_refuses_a_private_target_with_a_clear_code(api, public_only, receiver) -> None:  # noqa: ANN001
    response = api.post("/api/v1/webhooks", {"url": receiver.url}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "webhook_target_refused" and "public addresses" in error["message"]
    assert error["details"]["refused"] == {"127.0.0.1": "loopback"} and error["details"]["url"] == receiver.url
    mapped = api.post("/api/v1/webhooks", {"url": "http://[::ffff:7f00:1]:8080/hook"}, format="json").json()["error"]
    assert mapped["code"] == "webhook_target_refused"
    assert not WebhookEndpoint.objects.exists()
    # A public address is accepted (registration resolves and checks; it connects to nothing).
    assert api.post("/api/v1/webhooks", {"url": "https://8.8.8.8/hook"}, format="json").status_code == 201


def test_registration_allows_private_targets_when_configured(api, receiver, settings) -> None:  # noqa: ANN001
    settings.WEBHOOK_ALLOW_PRIVATE = True
    assert api.post("/api/v1/webhooks", {"url": receiver.url}, format="json").status_code == 201


def test_the_admin_form_applies_the_same_policy(supervisor, public_only, client) -> None:  # noqa: ANN001
    client.force_login(supervisor)
    supervisor.is_staff = supervisor.is_superuser = True
    supervisor.save()
    response = client.post("/admin/workflows/webhookendpoint/add/",
                           {"owner": supervisor.pk, "url": "http://localhost:8080/hook", "events": "[]", "active": "on"})
    assert response.status_code == 200 and "must be public addresses" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def _endpoint_and_delivery(person, url: str) -> WebhookDelivery:  # noqa: ANN001
    WebhookEndpoint.objects.create(owner=person, url=url, secret="s" * 32)
    (delivery,) = webhook_emit("conversation.completed", {"owner_id": person.pk, "conversation_id": 1})
    return delivery


def test_a_delivery_is_checked_again_and_a_refused_one_fails_at_once(person, receiver, public_only) -> None:  # noqa: ANN001
    # Registered while private targets were allowed (or through the database): the delivery checks again.
    delivery = _endpoint_and_delivery(person, receiver.url)
    call_command("retry_webhooks", stdout=io.StringIO())
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("failed", 1, None)
    assert delivery.last_error.startswith("refused: ") and "127.0.0.1 (loopback)" in delivery.last_error
    assert receiver.requests == []
    call_command("retry_webhooks", stdout=io.StringIO())  # never retried
    delivery.refresh_from_db()
    assert delivery.attempts == 1


def test_a_name_that_rebinds_to_a_private_address_after_registration_is_refused(api, person, receiver, public_only, monkeypatch) -> None:  # noqa: ANN001
    answers = {"rebind.example": "8.8.8.8"}
    real_getaddrinfo = socket.getaddrinfo

    def resolver(host, port, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if host in answers:  # the name the attacker controls; anything else resolves for real
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[host], port))]
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    port = receiver.server.server_address[1]
    assert api.post("/api/v1/webhooks", {"url": f"http://rebind.example:{port}/hook"}, format="json").status_code == 201
    answers["rebind.example"] = "127.0.0.1"  # the name now points inside
    (delivery,) = webhook_emit("conversation.completed", {"owner_id": person.pk, "conversation_id": 1})
    call_command("retry_webhooks", stdout=io.StringIO())
    delivery.refresh_from_db()
    assert delivery.status == "failed" and "127.0.0.1 (loopback)" in delivery.last_error
    assert receiver.requests == []


def test_delivery_connects_to_the_checked_address_and_names_the_host(person, receiver, monkeypatch) -> None:  # noqa: ANN001
    # A name nothing on this machine knows: only the checked address it resolved to is dialled,
    # and the request still names the host (as TLS would, through SNI and the certificate check).
    port = receiver.server.server_address[1]
    real_getaddrinfo = socket.getaddrinfo

    def resolver(host, p, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if host == "hooks.integrator.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", p))]
        return real_getaddrinfo(host, p, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    delivery = _endpoint_and_delivery(person, f"http://hooks.integrator.example:{port}/hook?x=1")
    call_command("retry_webhooks", stdout=io.StringIO())
    delivery.refresh_from_db()
    assert delivery.status == "succeeded"
    (request,) = receiver.requests
    assert request["headers"]["Host"] == f"hooks.integrator.example:{port}"


def test_a_redirect_is_not_followed(person, monkeypatch) -> None:  # noqa: ANN001
    # A target could redirect the delivery inside; a 3xx is recorded as a failure instead.
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # noqa: ANN002
            return

        def do_POST(self) -> None:  # noqa: N802
            self.send_response(307)
            self.send_header("Location", "http://127.0.0.1:1/admin")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        delivery = _endpoint_and_delivery(person, f"http://127.0.0.1:{server.server_address[1]}/hook")
        call_command("retry_webhooks", stdout=io.StringIO())
        delivery.refresh_from_db()
        assert (delivery.status, delivery.last_status_code) == ("pending", 307)
        assert delivery.last_error.startswith("HTTP 307")
    finally:
        server.shutdown()
        server.server_close()


def test_a_name_that_does_not_resolve_is_refused_on_registration(api, public_only, monkeypatch) -> None:  # noqa: ANN001
    def resolver(host, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", resolver)  # no query leaves the machine
    response = api.post("/api/v1/webhooks", {"url": "http://no-such-host.invalid/hook"}, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "webhook_target_unresolvable"


def test_https_delivery_dials_the_checked_address_and_verifies_the_host_name(person, monkeypatch, tmp_path) -> None:  # noqa: ANN001
    # A TLS receiver on 127.0.0.1 with a certificate for the webhook's host name only: the
    # delivery connects to the address it checked, yet SNI and verification use the name.
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import trustme

    ca = trustme.CA()
    seen: list[dict] = []
    names: list[str | None] = []  # the server name each TLS client sent (SNI)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # noqa: ANN002
            return

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            seen.append({"host": self.headers["Host"], "sni": names[-1] if names else None})
            self.send_response(204)
            self.end_headers()

    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("hooks.integrator.example").configure_cert(server_context)
    server_context.sni_callback = lambda _socket, name, _context: names.append(name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = server_context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    real_getaddrinfo = socket.getaddrinfo

    def resolver(host, p, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if host in ("hooks.integrator.example", "other.integrator.example"):
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", p))]
        return real_getaddrinfo(host, p, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))  # the system trust store, for this test: our CA
    try:
        delivery = _endpoint_and_delivery(person, f"https://hooks.integrator.example:{port}/hook")
        call_command("retry_webhooks", stdout=io.StringIO())
        delivery.refresh_from_db()
        assert delivery.status == "succeeded", delivery.last_error
        assert seen == [{"host": f"hooks.integrator.example:{port}", "sni": "hooks.integrator.example"}]
        # A name the certificate does not cover fails verification, at the same address.
        WebhookEndpoint.objects.all().delete()
        other = _endpoint_and_delivery(person, f"https://other.integrator.example:{port}/hook")
        call_command("retry_webhooks", stdout=io.StringIO())
        other.refresh_from_db()
        assert other.status == "pending" and "doesn't match" in other.last_error, other.last_error
    finally:
        server.shutdown()
        server.server_close()


def test_a_name_that_stops_resolving_is_retried_not_refused(person, monkeypatch) -> None:  # noqa: ANN001
    def resolver(host, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    delivery = _endpoint_and_delivery(person, "https://hooks.integrator.example/hook")
    call_command("retry_webhooks", stdout=io.StringIO())
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("pending", 1) and delivery.next_attempt_at is not None
    assert delivery.last_error.startswith("The webhook host hooks.integrator.example does not resolve")
