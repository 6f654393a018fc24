"""The parking fee engine: pure Python, no Django; see payload.py and fees.py for the rules."""

from __future__ import annotations

from billing.engine.fees import FeeResult, SegmentCharge, simulate_fee
from billing.engine.money import quantize_money
from billing.engine.payload import (
    CompiledPayload,
    PayloadProblem,
    RulePayloadError,
    compile_payload,
    crosses_midnight,
    validate_rule_payload,
)

__all__ = [
    "CompiledPayload",
    "FeeResult",
    "PayloadProblem",
    "RulePayloadError",
    "SegmentCharge",
    "compile_payload",
    "crosses_midnight",
    "quantize_money",
    "simulate_fee",
    "validate_rule_payload",
]
