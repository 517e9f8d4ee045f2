"""`python -m bot tasks add|list|done`: the task list from the command line.

`add "TEXT" [--pending user|assistant|external|none] [--due ISO]`, `list [--json] [--all]`,
`done ID`. Bad input is a clear error and exit code 2; nothing is written on error.
"""

from __future__ import annotations

import argparse
import json
import sys

from bot.commands.records import local_time, with_store
from config import load_settings
from memory.rows import PENDING_VALUES, TaskRow
from memory.store import Store

HELP = "add, list and complete tasks"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = sub.add_parser("add", help="add a task", description="add a task")
    add.add_argument("text", help="what needs doing")
    add.add_argument(
        "--pending",
        choices=PENDING_VALUES,
        default="none",
        help="who the next step waits on (default: none)",
    )
    add.add_argument("--due", default=None, help="ISO date or date-time, e.g. 2026-09-01T15:30")
    lst = sub.add_parser("list", help="list unfinished tasks", description="list tasks")
    lst.add_argument("--json", action="store_true", help="one JSON array of tasks")
    lst.add_argument("--all", action="store_true", help="include finished tasks")
    done = sub.add_parser("done", help="mark a task done", description="mark a task done")
    done.add_argument("id", help="task id, e.g. task-12 (or 12)")


def _line(t: TaskRow) -> str:
    waits = "" if t.pending == "none" else f"  waiting on {t.pending}"
    due = f"  due {local_time(t.due)}" if t.due else ""
    return f"{t.id}  [{t.status}]  {t.title}{waits}{due}"


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.action == "add" and not args.text.strip():
        print("error: a task needs a title", file=sys.stderr)
        return 2

    def act(store: Store) -> int:
        if args.action == "add":
            task_id = store.tasks.add(args.text, pending=args.pending, due=args.due, source="cli")
            row = store.tasks.get(task_id)
            print(_line(row) if row else task_id)
        elif args.action == "list":
            rows = store.tasks.find(status=None if args.all else ["open", "blocked"])
            if args.json:
                print(json.dumps([t.__dict__ for t in rows], ensure_ascii=False))
            elif not rows:
                print("no tasks" if args.all else "no unfinished tasks")
            else:
                print("\n".join(_line(t) for t in rows))
        else:
            print(_line(store.tasks.complete(args.id)))
        return 0

    return with_store(settings, act)
