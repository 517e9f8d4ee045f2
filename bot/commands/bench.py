"""`python -m bot bench NAME`: benchmarks that print figures measured side by side in one run.

Only the chosen benchmark's module is imported, so one benchmark never pays for another's
engines.
"""

from __future__ import annotations

import argparse
import importlib
import sys

HELP = "run a benchmark: models, hearing, state, context, compaction or voice"
BENCHES = ["models", "hearing", "state", "context", "compaction", "voice"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="bench", required=True, metavar="NAME")
    chosen = next((a for a in sys.argv[1:] if a in BENCHES), None)
    for name in BENCHES:
        if name != chosen:
            sub.add_parser(name, add_help=False)
            continue
        module = importlib.import_module(f"bot.bench.{name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_bench_run=module.run)


def run(args: argparse.Namespace) -> int:
    return int(args._bench_run(args))
