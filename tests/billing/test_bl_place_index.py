"""The names of cities and lots a process keeps: its own saves are seen at once, and between
rechecks a message costs no query."""

from __future__ import annotations

import pytest

from billing.places import find_places
from billing.services import city_save, lot_save

pytestmark = pytest.mark.django_db


def test_a_lot_saved_here_is_named_at_once_and_a_kept_index_costs_no_query(settings, django_assert_num_queries) -> None:  # noqa: ANN001
    settings.PLACES_RECHECK_SECONDS = 3600  # as in production: another process's writes are rechecked later
    city_save(data={"code": "990100", "names": {"en": "Harbourtown"}, "aliases": []})
    assert [hit.slots for hit in find_places("parking in Harbourtown", "en")] == [{"city_code": "990100"}]
    with django_assert_num_queries(0):
        find_places("parking in Harbourtown", "en")
    lot_save(data={"city_code": "990100", "code": "HT-QUAY-7", "names": {"en": "Quayside Deck"}, "aliases": ["the quay deck"]})
    hits = find_places("how much is the quay deck?", "en")
    assert [hit.slots.get("lot_code") for hit in hits] == ["HT-QUAY-7"]


def test_a_word_every_lot_shares_names_them_all_alone_and_none_beside_a_whole_name() -> None:
    """Many lots sharing a word ("Brookfield" of each "Brookfield garage N") are checked as one name."""
    city_save(data={"code": "990200", "names": {"en": "Brookfield"}, "aliases": []})
    for n in range(1, 31):
        lot_save(data={"city_code": "990200", "code": f"BF-G{n}", "names": {"en": f"Brookfield garage {n}"},
                       "aliases": [f"bfg{n}x"]})
    hits = find_places("what does Brookfield garage 12 charge on sundays?", "en")
    assert [hit.slots for hit in hits] == [{"lot_code": "BF-G12", "city_code": "990200"}]
    assert [hit.raw for hit in hits] == ["Brookfield garage 12"]
    hits = find_places("the one at brookfield, is it cheaper?", "en")
    assert [hit.slots for hit in hits] == [{"city_code": "990200"}]  # the city's whole name before the lots' shared word
    hits = find_places("and bfg7x vs bfg30x?", "en")
    assert [hit.slots.get("lot_code") for hit in hits] == ["BF-G30", "BF-G7"]  # longest first


def test_a_starting_process_reads_place_names_and_rule_versions_before_the_first_message(settings, django_assert_num_queries) -> None:  # noqa: ANN001, E501
    from django.utils import timezone

    from billing.places import forget_place_names
    from billing.selectors import forget_rule_versions, rule_version_for
    from config.runtime import process_started

    settings.PLACES_RECHECK_SECONDS = settings.BILLING_RULES_RECHECK_SECONDS = 3600
    city_save(data={"code": "990300", "names": {"en": "Saltmarsh", "zh": "盐沼"}, "aliases": []})
    forget_place_names()
    forget_rule_versions()
    process_started.send(sender=None)  # what config/wsgi.py and a Celery worker process send
    with django_assert_num_queries(0):
        for text, lang in (("parking in Saltmarsh", "en"), ("盐沼停车", "zh"), ("парковка Saltmarsh", "ru"), ("aparcar en Saltmarsh", "es")):
            assert [hit.slots for hit in find_places(text, lang)] == [{"city_code": "990300"}]
        assert rule_version_for(at=timezone.now(), city_code="310100", lot_code="SH-PD-001").rule.city_code == "310100"


def test_a_failed_warm_up_leaves_billing_to_the_first_message(monkeypatch, caplog) -> None:  # noqa: ANN001
    from billing import selectors
    from config.runtime import warm_up

    def down() -> None:
        raise ConnectionError("database not reachable")

    monkeypatch.setattr(selectors, "rule_versions_warm", down)
    warm_up()  # logs, does not raise: the server still starts
    assert "billing.apps._warm did not warm up at start-up (database not reachable)" in caplog.text


def test_a_piece_of_a_chinese_lot_name_without_its_city_names_the_lots_that_share_it() -> None:
    """"南站的", "机场那个": two characters of a lot's name, once its city and its generic ending are off; a piece
    two lots share names both (the city said or talked about chooses), the city's own name names the city."""
    city_save(data={"code": "990300", "names": {"en": "Jinhe", "zh": "金河"}, "aliases": []})
    city_save(data={"code": "990400", "names": {"en": "Yunxi", "zh": "云溪"}, "aliases": []})
    lot_save(data={"city_code": "990300", "code": "JH-S", "names": {"en": "Jinhe South Station lot", "zh": "金河南站停车场"}, "aliases": []})
    lot_save(data={"city_code": "990300", "code": "JH-AIR", "names": {"en": "Jinhe Airport lot", "zh": "金河机场停车场"}, "aliases": []})
    lot_save(data={"city_code": "990400", "code": "YX-AIR", "names": {"en": "Yunxi Airport lot", "zh": "云溪机场停车库"}, "aliases": []})
    assert [hit.slots.get("lot_code") for hit in find_places("不是那个，是南站的", "zh")] == ["JH-S"]
    assert sorted(hit.slots.get("lot_code") for hit in find_places("机场那个多少钱", "zh")) == ["JH-AIR", "YX-AIR"]
    assert [hit.slots for hit in find_places("金河的", "zh")] == [{"city_code": "990300"}]
    assert sorted(hit.slots.get("lot_code") for hit in find_places("the station one", "en")) == ["JH-S"]
