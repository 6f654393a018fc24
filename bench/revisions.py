"""Another revision of the project, checked out beside this one for a benchmark to compare against."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def revision_tree(rev: str) -> Iterator[Path]:
    """A git worktree of `rev` in a temporary folder, removed afterwards (it runs on this virtual environment)."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-vs-"))
    tree = scratch / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), rev], cwd=ROOT, check=True)
    try:
        yield tree
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
