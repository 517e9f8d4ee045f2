"""The current-state lane's content: the Work Index and pending approvals as compact text.

The text names exact ids and parameters (approvals are never paraphrased) and carries the
time the records last changed rather than the time they were read, so an unchanged state
renders identically and is not admitted again on the next turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from context.assembler import StateSnapshot
from memory.approvals import render
from memory.rows import TaskRow, from_iso

if TYPE_CHECKING:
    from memory.store import Store


def _task(t: TaskRow) -> str:
    due = f", due {t.due[:16]}" if t.due else ""
    return f"{t.id} {t.title}{due}"


def work_index_snapshot(store: Store) -> StateSnapshot:
    """The Work Index and open approvals as a state snapshot (raises StoreError if unreadable)."""
    wi = store.projections.work_index()
    lines: list[str] = []
    lanes = (
        ("Waiting on the user", wi.pending_user, wi.pending_user_count),
        ("Waiting on others", wi.pending_others, wi.pending_others_count),
        ("Blocked", wi.blocked, wi.blocked_count),
        ("Open", wi.active, wi.active_count),
    )
    for label, rows, count in lanes:
        if count:
            more = f" (+{count - len(rows)} more)" if count > len(rows) else ""
            lines.append(f"{label} ({count}): " + "; ".join(_task(r) for r in rows) + more)
    for s in wi.next_scheduled:
        lines.append(f"Next: {s.kind} {s.id} {s.text} at {s.due[:16]}")
    ids = wi.source_ids()
    expiries: list[float] = []
    for appr in store.approvals.pending():
        lines.append(render(appr))
        ids.append(appr.id)
        expiries.append(from_iso(appr.expires_at).timestamp())
    if not lines:
        lines.append("Nothing needs the user right now (no pending tasks, reminders or approvals).")
    changed = wi.updated_at or wi.as_of
    observed = from_iso(changed).timestamp()
    # The snapshot stops holding when the first approval it lists expires.
    return StateSnapshot(
        text="\n".join(lines),
        source_ids=ids,
        observed_at=observed,
        expires_at=min(expiries) if expiries else None,
    )


def safe_snapshot(store: Store) -> StateSnapshot:
    """The snapshot, or a line saying the task list cannot be read: never a silent "nothing"."""
    try:
        return work_index_snapshot(store)
    except Exception as exc:
        return StateSnapshot(text=f"The task list cannot be read right now ({type(exc).__name__}).")
