"""Billing REST endpoints: rules with versions, simulation, orders, arrears, verification, lots and cities.

Prices are public: anyone signed in reads rules and simulates a fee. Orders, plates and
arrears are the operator's (a person reaches them only through their own conversations), and
only supervisors change rules, since a rule prices every stay and order in its scope.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import validated_input, validated_query
from config.schema import conflict
from config.serializers import (
    POSITIVE_INT_MAX,
    AwareDateTimeField,
    JSONInput,
    MoneyField,
    MoneyOutField,
)
from workflows.permissions import HoldsRequiredPerms

from . import selectors, services
from .models import BillingRule, City, Lot, ParkingOrder
from .parsing import local_iso


class LocalTimeOutField(serializers.DateTimeField):
    """A time as the API writes it: ISO 8601 in the product's zone with its offset (`local_iso`; DRF's own
    field would write "Z" for an offset of zero)."""

    def to_representation(self, value: datetime | None) -> str | None:
        return local_iso(value)


class BlankAsNullCharField(serializers.CharField):
    """A text column that stores "not given" as a blank, written as null."""

    def to_representation(self, value: str | None) -> str | None:
        return value or None


class ScopeIn(JSONInput):
    city_code = serializers.CharField(max_length=32)
    lot_codes = serializers.ListField(child=serializers.CharField(max_length=64), required=False, default=list)


class VersionIn(JSONInput):
    effective_from = AwareDateTimeField()
    effective_to = AwareDateTimeField(required=False, allow_null=True, default=None)
    priority = serializers.IntegerField(required=False, default=0, min_value=-1000, max_value=1000)
    rule_payload = serializers.JSONField()


class RuleIn(JSONInput):
    rule_code = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200)
    scope = ScopeIn()
    version = VersionIn()


class ScopeOut(serializers.Serializer):
    city_code = serializers.CharField()
    lot_codes = serializers.ListField(child=serializers.CharField(), required=False)


class VersionOut(serializers.Serializer):
    version_no = serializers.IntegerField()
    effective_from = LocalTimeOutField()
    effective_to = LocalTimeOutField(allow_null=True, help_text="null: open-ended.")
    priority = serializers.IntegerField()
    rule_payload = serializers.JSONField(help_text="The segments (see the billing rule payload).")


class RuleOut(serializers.Serializer):
    rule_code = serializers.CharField()
    name = serializers.CharField()
    scope = ScopeOut()
    status = serializers.ChoiceField(choices=BillingRule.Status.choices)
    versions = VersionOut(many=True, help_text="Oldest first.")


class RuleCreatedOut(RuleOut):
    """A rule after a version was added, with the number of the version added."""

    created_version_no = serializers.SerializerMethodField()  # the service's version, given in the context

    def get_created_version_no(self, rule: BillingRule) -> int:
        return self.context["created_version_no"]


class RuleListOut(serializers.Serializer):
    count = serializers.IntegerField()
    results = RuleOut(many=True)


class RuleQueryIn(serializers.Serializer):
    city_code = serializers.CharField(max_length=32, required=False)
    lot_code = serializers.CharField(max_length=64, required=False)


class OrderOut(serializers.Serializer):
    order_no = serializers.CharField()
    plate_no = serializers.CharField()
    city_code = serializers.CharField()
    lot_code = serializers.CharField()
    billing_rule_code = BlankAsNullCharField(allow_null=True)
    billing_rule_version_no = serializers.IntegerField(allow_null=True)
    entry_time = LocalTimeOutField()
    exit_time = LocalTimeOutField(allow_null=True, help_text="null: the car is still parked.")
    total_amount = MoneyOutField()
    paid_amount = MoneyOutField()
    arrears_amount = MoneyOutField()
    is_credit = serializers.BooleanField(help_text="true: the order may hold more paid than its total (an overpayment owed back).")
    status = serializers.ChoiceField(choices=ParkingOrder.Status.choices)


class BillingRuleListApi(APIView):
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    # Creates the rule or appends a version and updates its name and scope.
    required_perms = {"POST": ("billing.add_billingrule", "billing.change_billingrule", "billing.add_billingruleversion")}

    @extend_schema(parameters=[RuleQueryIn], responses=RuleListOut, summary="List billing rules with their versions")
    def get(self, request: Request) -> Response:
        query = validated_query(RuleQueryIn, request.query_params)
        rules = selectors.billing_rules_list(city_code=query.get("city_code"), lot_code=query.get("lot_code"))
        return Response(RuleListOut({"count": len(rules), "results": rules}).data)

    @extend_schema(
        request=RuleIn,
        responses={201: RuleCreatedOut, **conflict("The version overlaps another of the rule (`version_overlap`).")},
        summary="Create a rule or append a version (409 on overlap)",
    )
    def post(self, request: Request) -> Response:
        data = validated_input(RuleIn, request.data)
        rule, version = services.billing_rule_version_add(data=data, user=request.user)
        body = RuleCreatedOut(selectors.billing_rule_get(rule.rule_code), context={"created_version_no": version.version_no}).data
        return Response(body, status=status.HTTP_201_CREATED)


class BillingRuleDetailApi(APIView):
    @extend_schema(responses=RuleOut, summary="Read a billing rule with its versions")
    def get(self, request: Request, rule_code: str) -> Response:
        return Response(RuleOut(selectors.billing_rule_get(rule_code)).data)


class SimulateIn(JSONInput):
    rule_code = serializers.CharField(required=False, allow_blank=False)
    city_code = serializers.CharField(required=False, allow_blank=False)
    lot_code = serializers.CharField(required=False, allow_blank=False)
    rule_payload = serializers.JSONField(required=False)
    entry_time = AwareDateTimeField()
    exit_time = AwareDateTimeField()

    def validate(self, attrs: dict) -> dict:
        if not any(attrs.get(k) is not None for k in ("rule_code", "city_code", "rule_payload")):
            raise serializers.ValidationError("Give rule_code, city_code (+ lot_code) or an inline rule_payload.")
        return attrs


class SegmentChargeOut(serializers.Serializer):
    segment_name = serializers.CharField()
    segment_type = serializers.CharField()
    minutes = serializers.IntegerField()
    amount = MoneyOutField(max_digits=None)
    free_minutes = serializers.IntegerField()
    capped = serializers.BooleanField()


class SimulationOut(serializers.Serializer):
    duration_minutes = serializers.IntegerField(source="result.duration_minutes")
    total_amount = MoneyOutField(max_digits=None, source="result.total_amount")
    breakdown = SegmentChargeOut(many=True, source="result.breakdown")
    rule_code = serializers.CharField(required=False, help_text="With a stored rule: the rule and version used.")
    version_no = serializers.IntegerField(required=False)

    def to_representation(self, simulation: selectors.Simulation) -> dict:
        body = super().to_representation(simulation)
        if simulation.rule_code is None:  # an inline payload: no stored rule to name
            del body["rule_code"], body["version_no"]
        return body


class SimulateApi(APIView):
    @extend_schema(request=SimulateIn, responses=SimulationOut, summary="Simulate a stay's fee")
    def post(self, request: Request) -> Response:
        simulation = selectors.fee_simulate(**validated_input(SimulateIn, request.data))
        return Response(SimulationOut(simulation).data)


class OrderIn(JSONInput):
    order_no = serializers.CharField(max_length=64)
    plate_no = serializers.CharField(max_length=16)
    city_code = serializers.CharField(max_length=32)
    lot_code = serializers.CharField(max_length=64)
    billing_rule_code = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=64)
    billing_rule_version_no = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=POSITIVE_INT_MAX)
    entry_time = AwareDateTimeField()
    exit_time = AwareDateTimeField(required=False, allow_null=True)
    total_amount = MoneyField(required=False, allow_null=True)
    paid_amount = MoneyField(required=False, default="0.00", help_text="More than the total only with is_credit (400 `paid_exceeds_total`).")
    is_credit = serializers.BooleanField(required=False, default=False,
                                         help_text="The order records an overpayment owed back: paid_amount may exceed the total.")


class OrderListApi(APIView):
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"POST": ("billing.add_parkingorder",)}

    @extend_schema(
        request=OrderIn,
        responses={201: OrderOut, **conflict("An order with this order_no exists (`order_exists`).")},
        summary="Create a parking order (total computed when missing)",
    )
    def post(self, request: Request) -> Response:
        order = services.parking_order_create(data=validated_input(OrderIn, request.data), user=request.user)
        return Response(OrderOut(order).data, status=status.HTTP_201_CREATED)


class OrderDetailApi(APIView):
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"GET": ("billing.view_parkingorder",)}

    @extend_schema(responses=OrderOut, summary="Read a parking order")
    def get(self, request: Request, order_no: str) -> Response:
        return Response(OrderOut(selectors.order_get(order_no)).data)


class ArrearsQueryIn(serializers.Serializer):
    plate_no = serializers.CharField(max_length=16)
    city_code = serializers.CharField(max_length=32, required=False)


class ArrearsOut(serializers.Serializer):
    plate_no = serializers.CharField()
    count = serializers.IntegerField()
    total_arrears = MoneyOutField(max_digits=None)
    results = OrderOut(many=True)


class ArrearsApi(APIView):
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"GET": ("billing.view_parkingorder",)}

    @extend_schema(parameters=[ArrearsQueryIn], responses=ArrearsOut, summary="Orders of a plate with arrears")
    def get(self, request: Request) -> Response:
        query = validated_query(ArrearsQueryIn, request.query_params, code="validation_error")
        plate = query["plate_no"]
        orders = selectors.arrears_list(plate_no=plate, city_code=query.get("city_code"))
        total = sum((o.arrears_amount for o in orders), start=Decimal("0"))
        return Response(ArrearsOut({"plate_no": plate.upper(), "count": len(orders), "total_arrears": total, "results": orders}).data)


class VerifyOut(serializers.Serializer):
    order_no = serializers.CharField(source="order.order_no")
    amount_check_result = serializers.ChoiceField(choices=["match", "mismatch"], source="result")
    amount_check_action = serializers.ChoiceField(choices=["auto_pass", "needs_review"], source="action")
    order_total_amount = MoneyOutField()
    simulated_total_amount = MoneyOutField(max_digits=None)
    rule_code = serializers.CharField()
    version_no = serializers.IntegerField()
    review_id = serializers.IntegerField(allow_null=True, help_text="The review opened for a mismatch.")


class VerifyApi(APIView):
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"POST": ("billing.add_feeverification",)}

    @extend_schema(
        request=None,
        responses={200: VerifyOut, **conflict("The order is still in progress (`order_in_progress`).")},
        summary="Verify an order's fee against the rule in force at entry",
    )
    def post(self, request: Request, order_no: str) -> Response:
        verification = services.parking_order_verify(order_no=order_no, user=request.user)
        return Response(VerifyOut(verification).data)


# --- lots and cities ---------------------------------------------------------------


class NamesField(serializers.DictField):
    def __init__(self, **kwargs) -> None:  # noqa: ANN003
        super().__init__(child=serializers.CharField(max_length=200), **kwargs)


class CityIn(JSONInput):
    code = serializers.CharField(max_length=32)
    names = NamesField(required=False)
    # untrimmed here, so the length the schema states is the length checked (the service trims)
    aliases = serializers.ListField(child=serializers.CharField(max_length=200, trim_whitespace=False), required=False, max_length=100)


class CityOut(serializers.Serializer):
    code = serializers.CharField()
    names = serializers.DictField(child=serializers.CharField())
    aliases = serializers.ListField(child=serializers.CharField())


class LotIn(JSONInput):
    city_code = serializers.CharField(max_length=32)
    code = serializers.CharField(max_length=64)
    names = NamesField(required=False)
    # untrimmed here, so the length the schema states is the length checked (the service trims)
    aliases = serializers.ListField(child=serializers.CharField(max_length=200, trim_whitespace=False), required=False, max_length=100)


class LotOut(serializers.Serializer):
    city_code = serializers.CharField(source="city.code")
    code = serializers.CharField()
    names = serializers.DictField(child=serializers.CharField())
    aliases = serializers.ListField(child=serializers.CharField())


class CityListOut(serializers.Serializer):
    count = serializers.IntegerField()
    results = CityOut(many=True)


class LotListOut(serializers.Serializer):
    count = serializers.IntegerField()
    results = LotOut(many=True)


class LotQueryIn(serializers.Serializer):
    city_code = serializers.CharField(max_length=32, required=False)
    code = serializers.CharField(max_length=64, required=False)


class CityListApi(APIView):
    """Cities with their names and aliases: how people call them, so the help desk understands names."""

    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"GET": ("billing.view_city",), "POST": ("billing.add_city", "billing.change_city")}

    @extend_schema(responses=CityListOut, summary="List cities")
    def get(self, request: Request) -> Response:
        cities = selectors.cities_list()
        return Response(CityListOut({"count": len(cities), "results": cities}).data)

    @extend_schema(request=CityIn, responses={200: CityOut, 201: CityOut},
                   summary="Create a city, or update its names and aliases (201 when created)")
    def post(self, request: Request) -> Response:
        data = validated_input(CityIn, request.data)
        created = not City.objects.filter(code=data["code"]).exists()
        city = services.city_save(data=data, user=request.user)
        return Response(CityOut(city).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class LotListApi(APIView):
    """Lots (a code is unique within its city) with their names and aliases."""

    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"GET": ("billing.view_lot",), "POST": ("billing.add_lot", "billing.change_lot")}

    @extend_schema(parameters=[LotQueryIn], responses=LotListOut, summary="List lots (by city or code)")
    def get(self, request: Request) -> Response:
        query = validated_query(LotQueryIn, request.query_params)
        lots = selectors.lots_list(city_code=query.get("city_code"), code=query.get("code"))
        return Response(LotListOut({"count": len(lots), "results": lots}).data)

    @extend_schema(request=LotIn, responses={200: LotOut, 201: LotOut},
                   summary="Create a lot in a city, or update its names and aliases (201 when created)")
    def post(self, request: Request) -> Response:
        data = validated_input(LotIn, request.data)
        created = not Lot.objects.filter(city__code=data["city_code"], code=data["code"]).exists()
        lot = services.lot_save(data=data, user=request.user)
        return Response(LotOut(lot).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
