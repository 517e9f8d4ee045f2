"""`python -m bot notes add|list`: put notes in and list them.

`add "TEXT" [--at ISO]` stores one note; `add -` stores one per line of standard input (blank
lines skipped), all in one transaction. `list [--json]` lists the current notes, oldest first.
Adding loads the embedding model (notes are embedded when written). Bad input is a clear error
and exit code 2; nothing is written on error. What a question recalls from the notes (and from
what was said) is `python -m bot memory recall` (`bot.commands.memory`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from datetime import datetime

from bot.commands.records import local_time, with_store
from config import load_settings
from memory.rows import NoteRow, from_iso, parse_when
from memory.store import Store

HELP = "add and list notes (python -m bot memory recall shows what a question recalls)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = sub.add_parser("add", help="add a note", description="add a note (or - for stdin)")
    add.add_argument("text", help="the note, or - to read one note per line from stdin")
    add.add_argument(
        "--at", default=None, help="when it was said: ISO date or date-time (default: now)"
    )
    lst = sub.add_parser("list", help="list current notes", description="list notes")
    lst.add_argument("--json", action="store_true", help="one JSON array of notes")


def _time(value: str | None, flag: str) -> datetime | None:
    if value is None:
        return None
    try:
        stamp = parse_when(value)
    except ValueError:
        raise ValueError(f"{flag} '{value}' is not an ISO date or date-time") from None
    return from_iso(stamp) if stamp else None


def _line(n: NoteRow) -> str:
    return f"{n.id}  {local_time(n.created_at)}  {n.text}"


def _texts(args: argparse.Namespace) -> list[str]:
    if args.text == "-":
        return [line.strip() for line in sys.stdin if line.strip()]
    return [args.text.strip()] if args.text.strip() else []


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    try:
        at = _time(args.at, "--at") if args.action == "add" else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    texts = _texts(args) if args.action == "add" else []
    if args.action == "add" and not texts:
        print("error: a note needs some text", file=sys.stderr)
        return 2

    def act(store: Store) -> int:
        if args.action == "list":
            current = list(reversed(store.notes.recent(limit=1_000_000)))
            if args.json:
                print(json.dumps([dataclasses.asdict(n) for n in current], ensure_ascii=False))
            elif not current:
                print("no notes")
            else:
                print("\n".join(_line(n) for n in current))
            return 0
        from models import load_embedder

        store.notes.embedder = load_embedder(settings)
        new = [{"text": t, "source": "cli", "created_at": at} for t in texts]
        for note_id in store.notes.add_many(new):
            note = store.notes.get(note_id)
            print(_line(note) if note else note_id)
        return 0

    return with_store(settings, act)
