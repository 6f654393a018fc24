"""How long the recognizers take to read one message: times, quantities, names and identifiers together.

Every person's message of the dialogue corpus (tests/dialogues) and every expression of the recognizer test
sets (tests/recognizers) is read by all four recognizers, each message once per round with the memos of the
readers emptied before the round, so a figure is a first read of that message (compiled patterns warm).
Pure engine code: no database, no Django.

    python bench/recognizers.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine import probe_line  # noqa: E402
from conversations.engine import slots, timeparse  # noqa: E402
from conversations.engine.recognizers import clock_words, identifiers, names, numbers, times  # noqa: E402

ROUNDS = 5
NOW = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)


def _messages() -> list[tuple[str, str]]:
    found = []
    for path in sorted((ROOT / "tests" / "dialogues").glob("*.json")):
        for dialogue in json.loads(path.read_text(encoding="utf-8")):
            language = str(dialogue.get("locale", "en"))[:2]
            found += [(turn["user"], language) for turn in dialogue.get("turns", []) if turn.get("user")]
    for kind in ("times", "numbers", "names", "identifiers"):
        data = json.loads((ROOT / "tests" / "recognizers" / f"{kind}.json").read_text(encoding="utf-8"))
        found += [(case["text"], case["language"]) for case in data["cases"]]
    return list(dict.fromkeys(found))


def _empty_memos() -> None:
    for memo in (numbers._read, timeparse.parse_datetime, timeparse.parse_date, timeparse._time_of_day, slots._range,  # noqa: SLF001
                 clock_words.plain_time_words):
        memo.cache_clear()


def main() -> None:
    records = identifiers.Records.of(json.loads((ROOT / "tests" / "recognizers" / "identifiers.json").read_text(encoding="utf-8"))["known"])
    messages = _messages()
    for text, language in messages[:50]:  # compile every pattern once
        times.read_time(text, now=NOW, language=language)
    per_message: list[float] = []
    for _ in range(ROUNDS):
        _empty_memos()
        for text, language in messages:
            started = time.perf_counter()
            times.read_time(text, now=NOW, language=language)
            numbers.read_quantities(text, language)
            names.read_names(text, language)
            identifiers.read_identifiers(text, records, language)
            per_message.append((time.perf_counter() - started) * 1000)
    per_message.sort()
    p50 = statistics.median(per_message)
    p95 = per_message[int(len(per_message) * 0.95)]
    print(probe_line())
    print(f"recognizers (times, quantities, names, identifiers) on {len(messages)} messages x {ROUNDS} rounds: "
          f"p50 {p50:.3f} ms, p95 {p95:.3f} ms, max {per_message[-1]:.2f} ms per message")


if __name__ == "__main__":
    main()
