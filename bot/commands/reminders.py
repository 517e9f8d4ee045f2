"""`python -m bot reminders add|list|done`: reminders from the command line.

`add "TEXT" --at ISO|+MM:SS|+HH:MM:SS` (a local date-time, or a delay from now),
`list [--json] [--all]`, `done ID`. A running server picks a new reminder up within seconds
(its scheduler looks at the table) and says it when it falls due. Bad input is a clear error
and exit code 2; nothing is written on error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime, timedelta

from bot.commands.records import local_time, with_store
from config import load_settings
from memory.rows import ReminderRow, parse_when, utc_now
from memory.store import Store

HELP = "add, list and complete reminders"
_DELAY = re.compile(r"^\+(?:(\d+):)?(\d+):(\d{1,2})$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = sub.add_parser("add", help="add a reminder", description="add a reminder")
    add.add_argument("text", help="what to be reminded of")
    add.add_argument(
        "--at",
        required=True,
        help="when: an ISO date-time (2026-09-01T15:30, local time) or +MM:SS / +HH:MM:SS from now",
    )
    lst = sub.add_parser("list", help="list open reminders", description="list reminders")
    lst.add_argument("--json", action="store_true", help="one JSON array of reminders")
    lst.add_argument("--all", action="store_true", help="include done and cancelled ones")
    done = sub.add_parser("done", help="mark a reminder done", description="mark one done")
    done.add_argument("id", help="reminder id, e.g. rem-3 (or 3)")


def parse_at(value: str, now: datetime | None = None) -> str:
    """`--at` as the stored UTC time; ValueError with the accepted forms otherwise."""
    delay = _DELAY.match(value.strip())
    if delay is not None:
        hours, minutes, seconds = (int(g) if g else 0 for g in delay.groups())
        if seconds >= 60 or (hours and minutes >= 60):
            raise ValueError(f"'{value}' is not a delay (expected +MM:SS or +HH:MM:SS)")
        try:
            when = (now or utc_now()) + timedelta(hours=hours, minutes=minutes, seconds=seconds)
        except OverflowError:
            raise ValueError(f"'{value}' is too far ahead to be a delay") from None
        stamp = parse_when(when)
    else:
        try:
            # Empty text is no time (None); a date at the end of year 9999 or the start of
            # year 1 in another zone has no UTC time (OverflowError).
            stamp = parse_when(value)
        except (ValueError, OverflowError):
            stamp = None
        if stamp is None:
            raise ValueError(
                f"'{value}' is not a time: give an ISO date-time (2026-09-01T15:30) "
                "or a delay (+MM:SS, +HH:MM:SS)"
            )
    assert stamp is not None
    return stamp


def _line(r: ReminderRow) -> str:
    return f"{r.id}  [{r.status}]  {local_time(r.due, seconds=True)}  {r.text}"


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    try:
        due = parse_at(args.at) if args.action == "add" else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.action == "add" and not args.text.strip():
        print("error: a reminder needs some text", file=sys.stderr)
        return 2

    def act(store: Store) -> int:
        if due is not None:
            row = store.reminders.get(store.reminders.add(args.text, due))
            assert row is not None
            print(_line(row))
        elif args.action == "list":
            rows = store.reminders.find() if args.all else store.reminders.open()
            if args.json:
                print(json.dumps([r.__dict__ for r in rows], ensure_ascii=False))
            elif not rows:
                print("no reminders" if args.all else "no open reminders")
            else:
                print("\n".join(_line(r) for r in rows))
        else:
            print(_line(store.reminders.done(args.id)))
        return 0

    return with_store(settings, act)
