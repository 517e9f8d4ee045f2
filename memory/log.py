"""Sessions and the append-only event log (`store.sessions`, `store.events`).

The event log is full fidelity: every user message, assistant message, tool call, tool
result, compaction and state answer is stored whole, once, and never rewritten. Compaction
changes what the model sees, not what is stored, so a cleared tool result is still here by id.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory.db import NotFoundError, Records, StoreBase, guarded, where_all, where_in
from memory.rows import EventRow, SessionRow, make_id, parse_id, to_iso, utc_now

if TYPE_CHECKING:
    from memory.episodes import Episodes

_KIND = re.compile(r"[a-z][a-z0-9_]*")

# The kinds the runtime writes; other lower_snake kinds are accepted too.
EVENT_KINDS = (
    "user",
    "assistant",
    "tool_call",
    "tool_result",
    "compaction",
    "state_answer",
    "system",
    "error",
)


def to_session_id(n: int | None) -> str:
    """The public id of a session key; "" for records that belong to no session."""
    return make_id("sessions", n) if n is not None else ""


def session_key(value: str | None) -> int | None:
    """The session key to store beside a record; None when it belongs to no session."""
    return parse_id("sessions", value) if value else None


def by_session(session_id: str | None) -> tuple[str | None, list[Any]]:
    """A `rows_where` filter for one session's records, or none when no session is given."""
    return ("session_n = ?", [parse_id("sessions", session_id)]) if session_id else (None, [])


def _session(row: dict[str, Any]) -> SessionRow:
    return SessionRow(
        id=make_id("sessions", row["n"]),
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        meta=json.loads(row["meta"]),
    )


def _event(row: dict[str, Any]) -> EventRow:
    return EventRow(
        id=make_id("events", row["n"]),
        session_id=to_session_id(row["session_n"]),
        turn_id=row["turn_id"],
        kind=row["kind"],
        role=row["role"],
        name=row["name"],
        call_id=row["call_id"],
        content=row["content"],
        tokens=row["tokens"],
        created_at=row["created_at"],
        meta=json.loads(row["meta"]),
    )


class Sessions(Records):
    """One row per conversation: when it started and ended."""

    table_name = "sessions"

    @guarded
    def start(self, meta: dict[str, Any] | None = None) -> str:
        n = self.insert({"started_at": to_iso(utc_now()), "meta": json.dumps(meta or {})})
        return make_id("sessions", n)

    @guarded
    def end(self, session_id: str) -> None:
        n = parse_id("sessions", session_id)
        with self.store.write():
            cur = self.store.conn.execute(
                "UPDATE sessions SET ended_at = ? WHERE n = ? AND ended_at IS NULL",
                (to_iso(utc_now()), n),
            )
        if cur.rowcount == 0 and self.get(session_id) is None:
            raise NotFoundError(f"no session {session_id}")

    @guarded
    def get(self, session_id: str) -> SessionRow | None:
        row = self.row(parse_id("sessions", session_id))
        return _session(row) if row is not None else None

    @guarded
    def last(self, exclude: str | None = None) -> SessionRow | None:
        """The most recently started session, other than `exclude` (usually the current one)."""
        skip = parse_id("sessions", exclude) if exclude else -1
        rows = self.table.rows_where("n != ?", [skip], order_by="n DESC", limit=1)
        return next((_session(r) for r in rows), None)

    @guarded
    def with_content(
        self, kinds: Iterable[str], *, exclude: str | None = None, limit: int = 5
    ) -> list[SessionRow]:
        """The latest sessions with content, newest first: an event of `kinds`, or a checkpoint
        with a summary (one written for an imported conversation).

        A session opened and closed without a word has neither, so it never stands in for the
        last real conversation. Each probe is one lookup on a session index."""
        kind_list = list(kinds)
        skip = parse_id("sessions", exclude) if exclude else -1
        rows = self.store.all(
            "SELECT * FROM sessions AS s WHERE s.n != ? AND (EXISTS (SELECT 1 FROM events AS e"
            f" WHERE e.session_n = s.n AND {where_in('e.kind', kind_list)})"
            " OR EXISTS (SELECT 1 FROM checkpoints AS c WHERE c.session_n = s.n"
            " AND c.summary != '')) ORDER BY s.n DESC LIMIT ?",
            [skip, *kind_list, int(limit)],
        )
        return [_session(dict(r)) for r in rows]


class Events(Records):
    """The append-only log of everything said and done, in order. Words said (the user's
    turns, Annie's answers) are written with their episode (`memory.episodes`), in the same
    transaction."""

    table_name = "events"

    def __init__(self, store: StoreBase, episodes: Episodes | None = None) -> None:
        super().__init__(store)
        self.episodes = episodes

    @guarded
    def append(
        self,
        session_id: str,
        kind: str,
        content: Any,
        *,
        turn_id: str = "",
        role: str = "",
        name: str = "",
        call_id: str = "",
        tokens: int | None = None,
        meta: dict[str, Any] | None = None,
        at: datetime | None = None,
    ) -> str:
        """Append one event in its own committed transaction; returns its stable id.

        `content` is stored whole; anything that is not a string is stored as JSON. `at`: when
        it happened, for events imported from elsewhere (now by default).
        """
        if not _KIND.fullmatch(kind):
            raise ValueError(
                f"bad event kind '{kind}' (lower-case words joined by _, e.g. tool_result)"
            )
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        session_n = parse_id("sessions", session_id)
        created_at = to_iso(at or utc_now())
        record = {
            "session_n": session_n,
            "turn_id": turn_id,
            "kind": kind,
            "role": role,
            "name": name,
            "call_id": call_id,
            "content": text,
            "tokens": tokens,
            "created_at": created_at,
            "meta": json.dumps(meta or {}),
        }
        try:
            with self.store.write():
                n = self.insert(record)
                if self.episodes is not None and isinstance(content, str):
                    private = bool((meta or {}).get("private"))
                    self.episodes.said(n, session_n, kind, text, created_at, private=private)
        except sqlite3.IntegrityError as exc:
            raise NotFoundError(
                f"no session {session_id}; start one with store.sessions.start()"
            ) from exc
        return make_id("events", n)

    @guarded
    def get(self, event_id: str) -> EventRow | None:
        row = self.row(parse_id("events", event_id))
        return _event(row) if row is not None else None

    @guarded
    def failed_results(self, session_id: str, name: str) -> list[EventRow]:
        """A session's results of tool `name` logged with `ok` false, newest first: what the
        tool runner's retry guard reads on every call, so SQLite does the filtering."""
        rows = self.table.rows_where(
            "session_n = ? AND kind = 'tool_result' AND name = ?"
            " AND json_extract(meta, '$.ok') = 0",
            [parse_id("sessions", session_id), name],
            order_by="n DESC",
        )
        return [_event(r) for r in rows]

    @guarded
    def find(
        self,
        session_id: str | None = None,
        kinds: Iterable[str] | None = None,
        turn_id: str | None = None,
        since: str | datetime | None = None,
        limit: int | None = None,
        *,
        newest_first: bool = False,
    ) -> list[EventRow]:
        """Events in log order, filtered.

        `since` is an event id (events after it) or a time (events at or after it).
        With `newest_first`, `limit` keeps the newest ones (still returned newest first).
        """
        where: list[str] = []
        params: list[Any] = []
        if session_id:
            where.append("session_n = ?")
            params.append(parse_id("sessions", session_id))
        if kinds is not None:
            kind_list = [*kinds]
            where.append(where_in("kind", kind_list))
            params.extend(kind_list)
        if turn_id is not None:
            where.append("turn_id = ?")
            params.append(turn_id)
        if isinstance(since, str) and since.startswith("ev-"):
            where.append("n > ?")
            params.append(parse_id("events", since))
        elif since:
            when = since if isinstance(since, datetime) else datetime.fromisoformat(since)
            where.append("created_at >= ?")
            params.append(to_iso(when))
        rows = self.table.rows_where(
            where_all(where),
            params,
            order_by="n DESC" if newest_first else "n",
            limit=int(limit) if limit is not None else None,
        )
        return [_event(r) for r in rows]
