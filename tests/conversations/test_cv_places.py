"""Lots and cities as records: names and aliases understood in words, one code in two cities asked about."""

from __future__ import annotations

import pytest

from billing import places, selectors, services
from billing.models import City, Lot

pytestmark = pytest.mark.django_db

NIGHT_RULE = [{"name": "all_day", "type": "periodic", "time_window": {"start": "00:00", "end": "00:00"},
               "unit_minutes": 60, "unit_price": 4, "free_minutes": 0, "max_charge": 40}]


@pytest.fixture
def second_operator(demo):  # noqa: ANN001, ANN201
    """Another operator's data: one lot code in two cities, each with its own rule and names."""
    from billing.services import billing_rule_version_add

    for city, name_en, name_zh, price in (("320500", "Suzhou", "苏州", 4), ("320200", "Wuxi", "无锡", 7)):
        services.city_save(data={"code": city, "names": {"en": name_en, "zh": name_zh}, "aliases": [f"{name_zh}市"]})
        services.lot_save(data={"city_code": city, "code": "LOT_NORTH_3", "names": {"en": f"{name_en} north lot 3", "zh": f"{name_zh}北区三号停车场"}})
        payload = [{**NIGHT_RULE[0], "unit_price": price}]
        billing_rule_version_add(data={"rule_code": f"R-{city}-N3", "name": f"{name_en} north 3", "scope": {"city_code": city, "lot_codes": ["LOT_NORTH_3"]},
                                       "version": {"effective_from": "2026-01-01T00:00:00+08:00", "effective_to": None, "rule_payload": payload}})


def test_names_aliases_and_bare_codes_are_found_in_words(demo) -> None:  # noqa: ANN001
    def found(text: str) -> list[dict]:
        return [hit.slots for hit in places.find_places(text)]

    assert found("浦东一号停车场今天怎么收费") == [{"lot_code": "SH-PD-001", "city_code": "310100"}]
    assert found("how much is the Pudong lot 1 car park?") == [{"lot_code": "SH-PD-001", "city_code": "310100"}]
    assert found("what does pudong-lot-1 charge") == [{"lot_code": "SH-PD-001", "city_code": "310100"}]
    assert found("静安一号呢") == [{"lot_code": "SH-JA-001", "city_code": "310100"}]
    assert found("rates in Shanghai?") == [{"city_code": "310100"}]
    assert found("order SH-PD-0012 please") == []  # not a piece of a longer code


def test_a_renamed_added_or_removed_lot_is_found_as_it_is_now(demo) -> None:  # noqa: ANN001
    """The finder keeps an index per process: every change to the records shows on the next message."""
    assert places.find_places("what does the Harbour garage charge") == []
    services.lot_save(data={"city_code": "310100", "code": "SH-HB-009", "names": {"en": "Harbour garage"}, "aliases": ["HBG"]})
    assert [h.slots for h in places.find_places("what does the Harbour garage charge")] == [{"lot_code": "SH-HB-009", "city_code": "310100"}]
    services.lot_save(data={"city_code": "310100", "code": "SH-HB-009", "names": {"en": "Quay garage"}})
    assert places.find_places("what does the Harbour garage charge") == []
    assert [h.raw for h in places.find_places("and the quay garage? or hbg")] == ["quay garage", "hbg"]
    Lot.objects.filter(code="SH-HB-009").delete()
    assert places.find_places("and the quay garage?") == []


def test_a_lot_code_in_two_cities_is_found_twice(second_operator) -> None:  # noqa: ANN001
    hits = places.find_places("what does LOT_NORTH_3 charge")
    assert sorted(h.slots["city_code"] for h in hits) == ["320200", "320500"]
    assert selectors.lot_cities("lot_north_3") == ["320200", "320500"]


def test_the_desk_asks_which_city_and_then_prices_the_right_lot(second_operator, chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", "en")
    reply = c.say("how much for LOT_NORTH_3 tomorrow from 9am to 11am?")["reply"]
    assert reply["decision"] == "ask"
    assert "Suzhou" in reply["text"] and "Wuxi" in reply["text"], reply["text"]
    reply = c.say("Wuxi")["reply"]
    assert reply["decision"] == "continue" and "14.00" in reply["text"], reply["text"]
    assert c.get()["slots"]["city_code"]["value"] == "320200"


def test_a_city_given_with_the_lot_settles_it_and_names_work_in_chinese(second_operator, chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", "zh-hans")
    reply = c.say("苏州北区三号停车场明天上午九点到十一点多少钱")["reply"]
    assert reply["decision"] == "continue" and "8.00" in reply["text"], reply["text"]
    c2 = chat("parking_help_desk", "zh-hans")
    reply = c2.say("苏州的LOT_NORTH_3明天上午九点到十一点多少钱")["reply"]
    assert reply["decision"] == "continue" and "8.00" in reply["text"], reply["text"]


def test_the_second_one_picks_among_the_cities_asked_about(second_operator, chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", "en")
    assert c.say("LOT_NORTH_3 price tomorrow 9am to 11am")["reply"]["decision"] == "ask"
    reply = c.say("the second one")["reply"]
    assert reply["decision"] == "continue", reply["text"]
    assert c.get()["slots"]["city_code"]["value"] == "320500"  # listed by code: 320200 Wuxi, then 320500 Suzhou


def test_operators_manage_lots_and_cities_over_rest(operator_api, api, demo) -> None:  # noqa: ANN001
    created = operator_api.post("/api/v1/cities", {"code": "320500", "names": {"en": "Suzhou", "zh": "苏州"}, "aliases": ["姑苏"]}, format="json")
    assert created.status_code == 201, created.content
    again = operator_api.post("/api/v1/cities", {"code": "320500", "aliases": ["姑苏", "苏州市"]}, format="json")
    assert again.status_code == 200 and again.json()["names"] == {"en": "Suzhou", "zh": "苏州"} and again.json()["aliases"] == ["姑苏", "苏州市"]
    lot = operator_api.post("/api/v1/lots", {"city_code": "320500", "code": "SZ-01", "names": {"zh": "姑苏一号"}}, format="json")
    assert lot.status_code == 201 and lot.json()["city_code"] == "320500"
    missing = operator_api.post("/api/v1/lots", {"city_code": "999999", "code": "X"}, format="json")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "city_not_found"
    bad = operator_api.post("/api/v1/cities", {"code": "1", "names": ["Suzhou"]}, format="json")
    assert bad.status_code == 400
    listed = operator_api.get("/api/v1/lots?city_code=320500").json()
    assert listed["count"] == 1 and [row["code"] for row in listed["results"]] == ["SZ-01"]
    wrong_type = operator_api.post("/api/v1/cities", {"code": "320500", "aliases": [7]}, format="json")
    assert wrong_type.status_code == 400 and "aliases" in wrong_type.json()["error"]["details"]
    assert api.post("/api/v1/cities", {"code": "1"}, format="json").status_code == 403  # a person
    assert api.get("/api/v1/lots").status_code == 403


def test_every_code_a_rule_or_order_names_has_its_record(demo) -> None:  # noqa: ANN001
    from billing.models import BillingRule, ParkingOrder

    for rule in BillingRule.objects.all():
        assert City.objects.filter(code=rule.city_code).exists()
        for code in rule.lot_codes:
            assert Lot.objects.filter(city__code=rule.city_code, code=code).exists()
    for city_code, lot_code in ParkingOrder.objects.values_list("city_code", "lot_code"):
        assert Lot.objects.filter(city__code=city_code, code=lot_code).exists()


def test_a_slip_in_a_lots_name_names_it_and_a_slip_near_two_names_both(demo) -> None:  # noqa: ANN001
    services.city_save(data={"code": "330100", "names": {"en": "Hangzhou", "zh": "杭州"}})
    for code, name in (("RS-1", "Riverside"), ("RD-2", "Riverdale"), ("RV-3", "Rivet lot")):
        services.lot_save(data={"city_code": "330100", "code": code, "names": {"en": f"{name} car park"}})

    def found(text: str) -> list[tuple[str, str]]:
        return sorted((h.slots["lot_code"], h.raw) for h in places.find_places(text) if "lot_code" in h.slots)

    assert found("how much is riversyde for 2 hours") == [("RS-1", "riversyde")]
    assert found("and the Riverdale car park?") == [("RD-2", "Riverdale car park")]  # exact: no slip read inside it
    assert found("how much is riversile") == [("RD-2", "riversile"), ("RS-1", "riversile")]  # asked about
    assert found("rivets and rivvet?") == []  # short words are matched exactly or not at all
    assert found("order RS-1X please") == []
