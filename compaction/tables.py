"""Protected items read from the typed tables: pending tasks and approvals with exact parameters.

These are live records, so they are read fresh at every compaction rather than carried from an
older checkpoint: a task finished since then is no longer pending, and saying it is would be a
false statement. The line format is fixed so the finished context can be checked for each one.
"""

from __future__ import annotations

import json
from typing import Any

from memory.rows import ApprovalRow, TaskRow


def task_line(task: TaskRow) -> str:
    return f"{task.id} {task.title} (waiting on {task.pending})"


def approval_params(params: dict[str, Any]) -> str:
    """An approval's parameters exactly, in one canonical JSON spelling."""
    return json.dumps(params, ensure_ascii=False, sort_keys=True)


def approval_line(appr: ApprovalRow) -> str:
    return (
        f"{appr.id} {appr.tool} {approval_params(appr.params)} "
        f"({appr.status}, expires {appr.expires_at[:16]} UTC)"
    )


def live_items(store: Any) -> tuple[list[str], list[str], list[str]]:
    """(pending task lines, approval lines, their ids) from the store; empty without one."""
    if store is None:
        return [], [], []
    tasks = store.pending_tasks(limit=50)
    approvals = store.pending_approvals()
    ids = [t.id for t in tasks] + [a.id for a in approvals]
    return [task_line(t) for t in tasks], [approval_line(a) for a in approvals], ids
