"""The structured checkpoint that tier 2 writes and tier 3 persists, and how checkpoints merge.

A checkpoint has two kinds of fields. Protected fields (pending and blocked tasks, approvals
with their exact parameters, user corrections, commitments with when they were made and fall
due, stated facts, the user's plan and blockers, failed tool calls with their exact arguments
and error, exact ids) are filled from the typed tables and the event log, never from model
prose, and a later checkpoint keeps an earlier checkpoint's entries: all of them, except that
only the newest plans and blockers are carried and a failure ends when the same call succeeds.
The attempts (every call tried, with its outcome) are carried too, the newest within a cap.
Descriptive fields (goal, decisions, open questions, the prose summary) may come from the
model; they are merged too, newest first, within a cap.

Rendered, each entry is shown once: a commitment that a live task line of the same checkpoint
carries (a pending or blocked task of the same title) is shown on that line, with when it was
made and falls due, and an id such a line (or an approval's) names is not listed again. Both
come back under their own headings in the first checkpoint whose live lines no longer carry
them (the task was done or deleted), since they are stored whatever is shown.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from compaction.attempts import Attempt, merge_attempts, merge_failures, shown_time

# Open questions get answered, so only the most recent are carried; every other list is a
# union, and only the descriptive ones may be shortened when the checkpoint outgrows its cap.
DESCRIPTIVE_CAP = 6
SUMMARY_MAX_CHARS = 900
# A newer plan or blocker usually replaces an older one: only the newest are carried. Calls
# that worked are in the log by id, so only the newest attempts are; failures are all kept.
PLAN_CAP = 3
BLOCKERS_CAP = 5
ATTEMPTS_CAP = 6
# An ISO date-time cut at its first colon ("2026-09-01T23" of "2026-09-01T23:00"): the id rule
# reads it as a code, but it is a time, and a due time is kept with its commitment.
_TIME_FRAGMENT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{1,6}Z?")
# A live task line as `compaction.tables` writes it: "<id> <title> (waiting on <who>)", or
# "<id> <title> (blocked)".
_TASK_LINE = re.compile(r"(\S+) (.+) \((?:waiting on [^()]*|blocked)\)")


def is_time_fragment(value: str) -> bool:
    """Whether `value` is a piece of an ISO date-time rather than an id."""
    return _TIME_FRAGMENT.fullmatch(value) is not None


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
    # The user's own words: the steps they set out, and what they said holds them up.
    plan: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    # Tasks the work table marks blocked: live, re-read at every compaction like pending ones.
    blocked_tasks: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    failures: list[Attempt] = field(default_factory=list)
    # Commitment text -> {"said": ISO time it was made, "due": the time it falls due}.
    commitment_times: dict[str, dict[str, str]] = field(default_factory=dict)
    summary: str = ""
    # The first and last event ids the checkpoint stands for; each is recoverable by id.
    covers: list[str] = field(default_factory=list)
    turns: int = 0

    PROTECTED = (
        "pending_tasks",
        "blocked_tasks",
        "approvals",
        "corrections",
        "commitments",
        "facts",
        "plan",
        "blockers",
        "notes",
        "ids",
    )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | str | None) -> Checkpoint:
        """A stored checkpoint; unknown fields are ignored and missing ones take their
        defaults, so a checkpoint written before a field existed still loads."""
        if not data:
            return cls()
        raw: dict[str, Any] = json.loads(data) if isinstance(data, str) else dict(data)
        known = {k: v for k, v in raw.items() if k in cls.__dataclass_fields__}
        for name in ("attempts", "failures"):
            found = (Attempt.from_json(a) for a in known.get(name) or [])
            known[name] = [a for a in found if a is not None]
        # Checkpoints stored before time fragments were told from ids may hold some.
        known["ids"] = [str(i) for i in known.get("ids") or [] if not is_time_fragment(str(i))]
        times = known.get("commitment_times")
        known["commitment_times"] = {
            str(k): {str(a): str(b) for a, b in v.items()}
            for k, v in (times.items() if isinstance(times, dict) else [])
            if isinstance(v, dict)
        }
        return cls(**known)

    def protected_items(self) -> list[str]:
        """Every protected entry: each must appear verbatim in the context after compaction."""
        out: list[str] = []
        for name in self.PROTECTED:
            out.extend(getattr(self, name))
        out.extend(f.failure_line() for f in self.failures)
        return out

    def commitment_line(self, text: str) -> str:
        """A commitment with when it was made and when it falls due, where known."""
        when = self.commitment_times.get(text, {})
        said, due = shown_time(when.get("said", "")), shown_time(when.get("due", ""))
        parts = [f"said {said}" if said else "", f"due {due}" if due else ""]
        shown = "; ".join(p for p in parts if p)
        return f"{text} ({shown})" if shown else text

    def is_empty(self) -> bool:
        return not (
            self.summary or self.goal or self.protected_items() or self.decisions or self.attempts
        )


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


def merge_times(
    earlier: dict[str, dict[str, str]], later: dict[str, dict[str, str]]
) -> dict[str, dict[str, str]]:
    """A commitment keeps the time it was first made; a due time stated later replaces an
    earlier one (the user moved it), and one stated only earlier is kept."""
    out = {k: dict(v) for k, v in earlier.items()}
    for text, when in later.items():
        old = out.setdefault(text, {})
        if when.get("said") and not old.get("said"):
            old["said"] = when["said"]
        if when.get("due"):
            old["due"] = when["due"]
    return {k: v for k, v in out.items() if v}


def merge(earlier: Checkpoint, later: Checkpoint) -> Checkpoint:
    """Combine two checkpoints so no protected entry of either is dropped.

    Protected lists are unions (the plan and blockers keep their newest entries; a failure the
    later span saw succeed is settled); commitments keep their times; the goal is the later one
    when it has one; descriptive lists keep the most recent entries; the summaries are joined
    and trimmed from the oldest end.
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
        plan=_recent(earlier.plan, later.plan, PLAN_CAP),
        blockers=_recent(earlier.blockers, later.blockers, BLOCKERS_CAP),
        blocked_tasks=_union(earlier.blocked_tasks, later.blocked_tasks),
        attempts=merge_attempts(earlier.attempts, later.attempts, ATTEMPTS_CAP),
        failures=merge_failures(earlier.failures, later.failures, later.attempts),
        commitment_times=merge_times(earlier.commitment_times, later.commitment_times),
        summary=summary,
        covers=covers,
        turns=earlier.turns + later.turns,
    )


FAILURES_LABEL = (
    "Tool calls that failed (exact arguments and error; do not repeat one unchanged: change "
    "it, try another way, or tell the user)"
)
_LABELS = (
    ("goal", "Goal"),
    ("plan", "The user's plan"),
    ("decisions", "Decisions"),
    ("commitments", "Commitments"),
    ("corrections", "User corrections (these override anything older)"),
    ("facts", "What the user told me"),
    ("pending_tasks", "Pending tasks"),
    ("blockers", "Blocked (the user's words)"),
    ("blocked_tasks", "Blocked tasks"),
    ("approvals", "Approvals (exact parameters)"),
    ("notes", "Notes"),
    ("failures", FAILURES_LABEL),
    ("attempts", "Tool calls tried (exact arguments, outcome, result id)"),
    ("open_questions", "Open questions"),
    ("ids", "Ids referenced"),
)


def carried_commitments(cp: Checkpoint) -> dict[str, str]:
    """The commitments a live task line of `cp` shows already: title -> that line.

    The task's title is the commitment's text (`compaction.protected` takes a task's commitment
    from the title it was created with), so the line holds the exact string the guard looks for.
    """
    commitments = set(cp.commitments)
    out: dict[str, str] = {}
    for line in [*cp.pending_tasks, *cp.blocked_tasks]:
        found = _TASK_LINE.fullmatch(line)
        if found and found.group(2) in commitments and found.group(2) not in out:
            out[found.group(2)] = line
    return out


def _shown_elsewhere(cp: Checkpoint) -> set[str]:
    """The ids that a live line of `cp` (a pending or blocked task, an approval) names."""
    live = "\n".join([*cp.pending_tasks, *cp.blocked_tasks, *cp.approvals])
    return {i for i in cp.ids if re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", live)}


def render(cp: Checkpoint, *, title: str = "Checkpoint of earlier conversation") -> str:
    """The checkpoint as the model reads it: one labelled line per entry, exact strings kept,
    each shown once (a commitment on its live task's line, an id on its record's)."""
    carried = carried_commitments(cp)
    on_lines = {line: text for text, line in carried.items()}
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
            skip = _shown_elsewhere(cp)
            if shown_ids := [i for i in value if i not in skip]:
                lines.append(f"{label}: {', '.join(shown_ids)}")
        elif name in ("failures", "attempts"):
            shown = [_attempt_text(a, name) for a in value]
            if shown := [t for t in shown if t]:
                lines.append(f"{label}:")
                lines.extend(f"- {t}" for t in shown)
        elif name == "commitments":
            lines.extend(_commitment_lines(cp, label, [c for c in value if c not in carried]))
        elif name in ("pending_tasks", "blocked_tasks"):
            lines.append(f"{label}:")
            lines.extend(f"- {_task_with_times(cp, v, on_lines.get(v))}" for v in value)
        else:
            lines.append(f"{label}:")
            lines.extend(f"- {v}" for v in value)
    if cp.summary:
        lines.append(f"Summary: {cp.summary}")
    return "\n".join(lines)


def _task_with_times(cp: Checkpoint, line: str, commitment: str | None) -> str:
    """A live task line, with when the commitment it carries was made and falls due."""
    if commitment is None:
        return line
    when = cp.commitment_times.get(commitment, {})
    said, due = shown_time(when.get("said", "")), shown_time(when.get("due", ""))
    shown = ", ".join(p for p in (f"said {said}" if said else "", f"due {due}" if due else "") if p)
    return f"{line}: {shown}" if shown else line


def _commitment_lines(cp: Checkpoint, label: str, commitments: list[str]) -> list[str]:
    """The commitments under one heading per day they were made on, each with the minute it
    was made where that differs from the line before: a long session's hundreds of
    commitments would otherwise repeat the same date on every line (a dozen tokens each)."""
    lines: list[str] = []
    day = minute = None
    for text in commitments:
        when = cp.commitment_times.get(text, {})
        said, due = shown_time(when.get("said", "")), shown_time(when.get("due", ""))
        said_day, _, said_minute = said.partition(" ")
        if not lines or said_day != day:
            day, minute = said_day, None
            lines.append(f"{label} (made on {said_day}):" if said_day else f"{label}:")
        parts = [f"at {said_minute}" if said_minute and said_minute != minute else ""]
        parts.append(f"due {due}" if due else "")
        minute = said_minute or minute
        shown = "; ".join(p for p in parts if p)
        lines.append(f"- {text} ({shown})" if shown else f"- {text}")
    return lines


def _attempt_text(a: Attempt, field_name: str) -> str:
    """A failure with its error; an attempt that failed is shown once, with the failures."""
    if field_name == "failures":
        return a.failure_line()
    return "" if a.failed else a.attempt_line()


def missing_items(context_text: str, required: list[str]) -> list[str]:
    """Protected entries that do not appear verbatim in the rendered context."""
    return [item for item in required if item and item not in context_text]
