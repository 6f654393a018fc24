"""Machine instructions a turn costs, counted by callgrind: a CPU figure the machine's speed does not move.

The seconds bench/turns.py and bench/load.py print swing by up to 2.5x with this shared
machine's neighbours; the instructions a turn executes do not. This runs bench/turns.py under
valgrind's callgrind with counting on for turns 6-200 only (set-up, seeding and the first
turns are left out) and prints the instructions per turn of this process: Django, the
engines, the test client's round trip and, on SQLite, the database. PostgreSQL's own work is
in its server process, not counted. A run takes about three minutes.

    python bench/instructions.py                      # SQLite
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/concierge_bench python bench/instructions.py
    python bench/instructions.py --vs 4ba2f5b         # and another revision, with the ratio

Needs valgrind (apt-get install valgrind).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.revisions import ROOT, revision_tree  # noqa: E402

TURNS_COUNTED = 195  # turns 6-200 of bench/turns.py


def instructions_per_turn(tree: Path) -> float:
    """Instructions per turn for the project in `tree`, driven by this tree's bench/turns.py."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        env = {**os.environ, "BENCH_TREE": str(tree), "BENCH_CALLGRIND": "1"}
        env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
             sys.executable, str(ROOT / "bench" / "turns.py")],
            cwd=tree, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"bench/turns.py failed under callgrind:\n{done.stderr[-2000:]}")
        totals = re.search(r"^totals: (\d+)", out.read_text(errors="replace"), re.MULTILINE)
        if totals is None:
            sys.exit(f"no instruction count in {out}")
        return int(totals.group(1)) / TURNS_COUNTED


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vs", metavar="REV", help="also count the turns of this git revision, and compare")
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed: apt-get install valgrind")
    database = "PostgreSQL (its server's work not counted)" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "SQLite"
    here = instructions_per_turn(ROOT)
    print(f"{database}: {here / 1e6:.2f} million instructions per turn (turns 6-200 of bench/turns.py), this tree")
    if not args.vs:
        return
    with revision_tree(args.vs) as other:
        there = instructions_per_turn(other)
    print(f"{database}: {there / 1e6:.2f} million instructions per turn, {args.vs}")
    print(f"this tree / {args.vs}: {here / there:.3f}x the instructions")


if __name__ == "__main__":
    main()
