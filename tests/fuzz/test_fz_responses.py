"""Real answers conform to the OpenAPI schema: each shipped workflow driven through its
turns, choices and reviews, billing and knowledge calls, every response validated against
its operation's documented status, content type and body.

The fuzzer mostly meets empty lists and 404s; this walks the paths where the bodies are full.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
import schemathesis
from werkzeug.test import Client

from config.wsgi import application

schema = schemathesis.openapi.from_wsgi("/api/schema/", application)

SCRIPTS = {
    "parking_help_desk": ["Does plate 沪B88888 have unpaid parking?", "verify the second one",
                          "How is parking charged at lot SH-PD-002 on 2026-03-31 at 10:00?", "订单SCN-020收了18块，是不是收多了？"],
    "rv_diagnostic": ["Roof AC is blowing warm air", "I read 121 volts at the unit", "The compressor hums but won't start",
                      "Capacitor reads 12.5 uF, rated 45 uF", "Actually I found oily residue and a leak at the evaporator coil"],
    "manager_assistant": ["My employee Sam didn't show up for two shifts", "Yes, I called him twice, no answer",
                          "No, first time, nothing documented yet"],
    "permit_form": ["It's for my business", "Mostly offices, about 50 people", "hmm"],
    "project_intake": ["We want a booking app for our clinic so patients can book visits", "Clinic staff and patients", "idk"],
}


class Api:
    """A WSGI client that validates every answer against the schema and notes the operations seen."""

    def __init__(self, token: str):
        self.client = Client(application)
        self.token = token
        self.seen: set[str] = set()

    def call(self, method: str, template: str, expect: int | tuple[int, ...] | None = None, *, query: str = "",
             body: Any = None, headers: dict[str, str] | None = None, **path: Any) -> Any:
        url = re.sub(r"{(\w+)}", lambda m: str(path[m.group(1)]), template) + (f"?{query}" if query else "")
        response = self.client.open(url, method=method, headers={"Authorization": f"Token {self.token}", **(headers or {})},
                                    data=json.dumps(body) if body is not None else None,
                                    content_type="application/json" if body is not None else None)
        documented = schema.raw_schema["paths"][template][method.lower()]["responses"]
        assert str(response.status_code) in documented, (method, template, response.status_code)
        content = documented[str(response.status_code)].get("content", {})
        if response.get_data():
            assert response.mimetype in content, (method, template, response.status_code, response.mimetype)
        schema[template][method].validate_response(response)  # the body against its documented schema
        self.seen.add(f"{method} {template}")
        if expect is not None:
            assert response.status_code in ((expect,) if isinstance(expect, int) else expect), (url, response.get_data()[:300])
        return response.get_json(silent=True)


def _token(username: str, *, supervisor: bool = False) -> str:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from workflows.demo import make_supervisor

    user, _ = get_user_model().objects.get_or_create(username=username)
    if supervisor:
        make_supervisor(user)
    return Token.objects.get_or_create(user=user)[0].key


@pytest.mark.django_db(transaction=True)  # the WSGI app closes connections after each request
def test_real_answers_conform_to_the_schema() -> None:
    from django.core.management import call_command

    call_command("seed_demo", stdout=io.StringIO())
    person, supervisor = Api(_token("schema-person")), Api(_token("schema-supervisor", supervisor=True))

    plans = person.call("GET", "/api/v1/workflow-plans", 200)["results"]
    for plan in plans:
        person.call("GET", "/api/v1/workflow-plans/{workflow_id}", 200, workflow_id=plan["workflow_id"], query="version=1")

    # Every shipped workflow: start, turns, a replayed turn, choices (eligible or not), transcript, audit.
    for workflow_id, script in SCRIPTS.items():
        state = person.call("POST", "/api/v1/conversations", 201, body={"workflow_id": workflow_id, "locale": "en"})
        cid = state["id"]
        for i, text in enumerate(script):
            state = person.call("POST", "/api/v1/conversations/{conversation_id}/messages", (201, 409),
                                body={"text": text}, headers={"Idempotency-Key": f"{workflow_id}-{i}"}, conversation_id=cid)
        person.call("POST", "/api/v1/conversations/{conversation_id}/messages", (201, 409), body={"text": script[-1]},
                    headers={"Idempotency-Key": f"{workflow_id}-{len(script) - 1}"}, conversation_id=cid)
        state = person.call("GET", "/api/v1/conversations/{conversation_id}", 200, conversation_id=cid)
        for option in state["options"][:3]:
            person.call("POST", "/api/v1/conversations/{conversation_id}/choose", (200, 409),
                        body={"option_id": option["option_id"], "consent": True}, conversation_id=cid)
        person.call("POST", "/api/v1/conversations/{conversation_id}/choose", 409, body={"option_id": "no_such_option"}, conversation_id=cid)
        messages = person.call("GET", "/api/v1/conversations/{conversation_id}/messages", 200, conversation_id=cid)["results"]
        person.call("GET", "/api/v1/conversations/{conversation_id}/messages", 200, conversation_id=cid, query=f"after={messages[0]['id']}")
        person.call("GET", "/api/v1/conversations/{conversation_id}/audit", 200, conversation_id=cid)
        person.call("GET", "/api/v1/conversations/{conversation_id}/audit", 200, conversation_id=cid, query="export=csv")
    assert person.call("GET", "/api/v1/conversations", 200)["count"] == len(SCRIPTS)
    person.call("GET", "/api/v1/conversations/{conversation_id}", 404, conversation_id=10**9)

    # Billing: rules, simulation, orders, verification, arrears.
    rules = person.call("GET", "/api/v1/billing-rules", 200)["results"]
    person.call("GET", "/api/v1/billing-rules/{rule_code}", 200, rule_code=rules[0]["rule_code"])
    stay = {"entry_time": "2026-03-02T08:00:00+08:00", "exit_time": "2026-03-04T10:10:00+08:00"}
    person.call("POST", "/api/v1/billing-rules/simulate", 200, body={"rule_code": rules[0]["rule_code"], **stay})
    person.call("POST", "/api/v1/billing-rules/simulate", 200, body={"rule_payload": rules[0]["versions"][0]["rule_payload"], **stay})
    order = {"order_no": "SCHEMA-1", "plate_no": "沪A00001", "city_code": "310100", "lot_code": "SH-PD-001", **stay, "paid_amount": 1}
    supervisor.call("POST", "/api/v1/parking-orders", 201, body=order)
    supervisor.call("POST", "/api/v1/parking-orders", 409, body=order)
    supervisor.call("POST", "/api/v1/parking-orders", 201, body={**order, "order_no": "SCHEMA-2", "exit_time": None})
    supervisor.call("GET", "/api/v1/parking-orders/{order_no}", 200, order_no="SCHEMA-2")
    supervisor.call("POST", "/api/v1/parking-orders/{order_no}/verify", 409, order_no="SCHEMA-2")
    for order_no in ("SCHEMA-1", "SCN-019", "SCN-020"):
        supervisor.call("POST", "/api/v1/parking-orders/{order_no}/verify", 200, order_no=order_no)
    supervisor.call("GET", "/api/v1/arrears-orders", 200, query="plate_no=%E6%B2%AAB88888")
    supervisor.call("POST", "/api/v1/cities", 201, body={"code": "320500", "names": {"en": "Suzhou", "zh": "苏州"}})
    supervisor.call("POST", "/api/v1/cities", 200, body={"code": "320500", "aliases": ["姑苏"]})
    supervisor.call("GET", "/api/v1/cities", 200)
    supervisor.call("POST", "/api/v1/lots", 201, body={"city_code": "320500", "code": "SZ-1", "names": {"zh": "姑苏一号"}})
    supervisor.call("POST", "/api/v1/lots", 404, body={"city_code": "000000", "code": "SZ-1"})
    supervisor.call("GET", "/api/v1/lots", 200, query="city_code=320500")
    rule = {"rule_code": "SCHEMA-RULE", "name": "Schema", "scope": {"city_code": "310100", "lot_codes": ["SH-PD-001"]},
            "version": {"effective_from": "2030-01-01T00:00:00+08:00", "rule_payload": rules[0]["versions"][0]["rule_payload"]}}
    supervisor.call("POST", "/api/v1/billing-rules", 201, body=rule)
    supervisor.call("POST", "/api/v1/billing-rules", 409, body=rule)

    # Reviews: the queue, one review, a decision, a second decision (409); the audit export.
    reviews = supervisor.call("GET", "/api/v1/reviews", 200, query="status=pending")["results"]
    assert reviews, "the scripts open at least one review"
    review = supervisor.call("GET", "/api/v1/reviews/{review_id}", 200, review_id=reviews[0]["id"])
    decision = {"outcome": "approve", "reason": "checked"}
    supervisor.call("POST", "/api/v1/reviews/{review_id}/decision", 200, body=decision, review_id=review["id"])
    supervisor.call("POST", "/api/v1/reviews/{review_id}/decision", 409, body=decision, review_id=review["id"])
    person.call("GET", "/api/v1/reviews", 403)
    supervisor.call("GET", "/api/v1/audit-events", 200)
    supervisor.call("GET", "/api/v1/audit-events", 200, query="export=csv")

    # Knowledge: a source with content, a chunk batch, retrieval.
    source = {"source_id": "kb.schema", "title": "Schema", "doc_type": "faq", "city_code": "310100",
              "effective_from": "2026-01-01T00:00:00+08:00", "content": "# Fees\n\nParking is charged per hour."}
    supervisor.call("POST", "/api/v1/knowledge/sources", 201, body=source)
    supervisor.call("POST", "/api/v1/knowledge/sources", 200, body=source)
    supervisor.call("POST", "/api/v1/knowledge/chunks/batch", 200,
                    body={"source_id": "kb.schema", "chunks": [{"chunk_id": "kb-schema-x", "text": "Night parking is free."}]})
    person.call("POST", "/api/v1/retrieve", 200, body={"query": "parking fee per hour", "at_time": "2026-03-02T08:00:00+08:00"})

    # Webhooks: register, list, deliveries, remove.
    hook = person.call("POST", "/api/v1/webhooks", 201, body={"url": "http://127.0.0.1:9/concierge", "events": ["review.decided"]})
    person.call("GET", "/api/v1/webhooks", 200)
    person.call("GET", "/api/v1/webhooks/{endpoint_id}/deliveries", 200, endpoint_id=hook["id"])
    person.call("DELETE", "/api/v1/webhooks/{endpoint_id}", 204, endpoint_id=hook["id"])
    person.call("DELETE", "/api/v1/webhooks/{endpoint_id}", 404, endpoint_id=hook["id"])

    # The upload last: it changes the plans the conversations above ran on.
    plan = supervisor.call("GET", "/api/v1/workflow-plans/{workflow_id}", 200, workflow_id="permit_form")
    supervisor.call("POST", "/api/v1/workflow-plans", 200, body=plan["definition"])

    documented = {f"{method.upper()} {path}" for path, item in schema.raw_schema["paths"].items() for method in item}
    assert documented == person.seen | supervisor.seen, documented ^ (person.seen | supervisor.seen)
