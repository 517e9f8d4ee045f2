"""Tasks (`store.tasks`): the records status answers read (reminders: `memory.reminders`).

A task's `pending` says who the next step waits on ("none", "user", "assistant",
"external"); `status` says whether it is open, blocked or done. The state path's rule lives
here in one place: pending work is `pending != "none"` and not done.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from memory.db import NotFoundError, Records, RowMissing, Table, guarded, where_all, where_in
from memory.rows import (
    PENDING_VALUES,
    TASK_STATUSES,
    TaskRow,
    make_id,
    parse_id,
    parse_when,
    to_iso,
    utc_now,
)

# The one definition of "pending": tasks where pending != "none" and not done.
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


def _check(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}, not '{value}'")
    return value


def _values(value: str | Iterable[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else [*value]


def _limit(limit: int | None) -> int | None:
    return int(limit) if limit is not None else None


def _due_in(
    table: Table, where: str, start: datetime, end: datetime, limit: int | None
) -> Iterator[dict[str, Any]]:
    """Rows matching `where` that fall due in [start, end), earliest first."""
    return table.rows_where(
        f"{where} AND due >= ? AND due < ?",
        [to_iso(start), to_iso(end)],
        order_by="due, n",
        limit=_limit(limit),
    )


def _task_record(r: dict[str, Any], now: str) -> dict[str, Any]:
    """A validated tasks row from what a caller gave (title, status, pending, due, source)."""
    title = str(r["title"]).strip()
    if not title:
        raise ValueError("a task needs a title")
    return {
        "title": title,
        "status": _check(r.get("status", "open"), TASK_STATUSES, "status"),
        "pending": _check(r.get("pending", "none"), PENDING_VALUES, "pending"),
        "due": parse_when(r.get("due")),
        "source": r.get("source", "user"),
        "created_at": now,
        "updated_at": now,
    }


class Tasks(Records):
    table_name = "tasks"

    @guarded
    def add(
        self,
        title: str,
        pending: str = "none",
        due: str | datetime | None = None,
        source: str = "user",
        status: str = "open",
    ) -> str:
        fields = {"title": title, "pending": pending, "due": due, "source": source}
        n = self.insert(_task_record({**fields, "status": status}, to_iso(utc_now())))
        return make_id("tasks", n)

    @guarded
    def add_many(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert many tasks in one transaction (imports, benchmarks); returns how many."""
        now = to_iso(utc_now())
        records = [_task_record(r, now) for r in rows]
        with self.store.write():
            self.table.insert_all(records)
        return len(records)

    @guarded
    def get(self, task_id: str) -> TaskRow | None:
        row = self.row(parse_id("tasks", task_id))
        return task_row(row) if row is not None else None

    @guarded
    def update(
        self,
        task_id: str,
        *,
        title: str | None = None,
        status: str | None = None,
        pending: str | None = None,
        due: str | datetime | None = None,
    ) -> TaskRow:
        changes: dict[str, Any] = {}
        if title is not None:
            changes["title"] = title.strip()
        if status is not None:
            changes["status"] = _check(status, TASK_STATUSES, "status")
        if pending is not None:
            changes["pending"] = _check(pending, PENDING_VALUES, "pending")
        if due is not None:
            changes["due"] = parse_when(due)
        changes["updated_at"] = to_iso(utc_now())
        n = parse_id("tasks", task_id)
        try:
            with self.store.write():
                self.table.update(n, changes)
        except RowMissing as exc:
            raise NotFoundError(f"no task {make_id('tasks', n)}") from exc
        row = self.get(task_id)
        assert row is not None
        return row

    def complete(self, task_id: str) -> TaskRow:
        """Mark a task done. Nothing waits on a finished task, so `pending` goes back to none."""
        return self.update(task_id, status="done", pending="none")

    @guarded
    def find(
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
                where.append(where_in(column, value))
                params.extend(value)
        rows = self.table.rows_where(where_all(where), params, order_by="n", limit=_limit(limit))
        return [task_row(r) for r in rows]

    @guarded
    def pending(self, limit: int | None = None) -> list[TaskRow]:
        """The pending set: `pending != "none"` and not done, oldest first."""
        rows = self.table.rows_where(PENDING_WHERE, order_by="n", limit=_limit(limit))
        return [task_row(r) for r in rows]

    @guarded
    def pending_summary(self, limit: int = 3) -> dict[str, tuple[int, list[TaskRow]]]:
        """The pending set by who it waits on: exact count and the oldest `limit` tasks."""
        counts = self._pending_counts()
        out: dict[str, tuple[int, list[TaskRow]]] = {}
        for party in PENDING_VALUES[1:]:
            count = counts.get(party, 0)
            rows = (
                self.table.rows_where(
                    f"pending = ? AND {PENDING_WHERE}", [party], order_by="n", limit=int(limit)
                )
                if count
                else []
            )
            out[party] = (count, [task_row(r) for r in rows])
        return out

    @guarded
    def counts(self) -> dict[str, int]:
        """Counts by lane: open, blocked, done, and pending by who it waits on."""
        out = {"open": 0, "blocked": 0, "done": 0, "user": 0, "assistant": 0, "external": 0}
        for r in self.store.all("SELECT status, count(*) AS c FROM tasks GROUP BY status"):
            out[r["status"]] = r["c"]
        out.update(self._pending_counts())
        return out

    def _pending_counts(self) -> dict[str, int]:
        rows = self.store.all(
            f"SELECT pending, count(*) AS c FROM tasks WHERE {PENDING_WHERE} GROUP BY pending"
        )
        return {r["pending"]: int(r["c"]) for r in rows}

    @guarded
    def due_between(
        self, start: datetime, end: datetime, limit: int | None = None
    ) -> list[TaskRow]:
        """Unfinished tasks due in [start, end), earliest first."""
        rows = _due_in(self.table, "status != 'done'", start, end, limit)
        return [task_row(r) for r in rows]
