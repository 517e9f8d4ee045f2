"""Protected items read from the typed tables: pending tasks and approvals with exact parameters.

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


def live_items(store: Any) -> tuple[list[str], list[str], list[str]]:
    """(pending task lines, approval lines, their ids) from the store; empty without one."""
    if store is None:
        return [], [], []
    tasks = store.tasks.pending(limit=50)
    approvals = store.approvals.pending()
    ids = [t.id for t in tasks] + [a.id for a in approvals]
    return [task_line(t) for t in tasks], [render(a) for a in approvals], ids
