"""Protected items read from the typed tables: pending and blocked tasks, approvals with exact
parameters.

These are live records, so they are read fresh at every compaction rather than carried from an
older checkpoint: a task finished since then is no longer pending, and saying it is would be a
false statement. The line format is fixed so the finished context can be checked for each one.
"""

from __future__ import annotations

from typing import Any

from memory.approvals import render
from memory.rows import TaskRow


def task_line(task: TaskRow) -> str:
    return f"{task.id} {task.title} (waiting on {task.pending})"


def blocked_items(store: Any) -> list[str]:
    """Lines for the tasks the work table marks blocked; empty without a store."""
    if store is None:
        return []
    return [f"{t.id} {t.title} (blocked)" for t in store.tasks.find(status="blocked", limit=20)]


def live_items(store: Any) -> tuple[list[str], list[str], list[str]]:
    """(pending task lines, approval lines, their ids) from the store; empty without one."""
    if store is None:
        return [], [], []
    tasks = store.tasks.pending(limit=50)
    approvals = store.approvals.pending()
    ids = [t.id for t in tasks] + [a.id for a in approvals]
    return [task_line(t) for t in tasks], [render(a) for a in approvals], ids
