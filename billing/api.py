"""Billing REST endpoints: rules with versions, simulation, orders, arrears, verification, lots and cities.

Prices are public: anyone signed in reads rules and simulates a fee. Orders, plates and
arrears are the operator's (a person reaches them only through their own conversations), and
only supervisors change rules, since a rule prices every stay and order in its scope.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import NotFound, validated_input, validated_query
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


def money(value) -> str:  # noqa: ANN001
    return f"{value:.2f}"



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
    effective_from = serializers.DateTimeField()
    effective_to = serializers.DateTimeField(allow_null=True, help_text="null: open-ended.")
    priority = serializers.IntegerField()
    rule_payload = serializers.JSONField(help_text="The segments (see the billing rule payload).")


class RuleOut(serializers.Serializer):
    rule_code = serializers.CharField()
    name = serializers.CharField()
    scope = ScopeOut()
    status = serializers.ChoiceField(choices=BillingRule.Status.choices)
    versions = VersionOut(many=True)


class RuleCreatedOut(RuleOut):
    created_version_no = serializers.IntegerField()


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
    billing_rule_code = serializers.CharField(allow_null=True)
    billing_rule_version_no = serializers.IntegerField(allow_null=True)
    entry_time = serializers.DateTimeField()
    exit_time = serializers.DateTimeField(allow_null=True, help_text="null: the car is still parked.")
    total_amount = MoneyOutField()
    paid_amount = MoneyOutField()
    arrears_amount = MoneyOutField()
    status = serializers.ChoiceField(choices=ParkingOrder.Status.choices)


def version_out(version) -> dict:  # noqa: ANN001
    return {
        "version_no": version.version_no,
        "effective_from": local_iso(version.effective_from),
        "effective_to": local_iso(version.effective_to),
        "priority": version.priority,
        "rule_payload": version.rule_payload,
    }


def rule_out(rule: BillingRule) -> dict:
    return {
        "rule_code": rule.rule_code, "name": rule.name, "scope": rule.scope, "status": rule.status,
        "versions": [version_out(v) for v in sorted(rule.versions.all(), key=lambda v: v.version_no)],
    }


def order_out(order: ParkingOrder) -> dict:
    return {
        "order_no": order.order_no, "plate_no": order.plate_no, "city_code": order.city_code, "lot_code": order.lot_code,
        "billing_rule_code": order.billing_rule_code or None, "billing_rule_version_no": order.billing_rule_version_no,
        "entry_time": local_iso(order.entry_time), "exit_time": local_iso(order.exit_time),
        "total_amount": money(order.total_amount), "paid_amount": money(order.paid_amount),
        "arrears_amount": money(order.arrears_amount), "status": order.status,
    }


class BillingRuleListApi(APIView):
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    # Creates the rule or appends a version and updates its name and scope.
    required_perms = {"POST": ("billing.add_billingrule", "billing.change_billingrule", "billing.add_billingruleversion")}

    @extend_schema(parameters=[RuleQueryIn], responses=RuleListOut, summary="List billing rules with their versions")
    def get(self, request: Request) -> Response:
        rules = BillingRule.objects.prefetch_related("versions").order_by("rule_code")
        query = validated_query(RuleQueryIn, request.query_params)
        city, lot = query.get("city_code"), query.get("lot_code")
        if city:
            rules = rules.filter(city_code=city)
        out = [rule_out(r) for r in rules if not lot or not r.lot_codes or lot in r.lot_codes]
        return Response({"count": len(out), "results": out})

    @extend_schema(
        request=RuleIn,
        responses={201: RuleCreatedOut, **conflict("The version overlaps another of the rule (`version_overlap`).")},
        summary="Create a rule or append a version (409 on overlap)",
    )
    def post(self, request: Request) -> Response:
        data = validated_input(RuleIn, request.data)
        rule, version = services.billing_rule_version_add(data=data, user=request.user)
        body = rule_out(BillingRule.objects.prefetch_related("versions").get(pk=rule.pk))
        body["created_version_no"] = version.version_no
        return Response(body, status=status.HTTP_201_CREATED)


class BillingRuleDetailApi(APIView):
    @extend_schema(responses=RuleOut, summary="Read a billing rule with its versions")
    def get(self, request: Request, rule_code: str) -> Response:
        rule = BillingRule.objects.prefetch_related("versions").filter(rule_code=rule_code).first()
        if rule is None:
            raise NotFound(f"Billing rule '{rule_code}' not found.", code="rule_not_found")
        return Response(rule_out(rule))


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
    duration_minutes = serializers.IntegerField()
    total_amount = MoneyOutField(max_digits=None)
    breakdown = SegmentChargeOut(many=True)
    rule_code = serializers.CharField(required=False, help_text="With a stored rule: the rule and version used.")
    version_no = serializers.IntegerField(required=False)


class SimulateApi(APIView):
    @extend_schema(request=SimulateIn, responses=SimulationOut, summary="Simulate a stay's fee")
    def post(self, request: Request) -> Response:
        simulation = selectors.fee_simulate(**validated_input(SimulateIn, request.data))
        body = simulation.result.to_dict()
        if simulation.rule_code:
            body.update(rule_code=simulation.rule_code, version_no=simulation.version_no)
        return Response(body)


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
    paid_amount = MoneyField(required=False, default="0.00")


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
        return Response(order_out(order), status=status.HTTP_201_CREATED)


class OrderDetailApi(APIView):
    permission_classes = [IsAuthenticated, HoldsRequiredPerms]
    required_perms = {"GET": ("billing.view_parkingorder",)}

    @extend_schema(responses=OrderOut, summary="Read a parking order")
    def get(self, request: Request, order_no: str) -> Response:
        return Response(order_out(selectors.order_get(order_no)))


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
        total = sum((o.arrears_amount for o in orders), start=0)
        return Response({"plate_no": plate.upper(), "count": len(orders), "total_arrears": money(total),
                         "results": [order_out(o) for o in orders]})


class VerifyOut(serializers.Serializer):
    order_no = serializers.CharField()
    amount_check_result = serializers.ChoiceField(choices=["match", "mismatch"])
    amount_check_action = serializers.ChoiceField(choices=["auto_pass", "needs_review"])
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
        return Response({
            "order_no": order_no,
            "amount_check_result": verification.result,
            "amount_check_action": verification.action,
            "order_total_amount": money(verification.order_total_amount),
            "simulated_total_amount": money(verification.simulated_total_amount),
            "rule_code": verification.rule_code,
            "version_no": verification.version_no,
            "review_id": verification.review_id,
        })


# --- lots and cities ---------------------------------------------------------------


class NamesField(serializers.DictField):
    def __init__(self, **kwargs) -> None:  # noqa: ANN003
        super().__init__(child=serializers.CharField(max_length=200), **kwargs)


class CityIn(JSONInput):
    code = serializers.CharField(max_length=32)
    names = NamesField(required=False)
    aliases = serializers.ListField(child=serializers.CharField(max_length=200), required=False, max_length=100)


class CityOut(serializers.Serializer):
    code = serializers.CharField()
    names = serializers.DictField(child=serializers.CharField())
    aliases = serializers.ListField(child=serializers.CharField())


class LotIn(JSONInput):
    city_code = serializers.CharField(max_length=32)
    code = serializers.CharField(max_length=64)
    names = NamesField(required=False)
    aliases = serializers.ListField(child=serializers.CharField(max_length=200), required=False, max_length=100)


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
        cities = list(City.objects.all())
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
        lots = Lot.objects.select_related("city")
        if query.get("city_code"):
            lots = lots.filter(city__code=query["city_code"])
        if query.get("code"):
            lots = lots.filter(code__iexact=query["code"])
        lots = list(lots)
        return Response(LotListOut({"count": len(lots), "results": lots}).data)

    @extend_schema(request=LotIn, responses={200: LotOut, 201: LotOut},
                   summary="Create a lot in a city, or update its names and aliases (201 when created)")
    def post(self, request: Request) -> Response:
        data = validated_input(LotIn, request.data)
        created = not Lot.objects.filter(city__code=data["city_code"], code=data["code"]).exists()
        lot = services.lot_save(data=data, user=request.user)
        return Response(LotOut(lot).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
