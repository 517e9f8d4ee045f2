"""Dispatch `python -m bot COMMAND` to `bot.commands.COMMAND`.

Each command module defines `HELP: str`, `add_arguments(parser)` and `run(args) -> int`,
and is imported only when chosen, so `ask` does not pay for loading the voice stack. The
one-line summaries `--help` lists are kept here, so listing them imports no command module.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from config import ConfigError
from memory.db import StoreError
from models.base import ModelError

# The one-line summary of each command, in the order `--help` lists them.
COMMANDS: dict[str, str] = {
    "serve": "serve the voice page (default http://127.0.0.1:8765)",
    "chat": "talk with Annie in the terminal",
    "ask": "answer one question, or one per line from stdin",
    "route": "show which stage would answer a text, and why (runs no model)",
    "tasks": "add, list and complete tasks",
    "reminders": "add, list and complete reminders",
    "notes": "add and list notes",
    "memory": "import conversations; see what a question would recall",
    "devices": "list the paired phones and laptops, or revoke one",
    "pair": "print a one-time code and QR code to pair a phone or laptop",
    "briefing": "print the briefing the next session will get, with sources",
    "replay": "replay a recorded session through the ledger and compaction",
    "export": "write a recorded session as a replay trace (python -m bot export --list)",
    "doctor": "check versions, the device and every model, each run once",
    "bench": "run a benchmark (python -m bot bench --help lists them)",
}


class _Formatter(argparse.HelpFormatter):
    """Leaves room for the longest command name, so each summary starts on its name's line.

    argparse measures subcommands at their section's indent, not at the deeper one it prints
    them at, so a command name as long as "reminders" would otherwise get a line of its own.
    """

    def __init__(self, prog: str) -> None:
        super().__init__(prog)
        self._action_max_length = 4 + max(len(name) for name in COMMANDS)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="python -m bot",
        description="Annie, a local voice assistant",
        formatter_class=_Formatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    for name, summary in COMMANDS.items():
        if name == chosen:
            module = importlib.import_module(f"bot.commands.{name}")
            p = sub.add_parser(name, help=summary, description=module.HELP)
            module.add_arguments(p)
            p.set_defaults(_run=module.run)
        else:
            sub.add_parser(name, help=summary, add_help=False)
    args = parser.parse_args(argv)
    try:
        return int(args._run(args))
    except (ConfigError, ModelError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
