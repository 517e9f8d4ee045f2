"""The Work Index: the compact current-state projection that status answers and prompts read.

It is read from the typed tables through indexed queries (a few milliseconds at tens of
thousands of tasks), so it is always as fresh as the file and has no second copy of the
state to drift. Lists are capped per lane; the counts beside them are exact.
"""

from __future__ import annotations

from datetime import datetime

from memory.db import StoreBase, guarded
from memory.rows import ScheduledItem, TaskRow, WorkIndex, make_id, to_iso, utc_now
from memory.work import PENDING_WHERE, task_row


class ProjectionsMixin(StoreBase):
    @guarded
    def work_index(self, now: datetime | None = None, limit: int = 5) -> WorkIndex:
        at = now or utc_now()
        lanes: dict[str, list[TaskRow]] = {}
        queries = {
            "active": "status = 'open'",
            "blocked": "status = 'blocked'",
            "pending_user": f"pending = 'user' AND {PENDING_WHERE}",
            "pending_others": f"pending IN ('assistant', 'external') AND {PENDING_WHERE}",
        }
        counts: dict[str, int] = {}
        for lane, where in queries.items():
            rows = self._all(f"SELECT * FROM tasks WHERE {where} ORDER BY n LIMIT ?", (limit,))
            lanes[lane] = [task_row(r) for r in rows]
            if len(rows) < limit:
                counts[lane] = len(rows)
            else:
                row = self._one(f"SELECT count(*) AS c FROM tasks WHERE {where}")
                counts[lane] = int(row["c"]) if row is not None else 0
        stamp = to_iso(at)
        scheduled: list[ScheduledItem] = [
            ScheduledItem(make_id("reminders", r["n"]), r["text"], r["due"], "reminder")
            for r in self._all(
                "SELECT n, text, due FROM reminders WHERE status = 'scheduled' AND due >= ?"
                " ORDER BY due LIMIT ?",
                (stamp, limit),
            )
        ]
        scheduled += [
            ScheduledItem(make_id("tasks", r["n"]), r["title"], r["due"], "task")
            for r in self._all(
                "SELECT n, title, due FROM tasks WHERE status != 'done' AND due >= ?"
                " ORDER BY due LIMIT ?",
                (stamp, limit),
            )
        ]
        scheduled.sort(key=lambda s: s.due)
        changed = self._one(
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
