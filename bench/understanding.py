"""How long the rules take to read one message (the rules generator), over the dialogue corpus.

Every person's message of tests/dialogues is read in order, each dialogue on its own plan with
its state carried from turn to turn, through the context engine (`advance_context`: the rules'
reading and what follows from it, no reply, no database write). Domain lookups (orders, plates,
lots, cities) go to the seeded test database the first time and are remembered after, so the
figure is the engine's own; the first pass (with the database) is printed too.

    DJANGO_SETTINGS_MODULE=config.settings.test python bench/understanding.py
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from bench.machine import probe_line  # noqa: E402

ROUNDS = 5  # the corpus is read this many times; the first round fills the lookup memo
PLANS = Path(__file__).resolve().parent.parent / "workflows" / "plans"


def _memo(fn):  # noqa: ANN001, ANN202
    """A lookup that asks the database once per distinct question."""
    cache: dict = {}

    @functools.wraps(fn)
    def remembered(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        key = json.dumps([args, kwargs], default=str, sort_keys=True)
        if key not in cache:
            cache[key] = fn(*args, **kwargs)
        return cache[key]

    return remembered


def main() -> None:
    import io

    from django.conf import settings
    from django.core.management import call_command
    from django.test.runner import DiscoverRunner
    from django.test.utils import setup_test_environment

    from conversations import services
    from conversations.dialogues import load_dialogues
    from conversations.engine import ConversationConfig
    from conversations.engine.turn import advance_context, initial_state, record_reply
    from workflows.engine.plan_files import read_plan

    setup_test_environment()
    runner = DiscoverRunner(verbosity=0)
    old = runner.setup_databases()
    try:
        call_command("seed_demo", stdout=io.StringIO())
        paths = [*PLANS.glob("*.json"), *(p for p in PLANS.iterdir() if p.is_dir() and (p / "plan.json").exists())]
        configs = {p.stem: ConversationConfig.from_dict(read_plan(p)["conversation"]) for p in paths}  # a folder too
        lookups = {slot: _memo(fn) for slot, fn in services.LOOKUPS.items()}
        finders = [_memo(fn) for fn in services.FINDERS]
        dialogues = [d for d in load_dialogues() if "rules" in d.get("generators", ("rules",))]
        now = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
        rounds: list[list[float]] = []
        for _ in range(ROUNDS):
            times: list[float] = []
            for dialogue in dialogues:
                config = configs[dialogue["workflow"]]
                state = initial_state(config, locale=dialogue.get("locale"))
                for turn in dialogue["turns"]:
                    if "user" not in turn:
                        continue
                    start = time.perf_counter()
                    outcome = advance_context(state, turn["user"], now=now, timezone=settings.CONCIERGE_TIMEZONE,
                                              config=config, lookups=lookups, finders=finders)
                    times.append((time.perf_counter() - start) * 1000)
                    state = record_reply(outcome.state, text=outcome.question or "OK.", action=outcome.proposed_action)
            rounds.append(times)
        first, warm = rounds[0], [t for r in rounds[1:] for t in r]
        q = statistics.quantiles(warm, n=100)
        print(probe_line())
        print(f"{len(dialogues)} dialogues, {len(first)} messages, read {ROUNDS} times")
        print(f"rules reading per message: p50 {statistics.median(warm):.3f} ms, p95 {q[94]:.3f} ms, "
              f"p99 {q[98]:.3f} ms, max {max(warm):.3f} ms (target: p95 < 1 ms)")
        q1 = statistics.quantiles(first, n=100)
        print(f"first round, lookups asking the database: p50 {statistics.median(first):.3f} ms, p95 {q1[94]:.3f} ms")
        _places_at_scale()
    finally:
        runner.teardown_databases(old)


def _places_at_scale(cities: int = 500, lots_per_city: int = 20) -> None:
    """Finding lots and cities named in a message when an operator has 10,000 lots."""
    from billing.models import City, Lot
    from billing.places import find_places

    made = City.objects.bulk_create(City(code=f"9{c:05d}", names={"en": f"Town {c}", "zh": f"城{c}"}) for c in range(cities))
    Lot.objects.bulk_create(Lot(city=city, code=f"LOT_{c}_{n}", names={"en": f"Town {c} garage {n}", "zh": f"城{c}第{n}停车场"},
                                aliases=[f"t{c}g{n}"]) for c, city in enumerate(made) for n in range(lots_per_city))
    messages = ["how much is Town 312 garage 7 tomorrow from 9 to 11?", "城88第3停车场今天怎么收费", "verify order 7734412",
                "does plate 沪B88888 owe anything", "what does LOT_401_12 charge on sundays"]
    find_places(messages[0])  # the first message of a process builds the index
    times = []
    for _ in range(40):
        for text in messages:
            start = time.perf_counter()
            find_places(text)
            times.append((time.perf_counter() - start) * 1000)
    print(f"place finder with {cities * lots_per_city:,} lots ({cities} cities): p50 {statistics.median(times):.3f} ms, "
          f"p95 {statistics.quantiles(times, n=20)[18]:.3f} ms per message (index built once; two aggregate queries each)")


if __name__ == "__main__":
    main()
