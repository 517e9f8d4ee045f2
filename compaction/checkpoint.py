"""The structured checkpoint that tier 2 writes and tier 3 persists, and how checkpoints merge.

A checkpoint has two kinds of fields. Protected fields (pending tasks, approvals with their
exact parameters, user corrections, commitments, stated facts, exact ids) are filled from the
typed tables and the event log, never from model prose, and a later checkpoint keeps every one
of an earlier checkpoint's entries. Descriptive fields (goal, decisions, open questions, the
prose summary) may come from the model; they are merged too, newest first, within a cap.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

# Open questions get answered, so only the most recent are carried; every other list is a
# union, and only the descriptive ones may be shortened when the checkpoint outgrows its cap.
DESCRIPTIVE_CAP = 6
SUMMARY_MAX_CHARS = 900


@dataclass
class Checkpoint:
    """Everything the model needs to continue after older turns leave the context."""

    goal: str = ""
    decisions: list[str] = field(default_factory=list)
    commitments: list[str] = field(default_factory=list)
    corrections: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    pending_tasks: list[str] = field(default_factory=list)
    approvals: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    summary: str = ""
    # The first and last event ids the checkpoint stands for; each is recoverable by id.
    covers: list[str] = field(default_factory=list)
    turns: int = 0

    PROTECTED = (
        "pending_tasks",
        "approvals",
        "corrections",
        "commitments",
        "facts",
        "notes",
        "ids",
    )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | str | None) -> Checkpoint:
        if not data:
            return cls()
        raw: dict[str, Any] = json.loads(data) if isinstance(data, str) else dict(data)
        known = {k: v for k, v in raw.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def protected_items(self) -> list[str]:
        """Every protected entry: each must appear verbatim in the context after compaction."""
        out: list[str] = []
        for name in self.PROTECTED:
            out.extend(getattr(self, name))
        return out

    def is_empty(self) -> bool:
        return not (self.summary or self.goal or self.protected_items() or self.decisions)


def _union(old: list[str], new: list[str]) -> list[str]:
    """Old entries first (stable order keeps the rendered prefix stable), new ones appended."""
    seen = set(old)
    out = list(old)
    for item in new:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _recent(old: list[str], new: list[str], cap: int) -> list[str]:
    merged = _union(old, new)
    return merged[-cap:]


def merge(earlier: Checkpoint, later: Checkpoint) -> Checkpoint:
    """Combine two checkpoints so no protected entry of either is dropped.

    Protected lists are unions; the goal is the later one when it has one; descriptive lists
    keep the most recent entries; the summaries are joined and trimmed from the oldest end.
    """
    summary = later.summary.strip()
    if earlier.summary.strip() and earlier.summary.strip() not in summary:
        summary = f"{earlier.summary.strip()} {summary}".strip()
    if len(summary) > SUMMARY_MAX_CHARS:
        summary = "…" + summary[-(SUMMARY_MAX_CHARS - 1) :]
    covers = (earlier.covers or later.covers)[:1] + (later.covers or earlier.covers)[-1:]
    return Checkpoint(
        goal=later.goal or earlier.goal,
        decisions=_union(earlier.decisions, later.decisions),
        commitments=_union(earlier.commitments, later.commitments),
        corrections=_union(earlier.corrections, later.corrections),
        facts=_union(earlier.facts, later.facts),
        open_questions=_recent(earlier.open_questions, later.open_questions, DESCRIPTIVE_CAP),
        pending_tasks=_union(earlier.pending_tasks, later.pending_tasks),
        approvals=_union(earlier.approvals, later.approvals),
        notes=_union(earlier.notes, later.notes),
        ids=_union(earlier.ids, later.ids),
        summary=summary,
        covers=covers,
        turns=earlier.turns + later.turns,
    )


_LABELS = (
    ("goal", "Goal"),
    ("decisions", "Decisions"),
    ("commitments", "Commitments"),
    ("corrections", "User corrections (these override anything older)"),
    ("facts", "What the user told me"),
    ("pending_tasks", "Pending tasks"),
    ("approvals", "Approvals (exact parameters)"),
    ("notes", "Notes"),
    ("open_questions", "Open questions"),
    ("ids", "Ids referenced"),
)


def render(cp: Checkpoint, *, title: str = "Checkpoint of earlier conversation") -> str:
    """The checkpoint as the model reads it: one labelled line per entry, exact strings kept."""
    lines = [f"[{title}"]
    if cp.covers:
        first, last = cp.covers[0], cp.covers[-1]
        lines[0] += f": events {first}–{last}, {cp.turns} turns; full text by id via get_context"
    lines[0] += "]"
    for name, label in _LABELS:
        value = getattr(cp, name)
        if not value:
            continue
        if isinstance(value, str):
            lines.append(f"{label}: {value}")
        elif name == "ids":
            lines.append(f"{label}: {', '.join(value)}")
        else:
            lines.append(f"{label}:")
            lines.extend(f"- {v}" for v in value)
    if cp.summary:
        lines.append(f"Summary: {cp.summary}")
    return "\n".join(lines)


def missing_items(context_text: str, required: list[str]) -> list[str]:
    """Protected entries that do not appear verbatim in the rendered context."""
    return [item for item in required if item and item not in context_text]
