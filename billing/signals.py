"""Billing's signals: what other code may react to without billing knowing it."""

from __future__ import annotations

from django.dispatch import Signal

# Sent after the transaction that added a rule version commits; keyword: `version`
# (the BillingRuleVersion). Billing's knowledge regenerates that rule's explanations.
rule_version_added = Signal()
