"""`python -m bot export SESSION_ID > trace.jsonl`: a recorded session as a replay trace.

Reads one session from the event log in `$ANNIE_HOME` and writes it in the trace format
`python -m bot replay` plays (`bot.turn.replay`): the user's words, each reply as it was
logged (a state-path answer too: replay sends every turn to the model), the model's tool calls
and their results, and a disconnect when the session was closed. Call ids are renumbered
(`c1`, `c2`, ...) because a live model's ids repeat from round to round; each result follows
its own call. The window is the one the session's first manifest recorded. `--list` prints the
sessions with content, newest first, so a person can find the id to export.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import deque
from typing import Any

from bot.commands.records import local_time, with_store
from config import Settings, load_settings
from memory.rows import EventRow
from memory.store import Store

HELP = "write a recorded session as a replay trace (JSON lines) on standard output"

_KINDS = ("user", "assistant", "state_answer", "tool_result", "manifest")
FIND_IDS = "python -m bot export --list"


class ExportError(ValueError):
    """A session that cannot be exported; the message says how to find one that can."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", nargs="?", help="the session id, e.g. sess-12")
    parser.add_argument(
        "--list", action="store_true", help="list the sessions with content, newest first"
    )
    parser.add_argument("--limit", type=int, default=20, help="how many sessions --list shows")


def session_trace(store: Store, session_id: str) -> list[dict[str, Any]]:
    """The session's records in the replay format; ExportError for an unknown session."""
    try:
        row = store.sessions.get(session_id)
    except ValueError as exc:
        raise ExportError(f"{exc}; {FIND_IDS} shows the session ids") from exc
    if row is None:
        raise ExportError(f"no session {session_id} in {store.path_label}; {FIND_IDS} lists them")
    events = store.events.find(row.id, kinds=_KINDS)
    records: list[dict[str, Any]] = []
    window = 0
    waiting: dict[str, deque[str]] = {}  # a live call id -> the trace ids of calls not yet answered
    calls = 0
    spoken = False  # whether a user turn came yet
    for ev in events:
        if ev.kind == "manifest":
            window = window or _window(ev)
        elif ev.kind == "user":
            records.append({"type": "user", "text": ev.content})
            spoken = True
        elif ev.kind == "state_answer":
            records.append({"type": "assistant", "text": ev.content})
        elif ev.kind == "assistant" and "amends" not in ev.meta:
            reply: dict[str, Any] = {"type": "assistant", "text": ev.content}
            made = []
            for call in ev.meta.get("tool_calls") or []:
                calls += 1
                trace_id = f"c{calls}"
                waiting.setdefault(str(call.get("id", "")), deque()).append(trace_id)
                args = call.get("arguments")
                made.append(
                    {
                        "id": trace_id,
                        "name": str(call.get("name", "")),
                        "arguments": args if isinstance(args, dict) else {},
                    }
                )
            if made:
                reply["tool_calls"] = made
            # A reply before the first user turn (a greeting) has no turn to answer.
            if spoken:
                records.append(reply)
        elif ev.kind == "tool_result":
            # A result with no call of its own (an unreadable call's error) has nothing to answer.
            queue = waiting.get(ev.call_id)
            if queue:
                trace_id = queue.popleft()
                result = {"id": trace_id, "name": ev.name, "content": ev.content}
                records.append({"type": "tool_result", **result})
    if not spoken:
        raise ExportError(f"session {row.id} has no user turns to export; {FIND_IDS} lists them")
    head = [{"type": "session", "window": window}] if window else []
    tail = [{"type": "disconnect"}] if row.ended_at else []
    return [*head, *records, *tail]


def _window(ev: EventRow) -> int:
    try:
        limit = json.loads(ev.content).get("limit", 0)
    except (json.JSONDecodeError, AttributeError):
        return 0
    return limit if isinstance(limit, int) and limit > 0 else 0


def list_sessions(store: Store, limit: int) -> list[str]:
    """One line per session with content, newest first: id, start, user turns, closed or not."""
    lines = []
    for s in store.sessions.with_content(["user"], limit=limit):
        turns = len(store.events.find(s.id, kinds=["user"]))
        closed = "closed" if s.ended_at else "open or crashed"
        lines.append(f"{s.id:<10} {local_time(s.started_at)}  {turns:>4} turns  {closed}")
    return lines


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    if not args.list and not args.session:
        print(f"error: name a session to export; {FIND_IDS} shows the ids", file=sys.stderr)
        return 2
    if not settings.db_path.exists():
        print(f"error: no event log at {settings.db_path} (ANNIE_HOME)", file=sys.stderr)
        return 2
    return with_store(settings, lambda store: _act(store, args, settings))


def _act(store: Store, args: argparse.Namespace, settings: Settings) -> int:
    if args.list:
        lines = list_sessions(store, args.limit)
        print("\n".join(lines) if lines else f"no sessions with content in {settings.db_path}")
        return 0
    try:
        records = session_trace(store, args.session)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for record in records:
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0
