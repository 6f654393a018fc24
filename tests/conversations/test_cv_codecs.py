"""The hot paths' codecs: JSON (config.jsoncodec), the API's renderer and JSON field that use it, and timestamps read in C."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import uuid
from decimal import Decimal

import pytest
from django.db import connection
from django.utils.translation import gettext_lazy
from hypothesis import given
from hypothesis import strategies as st
from rest_framework import renderers as drf_renderers

from config.jsoncodec import dumps
from config.renderers import JSONRenderer
from workflows.models import AuditEvent, Run

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6) | st.integers(), inner, max_size=4),
    max_leaves=25,
)


@given(json_values)
def test_dumps_writes_what_the_standard_library_writes(value) -> None:  # noqa: ANN001
    assert json.loads(dumps(value)) == json.loads(json.dumps(value, ensure_ascii=False))


class Colour(enum.StrEnum):
    RED = "red"


class Tags(dict):
    pass


def test_dumps_accepts_what_the_standard_library_accepts_to_the_same_value() -> None:
    value = {"big": 2**70, "neg": -(2**65), "tuple": (1, "二"), 3: "int key", "colour": Colour.RED,
             "tags": Tags(a=1), "line": "a\u2028b", "ctrl": "\x00\x1f"}
    assert json.loads(dumps(value)) == json.loads(json.dumps(value, ensure_ascii=False))
    assert dumps("停车") == "\"停车\"".encode()  # UTF-8, not \\u escapes


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize("value", [datetime.datetime(2026, 3, 2, 10, 0, tzinfo=datetime.UTC), datetime.date(2026, 3, 2), {1, 2},
                                   Point(1), object(), Decimal("1.5"), {"nested": [datetime.time(1, 2)]}])
def test_dumps_refuses_what_the_standard_library_refuses(value) -> None:  # noqa: ANN001
    with pytest.raises(TypeError):
        json.dumps(value)
    with pytest.raises(TypeError):
        dumps(value)


def test_dumps_takes_the_callers_conversion() -> None:
    assert json.loads(dumps({"at": datetime.date(2026, 3, 2)}, default=str)) == {"at": "2026-03-02"}


@pytest.mark.parametrize("data", [
    {"id": 7, "text": "沪B88888 还欠多少钱？", "amount": Decimal("12.50"), "ratio": 0.1, "none": None, "flag": True,
     "at": datetime.datetime(2026, 3, 2, 10, 0, 0, 123456, tzinfo=datetime.UTC), "day": datetime.date(2026, 3, 2),
     "key": uuid.UUID(int=5), "label": gettext_lazy("Finish"), "js": "a\u2028b\u2029c", "set": {3},
     "list": [1, [2, {"x": "y"}]], 9: "int key"},
    [],
    "plain",
])
def test_the_renderer_sends_the_bytes_drf_sends(data) -> None:  # noqa: ANN001
    ours, drf = JSONRenderer(), drf_renderers.JSONRenderer()
    assert ours.render(data, "application/json") == drf.render(data, "application/json")
    assert ours.render(data, "application/json; indent=2") == drf.render(data, "application/json; indent=2")
    assert ours.render(None) == b""


def test_the_api_answers_through_the_renderer(chat) -> None:  # noqa: ANN001
    conversation = chat("parking_help_desk")
    response = conversation.client.post(f"/api/v1/conversations/{conversation.id}/messages",
                                        {"text": "我的车沪B88888还欠多少钱"}, format="json")
    assert response.status_code == 201
    assert response.content == drf_renderers.JSONRenderer().render(response.data, "application/json")
    assert "沪B88888".encode() in response.content


@pytest.mark.django_db
def test_the_json_field_stores_and_reads_back_the_same_value(chat) -> None:  # noqa: ANN001
    conversation = chat("parking_help_desk")
    run = Run.objects.get(conversation__id=conversation.id)
    state = {**run.state, "probe": {"中文": "值", "n": 2**70, "f": 0.1, "list": [1, None, True]}}
    Run.objects.filter(pk=run.pk).update(state=state)
    assert Run.objects.get(pk=run.pk).state == state
    event = AuditEvent.objects.create(event_type="probe", run=run, payload={"k": "é", "n": [1.5, -3]})
    assert AuditEvent.objects.get(pk=event.pk).payload == {"k": "é", "n": [1.5, -3]}
    assert Run.objects.filter(pk=run.pk, state__probe__中文="值").exists()
    with pytest.raises(TypeError):
        Run.objects.filter(pk=run.pk).update(state={"when": datetime.datetime(2026, 3, 2, tzinfo=datetime.UTC)})
    assert connection.vendor in ("postgresql", "sqlite")


def _reference_jsonable(value):  # noqa: ANN001, ANN202  (the audit trail's coercion, written plainly)
    if isinstance(value, dict):
        return {str(k): _reference_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_reference_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


audit_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5) | st.decimals(allow_nan=False)
    | st.datetimes() | st.sampled_from([Colour.RED, Tags(a=1)]),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.frozensets(st.integers(), max_size=3)
    | st.dictionaries(st.text(max_size=4) | st.integers() | st.booleans(), inner, max_size=4),
    max_leaves=30,
)


@given(audit_values)
def test_the_audit_trails_coercion_is_the_plain_one(value) -> None:  # noqa: ANN001
    from workflows.audit import _jsonable

    assert _jsonable(value) == _reference_jsonable(value)
