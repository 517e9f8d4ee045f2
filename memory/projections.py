"""The Work Index (`store.projections.work_index()`): the compact current-state projection.

Status answers and prompts read it. It is read from the typed tables through indexed queries
(a few milliseconds at tens of thousands of tasks), so it is always as fresh as the file and
has no second copy of the state to drift. Lists are capped per lane; the counts are exact.
`scope(session_id)` says what one conversation is working in: its approval still waiting for a
yes, and the unfinished task it last touched.
"""

from __future__ import annotations

from datetime import datetime

from memory.db import Records, guarded
from memory.rows import ScheduledItem, TaskRow, WorkIndex, make_id, parse_id, to_iso, utc_now
from memory.work import PENDING_WHERE, task_row

# Each lane of the index and the tasks in it.
LANE_WHERE = {
    "active": "status = 'open'",
    "blocked": "status = 'blocked'",
    "pending_user": f"pending = 'user' AND {PENDING_WHERE}",
    "pending_others": f"pending IN ('assistant', 'external') AND {PENDING_WHERE}",
}


class Projections(Records):
    table_name = "tasks"

    @guarded
    def scope(self, session_id: str, now: datetime | None = None) -> tuple[str | None, str | None]:
        """(active task id, pending approval id) of the conversation `session_id`.

        The active task is the unfinished task most recently created or changed since the
        conversation started (what it is working on); the pending approval is its newest one
        still waiting and not expired. None where there is none."""
        stamp = to_iso(now or utc_now())
        approval = self.store.one(
            "SELECT n FROM approvals WHERE status = 'pending' AND requester = ?"
            " AND expires_at > ? ORDER BY n DESC LIMIT 1",
            [session_id, stamp],
        )
        task = self.store.one(
            "SELECT t.n FROM tasks t JOIN sessions s ON s.n = ?"
            " WHERE t.status != 'done' AND t.updated_at >= s.started_at"
            " ORDER BY t.updated_at DESC, t.n DESC LIMIT 1",
            [parse_id("sessions", session_id)],
        )
        return (
            make_id("tasks", task["n"]) if task is not None else None,
            make_id("approvals", approval["n"]) if approval is not None else None,
        )

    @guarded
    def work_index(self, now: datetime | None = None, limit: int = 5) -> WorkIndex:
        stamp = to_iso(now or utc_now())
        tasks = self.table
        lanes: dict[str, list[TaskRow]] = {}
        counts: dict[str, int] = {}
        for lane, where in LANE_WHERE.items():
            rows = [task_row(r) for r in tasks.rows_where(where, order_by="n", limit=limit)]
            lanes[lane] = rows
            # A short list is the whole lane; only a full one needs counting.
            counts[lane] = len(rows) if len(rows) < limit else tasks.count_where(where)
        reminders = self.store.db.table("reminders").rows_where(
            "status = 'scheduled' AND due >= ?", [stamp], order_by="due", limit=limit
        )
        scheduled = [
            ScheduledItem(make_id("reminders", r["n"]), r["text"], r["due"], "reminder")
            for r in reminders
        ]
        scheduled += [
            ScheduledItem(make_id("tasks", r["n"]), r["title"], r["due"], "task")
            for r in tasks.rows_where(
                "status != 'done' AND due >= ?", [stamp], order_by="due", limit=limit
            )
        ]
        scheduled.sort(key=lambda s: s.due)
        changed = self.store.one(
            "SELECT max(m) AS m FROM (SELECT max(updated_at) AS m FROM tasks"
            " UNION ALL SELECT max(created_at) FROM reminders)"
        )
        return WorkIndex(
            active=lanes["active"],
            active_count=counts["active"],
            blocked=lanes["blocked"],
            blocked_count=counts["blocked"],
            pending_user=lanes["pending_user"],
            pending_user_count=counts["pending_user"],
            pending_others=lanes["pending_others"],
            pending_others_count=counts["pending_others"],
            next_scheduled=scheduled[:limit],
            as_of=stamp,
            updated_at=changed["m"] if changed is not None else None,
        )
