"""`python -m bot bench NAME`: benchmarks that print figures measured side by side in one run.

Only the chosen benchmark's module is imported, so one benchmark never pays for another's
engines.
"""

from __future__ import annotations

import argparse
import importlib

HELP = "run a benchmark: models, hearing, state, context, compaction, voice, reliability or server"
BENCHES = ["models", "hearing", "state", "context", "compaction", "voice", "reliability", "server"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bench", choices=BENCHES, metavar="NAME", help=", ".join(BENCHES))
    # The chosen benchmark parses the rest itself, so only its module is imported.
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"bot.bench.{args.bench}")
    parser = argparse.ArgumentParser(
        prog=f"python -m bot bench {args.bench}", description=module.HELP
    )
    module.add_arguments(parser)
    return int(module.run(parser.parse_args(args.rest)))
