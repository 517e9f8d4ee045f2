"""The protected-items check: after a compaction, every protected item is in the final prompt.

Each protected item is a (needle, line) pair: the exact string that must appear in the rendered
prompt, and the line that puts it back when it does not. Missing items are re-inserted as one
pinned block at the compaction's own cut point, so the check never moves the edit earlier.
"""

from __future__ import annotations

import itertools
from typing import Any

from compaction.checkpoint import Checkpoint
from compaction.tables import task_line
from context.conversation import Conversation, Item
from context.ledger import Ledger
from memory.approvals import render

KEPT_TITLE = "[Kept across compaction: exact records, authoritative over anything older]"
_block_ids = itertools.count(1)


def required_items(cp: Checkpoint, store: Any) -> list[tuple[str, str]]:
    """Every protected item as (needle, line): the checkpoint's, then the live tables'."""
    out: list[tuple[str, str]] = [(item, f"- {item}") for item in cp.protected_items()]
    if store is not None:
        for task in store.tasks.pending(limit=50):
            out.append((task_line(task), f"- Pending task: {task_line(task)}"))
        for appr in store.approvals.pending():
            # Written by the one renderer the snapshot and the briefing use, so a line that
            # is in the prompt is found exactly.
            out.append((render(appr), f"- {render(appr)}"))
    seen: set[str] = set()
    unique = []
    for needle, line in out:
        if needle and needle not in seen:
            seen.add(needle)
            unique.append((needle, line))
    return unique


def missing(prompt: str, required: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(needle, line) for needle, line in required if needle not in prompt]


def ensure_protected(
    conv: Conversation, ledger: Ledger, required: list[tuple[str, str]], index: int
) -> int:
    """Re-insert whatever protected item the prompt lacks at `index`; returns how many."""
    if not required:
        return 0
    lost = missing(ledger.prompt(conv), required)
    if not lost:
        return 0
    block = Item(
        id=f"kept-{conv.session_id}-{next(_block_ids)}",
        kind="summary",
        role="user",
        content="\n".join([KEPT_TITLE, *(line for _, line in lost)]),
        turn=0,
        pinned=True,
        reason="protected items re-inserted after compaction",
        meta={"protected": True},
    )
    conv.replace(index, index, [block], "protected items re-inserted")
    return len(lost)
