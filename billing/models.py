"""Billing rules with versions, parking orders, and fee verifications."""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import Func, Value
from django.db.models.functions import Replace, Upper

from config.fields import JSONField

# Written between the groups of a plate or an order number ("粤B·D12345", "GZ-0603-771"), and left out
# when two are compared (`billing.selectors.identifier_key` in Python).
IDENTIFIER_SEPARATORS = (" ", "·", "•", ".", "-", "_")


def identifier_key_of(column: str) -> Func:
    """A column's identifier as compared, computed by the database: upper case, without the separators."""
    folded = Upper(column)
    for char in IDENTIFIER_SEPARATORS:
        folded = Replace(folded, Value(char), Value(""))
    return folded


class City(models.Model):
    """A city the operator runs lots in: its code (as rules and orders give it) and how people name it."""

    code = models.CharField(max_length=32, unique=True)
    names = JSONField(default=dict, blank=True, help_text='Name per language: {"en": "Shanghai", "zh": "上海"}')
    aliases = JSONField(default=list, blank=True, help_text='Other names people use: ["沪", "SH"]')
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["code"]
        verbose_name_plural = "cities"

    def __str__(self) -> str:
        return " / ".join([self.code, *self.names.values()])


class Lot(models.Model):
    """A parking lot: its code, unique within its city (two cities may use the same code), and its names."""

    city = models.ForeignKey(City, on_delete=models.PROTECT, related_name="lots")
    code = models.CharField(max_length=64)
    names = JSONField(default=dict, blank=True, help_text='Name per language: {"en": "Pudong lot 1", "zh": "浦东一号停车场"}')
    aliases = JSONField(default=list, blank=True, help_text='Other names people use: ["浦东一号", "Pudong 1"]')
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["city__code", "code"]
        constraints = [models.UniqueConstraint(fields=["city", "code"], name="lot_code_unique_in_city")]

    def __str__(self) -> str:
        return " / ".join([self.code, *self.names.values()])


class BillingRule(models.Model):
    """A rule's identity and scope; what it charges lives in its versions."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        INACTIVE = "inactive"

    rule_code = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    scope = JSONField(default=dict, help_text='{"city_code": "310100", "lot_codes": ["LOT-A"]}')
    city_code = models.CharField(max_length=32, db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["rule_code"]

    def __str__(self) -> str:
        return f"{self.rule_code} ({self.name})"

    @property
    def lot_codes(self) -> list[str]:
        return list(self.scope.get("lot_codes") or [])


class BillingRuleVersion(models.Model):
    """One version of a rule: an effective range, a priority and the payload the engine runs."""

    rule = models.ForeignKey(BillingRule, on_delete=models.PROTECT, related_name="versions")
    version_no = models.PositiveIntegerField()
    effective_from = models.DateTimeField()
    effective_to = models.DateTimeField(null=True, blank=True)
    priority = models.IntegerField(default=0)
    rule_payload = JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rule", "version_no"]
        constraints = [
            models.UniqueConstraint(fields=["rule", "version_no"], name="rule_version_no_unique"),
            models.CheckConstraint(
                condition=models.Q(effective_to__isnull=True) | models.Q(effective_to__gt=models.F("effective_from")),
                name="version_range_forward",
            ),
        ]
        indexes = [models.Index(fields=["rule", "effective_from"])]

    def __str__(self) -> str:
        return f"{self.rule.rule_code} v{self.version_no}"


class ParkingOrder(models.Model):
    """A stay with its amounts; arrears and status always follow from the amounts."""

    class Status(models.TextChoices):
        IN_PROGRESS = "in_progress", "In progress"
        UNPAID = "unpaid"
        PARTIALLY_PAID = "partially_paid", "Partially paid"
        PAID = "paid"

    order_no = models.CharField(max_length=64, unique=True)
    plate_no = models.CharField(max_length=16, db_index=True)
    # The plate as compared ("沪B·88888" and "沪b 88888" are 沪B88888), kept by the database: a plate's
    # orders are one indexed lookup however the plate was written.
    plate_key = models.GeneratedField(expression=identifier_key_of("plate_no"), output_field=models.CharField(max_length=16),
                                      db_persist=True, db_index=True)
    city_code = models.CharField(max_length=32)
    lot_code = models.CharField(max_length=64)
    billing_rule_code = models.CharField(max_length=64, blank=True)
    billing_rule_version_no = models.PositiveIntegerField(null=True, blank=True)
    entry_time = models.DateTimeField()
    exit_time = models.DateTimeField(null=True, blank=True)
    total_amount = models.DecimalField(max_digits=12, decimal_places=2, default=Decimal("0.00"))
    paid_amount = models.DecimalField(max_digits=12, decimal_places=2, default=Decimal("0.00"))
    arrears_amount = models.DecimalField(max_digits=12, decimal_places=2, default=Decimal("0.00"))
    # Paid beyond the total is money the operator owes back (a prepaid stay that cost less, a fee adjusted below
    # what was paid): recorded only on an order marked as a credit, never as a typing slip.
    is_credit = models.BooleanField(default=False, help_text="The order may hold more paid than its total (an overpayment owed back).")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.UNPAID)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-entry_time"]
        indexes = [models.Index(fields=["plate_no", "city_code"])]
        constraints = [
            models.CheckConstraint(condition=models.Q(total_amount__gte=0), name="order_total_non_negative"),
            models.CheckConstraint(condition=models.Q(paid_amount__gte=0), name="order_paid_non_negative"),
            # a stay still in progress has no total yet (prepayments are taken before it ends)
            models.CheckConstraint(
                condition=models.Q(is_credit=True) | models.Q(exit_time__isnull=True) | models.Q(paid_amount__lte=models.F("total_amount")),
                name="order_overpaid_only_as_credit",
            ),
        ]

    def __str__(self) -> str:
        return self.order_no


class FeeVerification(models.Model):
    """One verification of an order's fee against the engine, and the review it opened."""

    class Result(models.TextChoices):
        MATCH = "match"
        MISMATCH = "mismatch"

    class Action(models.TextChoices):
        AUTO_PASS = "auto_pass", "Passed automatically"
        NEEDS_REVIEW = "needs_review", "Needs review"

    order = models.ForeignKey(ParkingOrder, on_delete=models.PROTECT, related_name="verifications")
    rule_code = models.CharField(max_length=64)
    version_no = models.PositiveIntegerField()
    order_total_amount = models.DecimalField(max_digits=12, decimal_places=2)
    simulated_total_amount = models.DecimalField(max_digits=12, decimal_places=2)
    result = models.CharField(max_length=16, choices=Result.choices)
    action = models.CharField(max_length=16, choices=Action.choices)
    breakdown = JSONField(default=list)
    review = models.ForeignKey("workflows.Review", null=True, blank=True, on_delete=models.PROTECT, related_name="fee_verifications")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.order.order_no}: {self.result}"
