"""Dispatch `python -m bot COMMAND` to `bot.commands.COMMAND`.

Each command module defines `HELP: str`, `add_arguments(parser)` and `run(args) -> int`,
and is imported only when chosen, so `ask` does not pay for loading the voice stack.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from config import ConfigError
from memory.db import StoreError
from models.base import ModelError

COMMANDS = ["serve", "chat", "ask", "tasks", "reminders", "briefing", "replay", "doctor", "bench"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="python -m bot", description="Annie, a local voice assistant"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    for name in COMMANDS:
        if name == chosen:
            module = importlib.import_module(f"bot.commands.{name}")
            p = sub.add_parser(name, help=module.HELP, description=module.HELP)
            module.add_arguments(p)
            p.set_defaults(_run=module.run)
        else:
            sub.add_parser(name, add_help=False)
    args = parser.parse_args(argv)
    try:
        return int(args._run(args))
    except (ConfigError, ModelError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
