"""Supervisors edit billing rules with their versions inline; orders are read-only."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from billing.models import BillingRule, BillingRuleVersion
from billing.review_summary import fee_summary, fee_summary_html
from workflows.review_summary import GENERIC_READER, reader_for, signal_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, supervisor):  # noqa: ANN001, ANN201
    call_command("seed_demo", stdout=io.StringIO())
    client.force_login(supervisor)
    return client


def _inline_form(rule: BillingRule, new: dict | None) -> dict:
    existing = list(rule.versions.order_by("version_no"))
    data = {"rule_code": rule.rule_code, "name": rule.name, "scope": json.dumps(rule.scope), "status": rule.status,
            "versions-TOTAL_FORMS": str(len(existing) + (1 if new else 0)), "versions-INITIAL_FORMS": str(len(existing)),
            "versions-MIN_NUM_FORMS": "0", "versions-MAX_NUM_FORMS": "1000"}
    for i, version in enumerate(existing):
        data[f"versions-{i}-id"] = str(version.pk)
        data[f"versions-{i}-rule"] = str(rule.pk)
    if new:
        i = len(existing)
        data.update({f"versions-{i}-{k}": v for k, v in new.items()})
        data[f"versions-{i}-rule"] = str(rule.pk)
    return data


def test_rule_pages_show_versions_and_add_one_through_the_service(admin_client) -> None:  # noqa: ANN001
    rule = BillingRule.objects.get(rule_code="SH-CITY-DEFAULT")
    assert admin_client.get("/admin/billing/billingrule/").status_code == 200
    page = admin_client.get(f"/admin/billing/billingrule/{rule.pk}/change/")
    assert page.status_code == 200 and "all_day" in page.content.decode()
    payload = json.dumps([{"name": "all_day", "type": "periodic", "time_window": {"start": "00:00", "end": "00:00"},
                           "unit_minutes": 60, "unit_price": 7, "max_charge": 70}])
    # The open-ended v1 overlaps anything later: the service refuses and nothing is stored.
    admin_client.post(f"/admin/billing/billingrule/{rule.pk}/change/", _inline_form(rule, {
        "effective_from_0": "2027-01-01", "effective_from_1": "00:00:00", "priority": "0", "rule_payload": payload}))
    assert BillingRuleVersion.objects.filter(rule=rule).count() == 1
    bad = admin_client.post(f"/admin/billing/billingrule/{rule.pk}/change/", _inline_form(rule, {
        "effective_from_0": "2027-01-01", "effective_from_1": "00:00:00", "priority": "0", "rule_payload": "[{\"type\": \"nope\"}]"}))
    assert bad.status_code == 200 and "rule_payload[0]" in bad.content.decode()


def test_orders_are_read_only(admin_client) -> None:  # noqa: ANN001
    assert admin_client.get("/admin/billing/parkingorder/").status_code == 200
    assert admin_client.get("/admin/billing/parkingorder/add/").status_code == 403


# --- a fee mismatch as the supervisor reads it (registered with workflows' review summaries) ---


FEE_SUBJECT = {"order_no": "X-1", "order_total_amount": "10.00", "simulated_total_amount": "12.50", "rule_code": "R", "version_no": 2}


def test_a_fee_summary_names_the_two_amounts_the_rule_and_the_difference() -> None:
    fee = fee_summary(FEE_SUBJECT)
    assert (fee.recorded, fee.simulated, fee.rule) == ("10.00", "12.50", "R, version 2")
    assert fee.difference == "The rule gives 2.50 more than the order records."
    assert [label for label, _ in fee.order] == ["Order", "Plate", "City", "Lot", "Entry", "Exit"]
    assert fee_summary({**FEE_SUBJECT, "simulated_total_amount": "10.00"}).difference == "The rule gives the amount the order records."


def test_billing_registers_the_fee_reader_with_workflows() -> None:
    reader = reader_for(FEE_SUBJECT)
    assert reader.kind == "billing.fee" and reader.summary_html is fee_summary_html
    assert reader_for({"order_no": "X-1"}) is GENERIC_READER  # an order without a simulated amount is no fee mismatch
    # The fee step reports its comparison as its check: the signals say what it compared.
    rows = {row.name: row for row in signal_rows({"qa_pass": False, "confidence": 1.0, "amount_check_result": "mismatch"},
                                                 qa_ran=False, reader=reader)}
    assert (rows["Amounts agree"].value, rows["Amounts agree"].held_against) == ("no", "must agree for an automatic pass")
    assert (rows["Amount check"].value, rows["Amount check"].held_against, rows["Amount check"].met) == ("mismatch", "match", False)
