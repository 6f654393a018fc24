"""Load run on loopback: a real gunicorn server, wrk as the load generator, 60 s of turns.

Prints turns per second, latency p50/p95/p99 and the error rate. By default it runs on
PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/concierge_load, a
scratch database it recreates) without the model. Needs `wrk` (apt-get install wrk).

    python bench/load.py [--seconds 60] [--workers 4] [--connections 16] [--conversations 200]

This machine's speed swings by up to 2.5x between hours (other tenants on its cores), so a
figure alone does not say whether a change made turns cheaper. `--vs REV` serves another
revision (a git worktree of REV in a temporary folder, on this virtual environment) and this
tree in turn, `--rounds` times each, and prints both and their ratio:

    python bench/load.py --seconds 30 --vs 4ba2f5b --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine import probe_line  # noqa: E402
from bench.revisions import revision_tree  # noqa: E402

PY = sys.executable
PHRASES = [
    "Does plate 沪B88888 have unpaid parking?",
    "How is parking charged at lot SH-PD-001 on 2026-03-02 at 10:00?",
    "what about on 2026-03-03 at 15:00?",
    "verify order SCN-019",
    "thanks, that helps",
]

LUA = r"""
local ids = {%(ids)s}
local phrases = {%(phrases)s}
local counter = 0
local errors = 0
local started = 0
-- Each wrk thread starts on its own stretch of conversations, so two threads do not queue
-- on the same conversation's lock; every conversation cycles through the phrases.
setup = function(thread)
  thread:set("first", started * 97)
  started = started + 1
end
init = function(args)
  counter = first
end
request = function()
  counter = counter + 1
  local id = ids[(counter %% #ids) + 1]
  local body = '{"text": "' .. phrases[(math.floor(counter / #ids) %% #phrases) + 1] .. '"}'
  return wrk.format("POST", "/api/v1/conversations/" .. id .. "/messages",
                    {["Content-Type"] = "application/json", ["Authorization"] = "Token %(token)s"}, body)
end
response = function(status, headers, body)
  if status ~= 201 then errors = errors + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT requests=%%d duration_us=%%d p50_us=%%d p95_us=%%d p99_us=%%d non2xx=%%d connect=%%d read=%%d write=%%d timeout=%%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95), latency:percentile(99),
    summary.errors.status, summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout))
end
"""


def run(cmd: list[str], env: dict[str, str], tree: Path) -> str:
    return subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True, text=True).stdout


def cpu_seconds() -> dict[str, float]:
    """CPU time used so far by the web server's and the database's processes (Linux /proc)."""
    totals = {"gunicorn": 0.0, "postgres": 0.0}
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = "gunicorn" if "-m gunicorn" in command else "postgres" if command.startswith("postgres") else None
        if name is not None:
            totals[name] += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return totals


def prepare_database(url: str) -> None:
    if url.startswith("postgres"):
        name = url.rsplit("/", 1)[-1]
        base = url.rsplit("/", 1)[0] + "/postgres"
        import psycopg

        with psycopg.connect(base.replace("postgres://", "postgresql://"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5, help="seconds of load before the measured run")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--worker-class", default="gthread", help="gunicorn worker class: gthread or sync")
    parser.add_argument("--connections", type=int, default=6)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--port", type=int, default=8799)
    parser.add_argument("--vs", metavar="REV", help="also serve this git revision, in turn with this tree, and compare")
    parser.add_argument("--rounds", type=int, default=3, help="with --vs: runs of each tree, interleaved")
    return parser.parse_args()


def load_run(tree: Path, args: argparse.Namespace, url: str) -> dict[str, float]:
    """One load run of the project in `tree` on a fresh database; prints and returns its figures."""
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings.production",
           "SECRET_KEY": "load-test-secret-key-" + "x" * 40, "ALLOWED_HOSTS": "127.0.0.1,localhost",
           "SECURE_SSL_REDIRECT": "false", "OPENAI_API_KEY": "", "CELERY_BROKER_URL": "", "CONN_MAX_AGE": "600",
           "LOG_LEVEL": "WARNING",
           # one token drives every simulated person: the per-person limits would stop it at once
           "THROTTLE_RATE_TURNS": "off", "THROTTLE_RATE_CONVERSATIONS": "off"}
    prepare_database(url)
    run([PY, "manage.py", "migrate", "--noinput", "-v0"], env, tree)
    run([PY, "manage.py", "seed_demo"], env, tree)
    token = run([PY, "manage.py", "create_api_token", "loadtester"], env, tree).strip().splitlines()[-1]
    server = subprocess.Popen(
        [PY, "-m", "gunicorn", "config.wsgi:application", "-b", f"127.0.0.1:{args.port}", "-w", str(args.workers),
         "--threads", str(args.threads), "-k", args.worker_class, "--log-level", "warning"],
        cwd=tree, env=env, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{args.port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        ids = []
        for _ in range(args.conversations):
            request = urllib.request.Request(f"{base}/api/v1/conversations", data=json.dumps({"workflow_id": "parking_help_desk"}).encode(),
                                             headers={"Content-Type": "application/json", "Authorization": f"Token {token}"})
            ids.append(json.load(urllib.request.urlopen(request))["id"])
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
            script.write(LUA % {"ids": ", ".join(map(str, ids)), "token": token,
                                "phrases": ", ".join(json.dumps(p, ensure_ascii=False) for p in PHRASES)})
        def wrk(seconds: int) -> str:
            return subprocess.run(["wrk", "-t", str(min(2, args.connections)), "-c", str(args.connections), "-d", f"{seconds}s", "--timeout", "10s",
                                   "-s", script.name, base], capture_output=True, text=True, check=True).stdout

        # Warm-up, not counted: each worker imports the model client and builds its
        # retrieval index on its first turns, once per process lifetime.
        wrk(args.warmup)
        probe_before = probe_line()
        before = cpu_seconds()
        out = wrk(args.seconds)
        spent = {name: cpu_seconds()[name] - before[name] for name in before}
        probe_after = probe_line()
        os.unlink(script.name)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    fields = dict(re.findall(r"(\w+)=(\d+)", out.split("RESULT", 1)[1]))
    requests = int(fields["requests"])
    seconds = int(fields["duration_us"]) / 1e6
    errors = sum(int(fields[k]) for k in ("non2xx", "connect", "read", "write", "timeout"))
    db = "PostgreSQL" if url.startswith("postgres") else "SQLite"
    print(f"load run: {db}, gunicorn {args.workers} {args.worker_class} workers x {args.threads} threads, wrk {args.connections} connections, "
          f"{args.conversations} conversations, {seconds:.0f} s, no model")
    print(f"before the run, {probe_before}; after it, {probe_after.split(': ', 1)[1].split(' for')[0]}")
    print(f"turns per second: {requests / seconds:.1f} (target >= 200)")
    print(f"latency p50 {int(fields['p50_us']) / 1000:.1f} ms, p95 {int(fields['p95_us']) / 1000:.1f} ms "
          f"(target < 100 ms), p99 {int(fields['p99_us']) / 1000:.1f} ms")
    print(f"errors: {errors} of {requests} ({100 * errors / max(requests, 1):.2f} %) (target 0)")
    per_turn = {name: 1000 * value / max(requests, 1) for name, value in spent.items()}
    print(f"CPU per turn: web server {per_turn['gunicorn']:.1f} ms, database {per_turn['postgres']:.1f} ms "
          f"({os.cpu_count()} CPUs: at most {1000 * (os.cpu_count() or 1) / sum(per_turn.values()):.0f} turns/s at this cost)",
          flush=True)
    return {"turns_per_second": requests / seconds, "p95_ms": int(fields["p95_us"]) / 1000, "web_cpu_ms": per_turn["gunicorn"]}


def compare(rev: str, args: argparse.Namespace, url: str) -> None:
    """This tree and `rev`, served in turn, `args.rounds` times each; their medians and ratio."""
    figures: dict[str, list[dict[str, float]]] = {"this tree": [], rev: []}
    with revision_tree(rev) as other:
        for round_ in range(1, args.rounds + 1):
            for name, tree in (("this tree", ROOT), (rev, other)):
                print(f"\n== {name}, round {round_} of {args.rounds}")
                figures[name].append(load_run(tree, args, url))
    print()
    medians = {}
    for name, runs in figures.items():
        medians[name] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        listed = ", ".join(f"{r['turns_per_second']:.1f}" for r in runs)
        print(f"{name}: turns per second {listed} (median {medians[name]['turns_per_second']:.1f}); "
              f"median p95 {medians[name]['p95_ms']:.1f} ms, web server CPU {medians[name]['web_cpu_ms']:.1f} ms a turn")
    ratio = medians["this tree"]["turns_per_second"] / medians[rev]["turns_per_second"]
    print(f"this tree / {rev}: {ratio:.2f}x the turns per second")


def main() -> None:
    args = parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install wrk")
    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/concierge_load")
    if args.vs:
        compare(args.vs, args, url)
    else:
        load_run(ROOT, args, url)


if __name__ == "__main__":
    main()
