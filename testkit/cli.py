"""Run `python -m bot ...` as a person would, in a child process, for tests of the commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bot(
    *args: str, stdin: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m bot ARGS` from the repository root with this environment (its `ANNIE_HOME`
    included), standard input `stdin`, and its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )
