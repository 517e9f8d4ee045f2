"""`python -m bot bench fuzz`: generated hostile input, surface by surface (`testkit.fuzz`).

Each surface (HTTP routes, pairing, configuration, the command line, calendars, transcripts,
and those in `testkit.fuzz.MODULES` written beside them) generates `--cases` inputs from
`--seed`, runs its kept failing cases first, sends each through the real server, store or
reader in a home of its own, and checks the property they share: a clear error or a correct
result within the documented timeouts, a server that still answers /healthz, a store that
passes its integrity check, no completed turn lost. It prints, per surface, the cases, the
failures, the distinct kinds of failure and the seconds, then each kind with one input that
shows it; `--json` prints one line instead. The exit code is 1 when any case failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from testkit import fuzz

HELP = "generated hostile input on every surface (10,000 cases each): failures and their kinds"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = ", ".join(fuzz.surfaces())
    parser.add_argument("--cases", type=int, default=10_000, help="cases per surface (10,000)")
    parser.add_argument(
        "--surface", action="append", metavar="NAME", help=f"only this one (repeatable): {names}"
    )
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed (0)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")


def run(args: argparse.Namespace) -> int:
    known = fuzz.surfaces()
    chosen = args.surface or list(known)
    unknown = [name for name in chosen if name not in known]
    if unknown:
        print(f"error: no surface {', '.join(unknown)}; there are {', '.join(known)}")
        return 2
    reports: dict[str, fuzz.SurfaceReport] = {}
    with tempfile.TemporaryDirectory(prefix="annie-fuzz-") as tmp:
        for name in chosen:
            reports[name] = fuzz.run(name, args.cases, args.seed, Path(tmp) / name)
            if not args.json:
                _print(name, reports[name])
    if args.json:
        print(json.dumps({"surfaces": {n: r.to_json() for n, r in reports.items()}}))
    sys.stdout.flush()
    return 1 if any(r.failures for r in reports.values()) else 0


def _print(name: str, report: fuzz.SurfaceReport) -> None:
    print(f"{name}")
    print(f"  {'cases':>8} {'failures':>9} {'distinct':>9} {'seconds':>8}")
    row = report.to_json()
    print(f"  {row['cases']:>8} {row['failures']:>9} {row['distinct']:>9} {row['seconds']:>8}")
    for kind, example in report.distinct.items():
        print(f"  - {kind}\n      {example}")
    print(flush=True)
