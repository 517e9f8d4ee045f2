"""`python -m bot bench NAME`: run a benchmark (`python -m bench`, in a process of its own).

The benchmarks stand above the runtime and need the source checkout (they measure with
`testkit`), so the runtime hands over by running them, never by importing them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HELP = "run a benchmark: models, hearing, state, context, compaction, voice, reliability, server"
CHECKOUT = Path(__file__).resolve().parents[2]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="NAME and the benchmark's options")


def run(args: argparse.Namespace) -> int:
    if not (CHECKOUT / "bench" / "__main__.py").is_file():
        print(f"error: the benchmarks ship with the source checkout, not in {CHECKOUT}")
        return 2
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(CHECKOUT), env.get("PYTHONPATH")) if p)
    return subprocess.call([sys.executable, "-m", "bench", *args.rest], env=env)
