"""Supervisors edit billing rules with their versions inline and see orders and verifications."""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.forms.models import BaseInlineFormSet

from config.errors import ApplicationError

from . import services
from .engine import validate_rule_payload
from .models import BillingRule, BillingRuleVersion, City, FeeVerification, Lot, ParkingOrder
from .parsing import aliases_checked, names_checked


class VersionForm(forms.ModelForm):
    rule_payload = forms.JSONField(
        widget=forms.Textarea(attrs={"rows": 8, "cols": 80, "style": "font-family:monospace"}),
        help_text='A list of segments, first match wins (README "Billing"). A window crossing midnight is capped per '
                  'calendar day unless the segment says "cap_period": "window" (one night, one cap).',
    )

    class Meta:
        model = BillingRuleVersion
        fields = ["effective_from", "effective_to", "priority", "rule_payload"]

    def clean_rule_payload(self):  # noqa: ANN201
        payload = self.cleaned_data["rule_payload"]
        problems = validate_rule_payload(payload)
        if problems:
            raise forms.ValidationError([f"{p.path}: {p.message}" for p in problems])
        return payload


class VersionFormSet(BaseInlineFormSet):
    """New versions go through the service (numbering, overlap check, audit); old ones never change."""

    def save_new(self, form, commit=True):  # noqa: ANN001, ANN201
        rule = self.instance
        data = {
            "rule_code": rule.rule_code, "name": rule.name, "scope": rule.scope,
            "version": {
                "effective_from": form.cleaned_data["effective_from"],
                "effective_to": form.cleaned_data.get("effective_to"),
                "priority": form.cleaned_data.get("priority") or 0,
                "rule_payload": form.cleaned_data["rule_payload"],
            },
        }
        try:
            return services.billing_rule_version_add(data=data, user=getattr(self, "request_user", None))[1]
        except ApplicationError as error:
            raise forms.ValidationError(error.message) from error


class VersionInline(admin.StackedInline):
    model = BillingRuleVersion
    form = VersionForm
    formset = VersionFormSet
    extra = 0
    can_delete = False
    ordering = ["version_no"]

    def get_readonly_fields(self, request, obj=None):  # noqa: ANN001, ANN201
        return ["version_no", "created_at"]

    def has_change_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False  # a version once stored never changes; add a new one

    def has_add_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return obj is not None and super().has_add_permission(request, obj)


class RuleForm(forms.ModelForm):
    scope = forms.JSONField(help_text='{"city_code": "310100", "lot_codes": ["SH-PD-001"]}')

    class Meta:
        model = BillingRule
        fields = ["rule_code", "name", "scope", "status"]

    def clean_scope(self):  # noqa: ANN201
        scope = self.cleaned_data["scope"]
        if not isinstance(scope, dict) or not isinstance(scope.get("city_code"), str) or not scope["city_code"]:
            raise forms.ValidationError('scope needs a "city_code".')
        lots = scope.get("lot_codes", [])
        if not isinstance(lots, list) or not all(isinstance(x, str) for x in lots):
            raise forms.ValidationError('"lot_codes" must be a list of lot codes.')
        return {"city_code": scope["city_code"], "lot_codes": lots}


@admin.register(BillingRule)
class BillingRuleAdmin(admin.ModelAdmin):
    form = RuleForm
    list_display = ["rule_code", "name", "city_code", "lots", "status", "version_count", "updated_at"]
    list_filter = ["status", "city_code"]
    search_fields = ["rule_code", "name"]
    inlines = [VersionInline]

    def get_queryset(self, request):  # noqa: ANN001, ANN201
        from django.db.models import Count

        return super().get_queryset(request).annotate(n_versions=Count("versions"))

    @admin.display(description="lots")
    def lots(self, obj: BillingRule) -> str:
        return ", ".join(obj.lot_codes) or "all lots"

    @admin.display(description="versions", ordering="n_versions")
    def version_count(self, obj: BillingRule) -> int:
        return obj.n_versions

    def save_model(self, request, obj, form, change):  # noqa: ANN001, ANN201
        obj.city_code = obj.scope["city_code"]
        super().save_model(request, obj, form, change)

    def save_formset(self, request, form, formset, change):  # noqa: ANN001, ANN201
        formset.request_user = request.user
        try:
            super().save_formset(request, form, formset, change)
        except forms.ValidationError as error:
            self.message_user(request, f"Version not added: {'; '.join(error.messages)}", messages.ERROR)


@admin.register(ParkingOrder)
class ParkingOrderAdmin(admin.ModelAdmin):
    list_display = ["order_no", "plate_no", "city_code", "lot_code", "entry_time", "exit_time", "total_amount", "paid_amount", "arrears_amount", "status"]
    list_filter = ["status", "city_code", "lot_code"]
    search_fields = ["order_no", "plate_no"]
    readonly_fields = [f.name for f in ParkingOrder._meta.fields]

    def has_add_permission(self, request):  # noqa: ANN001, ANN201
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False  # amounts change only through reviewed decisions

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False


@admin.register(FeeVerification)
class FeeVerificationAdmin(admin.ModelAdmin):
    list_display = ["order", "result", "action", "order_total_amount", "simulated_total_amount", "rule_code", "version_no", "review", "created_at"]
    list_filter = ["result", "action"]
    list_select_related = ["order", "review"]
    readonly_fields = ["order", "rule_code", "version_no", "order_total_amount", "simulated_total_amount", "result", "action", "review", "created_at", "breakdown_pretty"]
    exclude = ["breakdown"]

    def has_add_permission(self, request):  # noqa: ANN001, ANN201
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001, ANN201
        return False

    @admin.display(description="breakdown")
    def breakdown_pretty(self, obj: FeeVerification) -> str:
        from django.utils.html import format_html

        return format_html("<pre>{}</pre>", json.dumps(obj.breakdown, indent=2, ensure_ascii=False))


class _PlaceForm(forms.ModelForm):
    """Names per language and aliases, checked as the REST API checks them."""

    names = forms.JSONField(required=False, help_text='{"en": "Pudong lot 1", "zh": "浦东一号停车场"}',
                            widget=forms.Textarea(attrs={"rows": 3, "cols": 60}))
    aliases = forms.JSONField(required=False, help_text='["浦东一号", "Pudong 1"]', widget=forms.Textarea(attrs={"rows": 2, "cols": 60}))

    def clean_names(self):  # noqa: ANN201
        return self._checked(names_checked, "names")

    def clean_aliases(self):  # noqa: ANN201
        return self._checked(aliases_checked, "aliases")

    def _checked(self, check, field: str):  # noqa: ANN001, ANN202
        try:
            return check(self.cleaned_data.get(field), field)
        except ApplicationError as error:
            raise forms.ValidationError(error.message) from None


class CityForm(_PlaceForm):
    class Meta:
        model = City
        fields = ["code", "names", "aliases"]


class LotForm(_PlaceForm):
    class Meta:
        model = Lot
        fields = ["city", "code", "names", "aliases"]


@admin.register(City)
class CityAdmin(admin.ModelAdmin):
    form = CityForm
    list_display = ["code", "names", "aliases", "updated_at"]
    search_fields = ["code", "names", "aliases"]

    def get_readonly_fields(self, request, obj=None):  # noqa: ANN001, ANN201
        return ["code"] if obj is not None else []  # rules and orders refer to the code

    def save_model(self, request, obj, form, change) -> None:  # noqa: ANN001
        services.city_save(data={"code": obj.code, "names": obj.names, "aliases": obj.aliases}, user=request.user)


@admin.register(Lot)
class LotAdmin(admin.ModelAdmin):
    form = LotForm
    list_display = ["code", "city", "names", "aliases", "updated_at"]
    list_filter = ["city"]
    search_fields = ["code", "names", "aliases", "city__code"]
    list_select_related = ["city"]

    def get_readonly_fields(self, request, obj=None):  # noqa: ANN001, ANN201
        return ["city", "code"] if obj is not None else []  # rules and orders refer to the code in its city

    def save_model(self, request, obj, form, change) -> None:  # noqa: ANN001
        services.lot_save(data={"city_code": obj.city.code, "code": obj.code, "names": obj.names, "aliases": obj.aliases},
                        user=request.user)
