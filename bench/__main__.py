"""`python -m bench NAME [ARGS...]`: run one benchmark; only its module is imported."""

from __future__ import annotations

import argparse
import importlib
import sys

from bench import BENCHES


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="python -m bot bench", description="run a benchmark and print its figures"
    )
    parser.add_argument("bench", choices=BENCHES, metavar="NAME", help=", ".join(BENCHES))
    # The chosen benchmark parses the rest itself, so only its module is imported.
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    module = importlib.import_module(f"bench.{args.bench}")
    sub = argparse.ArgumentParser(prog=f"python -m bot bench {args.bench}", description=module.HELP)
    module.add_arguments(sub)
    return int(module.run(sub.parse_args(args.rest)))


if __name__ == "__main__":
    sys.exit(main())
