"""A billing data set loaded as the REST API takes it: cities, lots, rules and orders.

Scripted dialogues' `setup` and the knowledge evaluation's second-operator fixture use it:

    {"cities": [{"code", "names", "aliases"}], "lots": [{"city_code", "code", "names", "aliases"}],
     "rules": [{"rule_code", "name", "scope", "version"}], "orders": ["7734412" | {"order_no", ...}]}

Whatever already exists is left as it is (a rule version by its rule and start, an order by its
number), so loads may share data. An order given as a bare number is a copy of the first order
on record, saved under that number.
"""

from __future__ import annotations

from typing import Any


def dataset_load(data: dict[str, Any]) -> None:
    """Create the cities, lots, rules and orders of a data set, in that order, skipping what exists."""
    from .models import BillingRuleVersion, ParkingOrder
    from .parsing import parse_time
    from .services import billing_rule_version_add, city_save, lot_save, parking_order_create

    for city in data.get("cities", ()):
        city_save(data=city)
    for lot in data.get("lots", ()):
        lot_save(data=lot)
    for rule in data.get("rules", ()):
        start = parse_time(rule["version"]["effective_from"], "effective_from")
        if not BillingRuleVersion.objects.filter(rule__rule_code=rule["rule_code"], effective_from=start).exists():
            billing_rule_version_add(data=rule)
    template = ParkingOrder.objects.order_by("pk").first()
    for order in data.get("orders", ()):
        number = order["order_no"] if isinstance(order, dict) else order
        if ParkingOrder.objects.filter(order_no=number).exists():
            continue
        if isinstance(order, dict):
            parking_order_create(data=order)
        elif template is not None:
            template.pk, template.order_no = None, number
            template.save()
