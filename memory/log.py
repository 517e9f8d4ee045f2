"""Sessions, the append-only event log, compaction checkpoints and per-turn latency metrics.

The event log is full fidelity: every user message, assistant message, tool call, tool
result, compaction and state answer is stored whole, once, and never rewritten. Compaction
changes what the model sees, not what is stored, so a cleared tool result is still here by id.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory.db import NotFoundError, StoreBase, guarded
from memory.rows import (
    CheckpointRow,
    EventRow,
    SessionRow,
    make_id,
    parse_id,
    to_iso,
    utc_now,
)

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


@dataclass(frozen=True)
class TurnMetricRow:
    id: int
    session_id: str
    turn_id: str
    path: str
    stages: dict[str, float]
    total_ms: float
    created_at: str
    extra: dict[str, Any] = field(default_factory=dict)


def _session_id(n: int | None) -> str:
    return make_id("sessions", n) if n is not None else ""


def _event(row: Any) -> EventRow:
    return EventRow(
        id=make_id("events", row["n"]),
        session_id=_session_id(row["session_n"]),
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


class LogMixin(StoreBase):
    # --- sessions -----------------------------------------------------------------------

    @guarded
    def start_session(self, meta: dict[str, Any] | None = None) -> str:
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO sessions (started_at, meta) VALUES (?, ?)",
                (to_iso(utc_now()), json.dumps(meta or {})),
            )
        return make_id("sessions", int(cur.lastrowid or 0))

    @guarded
    def end_session(self, session_id: str) -> None:
        n = parse_id("sessions", session_id)
        with self._write() as c:
            cur = c.execute(
                "UPDATE sessions SET ended_at = ? WHERE n = ? AND ended_at IS NULL",
                (to_iso(utc_now()), n),
            )
        if cur.rowcount == 0 and self.get_session(session_id) is None:
            raise NotFoundError(f"no session {session_id}")

    @guarded
    def get_session(self, session_id: str) -> SessionRow | None:
        row = self._one("SELECT * FROM sessions WHERE n = ?", (parse_id("sessions", session_id),))
        return _session(row) if row is not None else None

    @guarded
    def last_session(self, exclude: str | None = None) -> SessionRow | None:
        """The most recently started session, other than `exclude` (usually the current one)."""
        skip = parse_id("sessions", exclude) if exclude else -1
        row = self._one("SELECT * FROM sessions WHERE n != ? ORDER BY n DESC LIMIT 1", (skip,))
        return _session(row) if row is not None else None

    # --- events -------------------------------------------------------------------------

    @guarded
    def append_event(
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
    ) -> str:
        """Append one event in its own committed transaction; returns its stable id.

        `content` is stored whole; anything that is not a string is stored as JSON.
        """
        if not _KIND.fullmatch(kind):
            raise ValueError(
                f"bad event kind '{kind}' (lower-case words joined by _, e.g. tool_result)"
            )
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        session_n = parse_id("sessions", session_id)
        try:
            with self._write() as c:
                cur = c.execute(
                    "INSERT INTO events (session_n, turn_id, kind, role, name, call_id, content,"
                    " tokens, created_at, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        session_n,
                        turn_id,
                        kind,
                        role,
                        name,
                        call_id,
                        text,
                        tokens,
                        to_iso(utc_now()),
                        json.dumps(meta or {}),
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise NotFoundError(f"no session {session_id}; start one with start_session()") from exc
        return make_id("events", int(cur.lastrowid or 0))

    @guarded
    def get_event(self, event_id: str) -> EventRow | None:
        row = self._one("SELECT * FROM events WHERE n = ?", (parse_id("events", event_id),))
        return _event(row) if row is not None else None

    @guarded
    def events(
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
            kind_list = list(kinds)
            where.append(f"kind IN ({', '.join('?' for _ in kind_list)})")
            params.extend(kind_list)
        if turn_id is not None:
            where.append("turn_id = ?")
            params.append(turn_id)
        if isinstance(since, datetime):
            where.append("created_at >= ?")
            params.append(to_iso(since))
        elif isinstance(since, str) and since.startswith("ev-"):
            where.append("n > ?")
            params.append(parse_id("events", since))
        elif isinstance(since, str) and since:
            where.append("created_at >= ?")
            params.append(to_iso(datetime.fromisoformat(since)))
        sql = "SELECT * FROM events"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY n DESC" if newest_first else " ORDER BY n"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [_event(r) for r in self._all(sql, params)]

    # --- checkpoints --------------------------------------------------------------------

    @guarded
    def save_checkpoint(
        self,
        session_id: str,
        tier: int,
        data: dict[str, Any],
        summary: str,
        tail_event_ids: list[str],
    ) -> str:
        session_n = parse_id("sessions", session_id) if session_id else None
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO checkpoints (session_n, tier, data, summary, tail_event_ids,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    session_n,
                    int(tier),
                    json.dumps(data, ensure_ascii=False),
                    summary,
                    json.dumps(list(tail_event_ids)),
                    to_iso(utc_now()),
                ),
            )
        return make_id("checkpoints", int(cur.lastrowid or 0))

    @guarded
    def latest_checkpoint(self, session_id: str | None = None) -> CheckpointRow | None:
        if session_id:
            row = self._one(
                "SELECT * FROM checkpoints WHERE session_n = ? ORDER BY n DESC LIMIT 1",
                (parse_id("sessions", session_id),),
            )
        else:
            row = self._one("SELECT * FROM checkpoints ORDER BY n DESC LIMIT 1")
        if row is None:
            return None
        return CheckpointRow(
            id=make_id("checkpoints", row["n"]),
            session_id=_session_id(row["session_n"]),
            tier=row["tier"],
            data=json.loads(row["data"]),
            summary=row["summary"],
            tail_event_ids=json.loads(row["tail_event_ids"]),
            created_at=row["created_at"],
        )

    # --- turn metrics -------------------------------------------------------------------

    @guarded
    def record_turn_metrics(
        self, session_id: str, turn_id: str, stages: dict[str, float], path: str
    ) -> int:
        """Store one turn's stage timings (milliseconds by stage name) and the path it took.

        The total is the `total_ms` stage where the caller measured one (stages may overlap,
        e.g. the model's first token falls inside the model stage); otherwise the stages' sum.
        """
        clean = {str(k): float(v) for k, v in stages.items()}
        total = clean.get("total_ms", sum(clean.values()))
        session_n = parse_id("sessions", session_id) if session_id else None
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO turn_metrics (session_n, turn_id, path, stages, total_ms, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    session_n,
                    turn_id,
                    path,
                    json.dumps(clean),
                    total,
                    to_iso(utc_now()),
                ),
            )
        return int(cur.lastrowid or 0)

    @guarded
    def turn_metrics(
        self, session_id: str | None = None, limit: int | None = None
    ) -> list[TurnMetricRow]:
        sql = "SELECT * FROM turn_metrics"
        params: list[Any] = []
        if session_id:
            sql += " WHERE session_n = ?"
            params.append(parse_id("sessions", session_id))
        sql += " ORDER BY n"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [
            TurnMetricRow(
                id=r["n"],
                session_id=_session_id(r["session_n"]),
                turn_id=r["turn_id"],
                path=r["path"],
                stages=json.loads(r["stages"]),
                total_ms=r["total_ms"],
                created_at=r["created_at"],
            )
            for r in self._all(sql, params)
        ]


def _session(row: Any) -> SessionRow:
    return SessionRow(
        id=make_id("sessions", row["n"]),
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        meta=json.loads(row["meta"]),
    )
