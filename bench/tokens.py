"""`python -m bot bench tokens`: what the model's calls cost, read back from the event log.

Over the first call of each turn (the one the user waits for) it prints input tokens p50/p95
in all, by component and by lane, the tokens each turn's calls evaluated, the omissions and
the overflows (`bench.token_log` reads and aggregates the logged manifests).

Sources: `--session ID` or `--all` read the store in `$ANNIE_HOME` (default: the latest
session with content); `--trace FILE` or `--errands N` first replay a trace (the generated
errands trace for N turns, window 32,768 unless `--window`) through the real turn into a
scratch store (`bench.gate`), then read that. `--write-baseline PATH` measures the evaluation
gate's traces and writes the baseline the gate test holds releases to; `--gate PATH` checks
against it (exit 1 on a regression). Both print the before and after figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import gate
from bench.token_log import format_report, read_calls, report, sessions_of
from config import load_settings
from memory.store import Store

HELP = "first-call input tokens p50/p95 by component and lane, evaluated tokens, omissions"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--session", help="one session of the store in $ANNIE_HOME")
    source.add_argument("--all", action="store_true", help="every session of that store")
    source.add_argument("--trace", type=Path, help="replay this JSONL trace, then read its log")
    source.add_argument("--errands", type=int, metavar="TURNS", help="replay the errands trace")
    source.add_argument("--write-baseline", type=Path, metavar="PATH", help="measure the gate")
    source.add_argument("--gate", type=Path, metavar="PATH", help="check against a baseline")
    parser.add_argument("--window", type=int, default=0, help="replay window (default: trace's)")
    parser.add_argument("--seed", type=int, default=11, help="errands trace seed")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.write_baseline or args.gate:
        return gate.run_baseline(args.write_baseline, args.gate, as_json=args.json)
    if args.trace or args.errands:
        try:
            rep, title = gate.replay_report(args.trace, args.errands, args.window, args.seed)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        settings = load_settings()
        if not settings.db_path.exists():
            print(f"error: no event log at {settings.db_path} (ANNIE_HOME)", file=sys.stderr)
            return 2
        with Store.open(settings) as store:
            try:
                ids = sessions_of(store, args.session, args.all)
            except ValueError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            rep, title = report(read_calls(store, ids)), f"event log {settings.db_path}"
    if args.json:
        print(json.dumps(rep, indent=2))
    else:
        print(format_report(rep, title))
    return 0
