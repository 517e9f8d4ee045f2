"""Tasks and reminders: the typed records that status answers are read from.

A task's `pending` says who the next step waits on ("none", "user", "assistant",
"external"); `status` says whether it is open, blocked or done. Seed 000's rule lives here
in one place: pending work is `pending != "none"` and not done.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memory.db import NotFoundError, StoreBase, guarded
from memory.rows import (
    PENDING_VALUES,
    TASK_STATUSES,
    ReminderRow,
    TaskRow,
    make_id,
    parse_id,
    parse_when,
    to_iso,
    utc_now,
)

# The one definition of "pending" (seed 000: pending = tasks where pending != "none").
PENDING_WHERE = "pending != 'none' AND status != 'done'"


def task_row(row: Any) -> TaskRow:
    return TaskRow(
        id=make_id("tasks", row["n"]),
        title=row["title"],
        status=row["status"],
        pending=row["pending"],
        due=row["due"],
        source=row["source"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def reminder_row(row: Any) -> ReminderRow:
    return ReminderRow(
        id=make_id("reminders", row["n"]),
        text=row["text"],
        due=row["due"],
        status=row["status"],
        created_at=row["created_at"],
    )


def _check(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}, not '{value}'")
    return value


def _values(value: str | Iterable[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


class WorkMixin(StoreBase):
    # --- tasks --------------------------------------------------------------------------

    @guarded
    def add_task(
        self,
        title: str,
        pending: str = "none",
        due: str | datetime | None = None,
        source: str = "user",
        status: str = "open",
    ) -> str:
        title = title.strip()
        if not title:
            raise ValueError("a task needs a title")
        _check(pending, PENDING_VALUES, "pending")
        _check(status, TASK_STATUSES, "status")
        now = to_iso(utc_now())
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO tasks (title, status, pending, due, source, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (title, status, pending, parse_when(due), source, now, now),
            )
        return make_id("tasks", int(cur.lastrowid or 0))

    @guarded
    def add_tasks(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert many tasks in one transaction (imports, benchmarks); returns how many."""
        now = to_iso(utc_now())
        values = []
        for r in rows:
            values.append(
                (
                    str(r["title"]),
                    _check(r.get("status", "open"), TASK_STATUSES, "status"),
                    _check(r.get("pending", "none"), PENDING_VALUES, "pending"),
                    parse_when(r.get("due")),
                    r.get("source", "user"),
                    now,
                    now,
                )
            )
        with self._write() as c:
            c.executemany(
                "INSERT INTO tasks (title, status, pending, due, source, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                values,
            )
        return len(values)

    @guarded
    def get_task(self, task_id: str) -> TaskRow | None:
        row = self._one("SELECT * FROM tasks WHERE n = ?", (parse_id("tasks", task_id),))
        return task_row(row) if row is not None else None

    @guarded
    def update_task(
        self,
        task_id: str,
        *,
        title: str | None = None,
        status: str | None = None,
        pending: str | None = None,
        due: str | datetime | None = None,
    ) -> TaskRow:
        sets: list[str] = []
        params: list[Any] = []
        if title is not None:
            sets.append("title = ?")
            params.append(title.strip())
        if status is not None:
            sets.append("status = ?")
            params.append(_check(status, TASK_STATUSES, "status"))
        if pending is not None:
            sets.append("pending = ?")
            params.append(_check(pending, PENDING_VALUES, "pending"))
        if due is not None:
            sets.append("due = ?")
            params.append(parse_when(due))
        sets.append("updated_at = ?")
        params.append(to_iso(utc_now()))
        n = parse_id("tasks", task_id)
        with self._write() as c:
            cur = c.execute(f"UPDATE tasks SET {', '.join(sets)} WHERE n = ?", (*params, n))
        if cur.rowcount == 0:
            raise NotFoundError(f"no task {make_id('tasks', n)}")
        row = self.get_task(task_id)
        assert row is not None
        return row

    def complete_task(self, task_id: str) -> TaskRow:
        """Mark a task done. Nothing waits on a finished task, so `pending` goes back to none."""
        return self.update_task(task_id, status="done", pending="none")

    @guarded
    def list_tasks(
        self,
        status: str | Iterable[str] | None = None,
        pending: str | Iterable[str] | None = None,
        limit: int | None = None,
    ) -> list[TaskRow]:
        """Tasks in creation order; `status`/`pending` filter by one value or several."""
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("status", _values(status)), ("pending", _values(pending))):
            if value is not None:
                where.append(f"{column} IN ({', '.join('?' for _ in value)})")
                params.extend(value)
        sql = "SELECT * FROM tasks"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY n"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [task_row(r) for r in self._all(sql, params)]

    @guarded
    def pending_tasks(self, limit: int | None = None) -> list[TaskRow]:
        """Seed 000's pending set: `pending != "none"` and not done, oldest first."""
        sql = f"SELECT * FROM tasks WHERE {PENDING_WHERE} ORDER BY n"
        params: list[Any] = []
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [task_row(r) for r in self._all(sql, params)]

    @guarded
    def pending_summary(self, limit: int = 3) -> dict[str, tuple[int, list[TaskRow]]]:
        """The pending set by who it waits on: exact count and the oldest `limit` tasks."""
        counts = {
            r["pending"]: int(r["c"])
            for r in self._all(
                f"SELECT pending, count(*) AS c FROM tasks WHERE {PENDING_WHERE} GROUP BY pending"
            )
        }
        out: dict[str, tuple[int, list[TaskRow]]] = {}
        for party in PENDING_VALUES[1:]:
            count = counts.get(party, 0)
            rows = (
                self._all(
                    f"SELECT * FROM tasks WHERE pending = ? AND {PENDING_WHERE} ORDER BY n LIMIT ?",
                    (party, int(limit)),
                )
                if count
                else []
            )
            out[party] = (count, [task_row(r) for r in rows])
        return out

    @guarded
    def count_tasks(self) -> dict[str, int]:
        """Counts by lane: open, blocked, done, and pending by who it waits on."""
        out = {"open": 0, "blocked": 0, "done": 0, "user": 0, "assistant": 0, "external": 0}
        for r in self._all("SELECT status, count(*) AS c FROM tasks GROUP BY status"):
            out[r["status"]] = r["c"]
        for r in self._all(
            f"SELECT pending, count(*) AS c FROM tasks WHERE {PENDING_WHERE} GROUP BY pending"
        ):
            out[r["pending"]] = r["c"]
        return out

    # --- reminders ----------------------------------------------------------------------

    @guarded
    def add_reminder(self, text: str, due: str | datetime) -> str:
        text = text.strip()
        if not text:
            raise ValueError("a reminder needs some text")
        when = parse_when(due)
        if when is None:
            raise ValueError("a reminder needs a due time")
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO reminders (text, due, created_at) VALUES (?, ?, ?)",
                (text, when, to_iso(utc_now())),
            )
        return make_id("reminders", int(cur.lastrowid or 0))

    @guarded
    def get_reminder(self, reminder_id: str) -> ReminderRow | None:
        row = self._one(
            "SELECT * FROM reminders WHERE n = ?", (parse_id("reminders", reminder_id),)
        )
        return reminder_row(row) if row is not None else None

    @guarded
    def reminders_between(
        self, start: datetime, end: datetime, limit: int | None = None
    ) -> list[ReminderRow]:
        """Scheduled reminders due in [start, end), earliest first."""
        sql = (
            "SELECT * FROM reminders WHERE status = 'scheduled' AND due >= ? AND due < ?"
            " ORDER BY due, n"
        )
        params: list[Any] = [to_iso(start), to_iso(end)]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [reminder_row(r) for r in self._all(sql, params)]

    @guarded
    def tasks_due_between(
        self, start: datetime, end: datetime, limit: int | None = None
    ) -> list[TaskRow]:
        """Unfinished tasks due in [start, end), earliest first."""
        sql = "SELECT * FROM tasks WHERE status != 'done' AND due >= ? AND due < ? ORDER BY due, n"
        params: list[Any] = [to_iso(start), to_iso(end)]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [task_row(r) for r in self._all(sql, params)]
