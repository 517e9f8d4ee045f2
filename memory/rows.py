"""Typed rows read from the store, and the functions that keep ids and timestamps uniform.

Every record has a short, stable, prefixed id (`task-12`, `ev-340`) built on an SQLite
AUTOINCREMENT key, so ids are never reused even after a delete, and they are short enough to
speak, type on a command line and quote in a compaction placeholder. Timestamps are UTC ISO
8601 strings in one fixed format, so string order is time order inside SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

Pending = Literal["none", "user", "assistant", "external"]
TaskStatus = Literal["open", "blocked", "done"]
ApprovalStatus = Literal["pending", "approved", "declined", "expired", "executed", "failed"]

PENDING_VALUES: tuple[str, ...] = ("none", "user", "assistant", "external")
TASK_STATUSES: tuple[str, ...] = ("open", "blocked", "done")
APPROVAL_STATUSES: tuple[str, ...] = (
    "pending",
    "approved",
    "declined",
    "expired",
    "executed",
    "failed",
)

PREFIXES = {
    "sessions": "sess",
    "events": "ev",
    "notes": "note",
    "tasks": "task",
    "reminders": "rem",
    "approvals": "appr",
    "checkpoints": "ckpt",
    "moods": "mood",
}


def make_id(table: str, n: int) -> str:
    return f"{PREFIXES[table]}-{n}"


def parse_id(table: str, value: str | int) -> int:
    """The integer key inside a public id. Accepts `task-12`, `12` or 12; raises ValueError."""
    if isinstance(value, int):
        return value
    text = value.strip()
    prefix = PREFIXES[table] + "-"
    if text.startswith(prefix):
        text = text[len(prefix) :]
    if not text.isdigit():
        raise ValueError(f"'{value}' is not a {table[:-1]} id (expected like {prefix}12)")
    return int(text)


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_iso(value: datetime) -> str:
    """One fixed UTC format; naive datetimes are taken as local time."""
    if value.tzinfo is None:
        value = value.astimezone()
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def from_iso(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.astimezone()
    return parsed.astimezone(UTC)


def parse_when(value: str | datetime | None) -> str | None:
    """A user-supplied time (ISO date or datetime, or a datetime) as the stored UTC string.

    Times without a zone are local time. A bare date is local midnight, the start of that
    day, so "due 2026-09-01" shows up in that day's schedule.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return to_iso(value)
    try:
        return to_iso(datetime.fromisoformat(value.strip()))
    except ValueError as exc:
        raise ValueError(
            f"'{value}' is not an ISO date or time (expected like 2026-09-01 or 2026-09-01T15:30)"
        ) from exc


@dataclass(frozen=True)
class SessionRow:
    id: str
    started_at: str
    ended_at: str | None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EventRow:
    id: str
    session_id: str
    turn_id: str
    kind: str
    role: str
    name: str
    call_id: str
    content: str
    tokens: int | None
    created_at: str
    meta: dict[str, Any] = field(default_factory=dict)


Sensitivity = Literal["normal", "private"]
SENSITIVITIES: tuple[str, ...] = ("normal", "private")


@dataclass(frozen=True)
class NoteRow:
    """A note and its provenance.

    `version` counts the corrections behind it (a note that supersedes a version-1 note is
    version 2); `confidence` is how sure Annie is that it still holds (lowered while it
    contradicts another note); `sensitivity` "private" keeps it out of any prompt that a tool
    can send off the machine; `expires_at` is when it stops being true (None: no end);
    `updated_at` is the record's time (written, or its provenance last changed), the note's
    freshness; `source_event` is the event whose words it came from; `contradicts` names a
    current note it disagrees with, until the user says which stands."""

    id: str
    kind: str
    source: str
    text: str
    created_at: str
    # The note that corrected this one ("" while it is current).
    superseded_by: str = ""
    version: int = 1
    confidence: float = 1.0
    sensitivity: str = "normal"
    expires_at: str | None = None
    updated_at: str = ""
    source_event: str = ""
    contradicts: str = ""

    @property
    def private(self) -> bool:
        return self.sensitivity == "private"

    def expired(self, now: datetime | None = None) -> bool:
        if not self.expires_at:
            return False
        return from_iso(self.expires_at) <= (now or utc_now()).astimezone(UTC)


# The columns a NoteRow is read from (every reader of the notes table selects these).
# Rows of the notes table that are not notes someone wrote down: an episode is one turn of a
# conversation (what the user said, what Annie answered), a summary one session's summary.
EPISODE_KINDS = ("episode", "summary")

NOTE_COLUMNS = (
    "n, kind, source, text, created_at, superseded_by, version, confidence, sensitivity,"
    " expires_at, updated_at, source_event, contradicts"
)


def note_row(row: Any) -> NoteRow:
    """A NoteRow from a notes-table row selected with NOTE_COLUMNS."""
    by, against = row["superseded_by"], row["contradicts"]
    return NoteRow(
        make_id("notes", row["n"]),
        row["kind"],
        row["source"],
        row["text"],
        row["created_at"],
        make_id("notes", by) if by is not None else "",
        version=int(row["version"]),
        confidence=float(row["confidence"]),
        sensitivity=row["sensitivity"],
        expires_at=row["expires_at"],
        updated_at=row["updated_at"] or row["created_at"],
        source_event=row["source_event"],
        contradicts=make_id("notes", against) if against is not None else "",
    )


@dataclass(frozen=True)
class MoodRow:
    """What the user said about how they feel, in their own words, and when.

    `feeling` is the predicate as said ("exhausted", "stressed about the move"); `verb` is how
    it was said ("be": "I'm exhausted"; "feel": "I feel great"), so it can be read back."""

    id: str
    session_id: str
    event_id: str
    feeling: str
    verb: str
    words: str
    said_at: str


@dataclass(frozen=True)
class Hit:
    """One search result; `score` is the fused (or single-method) score, higher is better."""

    id: str
    source: str
    kind: str
    text: str
    timestamp: str
    score: float


@dataclass(frozen=True)
class TaskRow:
    id: str
    title: str
    status: str
    pending: str
    due: str | None
    source: str
    created_at: str
    updated_at: str


REMINDER_STATUSES: tuple[str, ...] = ("scheduled", "fired", "announced", "done", "cancelled")
# Not yet finished: waiting for its time, due and not yet said, or said and not yet done.
OPEN_REMINDER_STATUSES: tuple[str, ...] = ("scheduled", "fired", "announced")


@dataclass(frozen=True)
class ReminderRow:
    """A reminder, or a timer (a reminder with a duration). `fired_at`: when it fell due;
    `announced_at` / `announced_in`: when and in which session Annie said it."""

    id: str
    text: str
    due: str
    status: str
    created_at: str
    kind: str = "reminder"
    duration_s: float | None = None
    fired_at: str | None = None
    announced_at: str | None = None
    announced_in: str = ""
    updated_at: str = ""


@dataclass(frozen=True)
class ApprovalRow:
    id: str
    tool: str
    params: dict[str, Any]
    requester: str
    status: str
    created_at: str
    expires_at: str
    resolved_at: str | None
    result: str
    # What it touches, in words, as the user is asked about it (empty for older rows).
    target: str = ""

    def expired(self, now: datetime | None = None) -> bool:
        return from_iso(self.expires_at) <= (now or utc_now()).astimezone(UTC)


@dataclass(frozen=True)
class CheckpointRow:
    id: str
    session_id: str
    tier: int
    data: dict[str, Any]
    summary: str
    tail_event_ids: list[str]
    created_at: str


@dataclass(frozen=True)
class ScheduledItem:
    """A reminder or a task with a due time, as the work index shows it."""

    id: str
    text: str
    due: str
    kind: Literal["reminder", "task"]


@dataclass(frozen=True)
class WorkIndex:
    """The compact current-state projection that the main chat and the status surface read.

    Lists are capped (`limit` per lane); the counts are exact.
    """

    active: list[TaskRow]
    active_count: int
    blocked: list[TaskRow]
    blocked_count: int
    pending_user: list[TaskRow]
    pending_user_count: int
    pending_others: list[TaskRow]
    pending_others_count: int
    next_scheduled: list[ScheduledItem]
    # When this projection was read, and when the records under it last changed.
    as_of: str
    updated_at: str | None

    def source_ids(self) -> list[str]:
        ids: list[str] = []
        for rows in (self.active, self.blocked, self.pending_user, self.pending_others):
            ids.extend(r.id for r in rows if r.id not in ids)
        ids.extend(s.id for s in self.next_scheduled if s.id not in ids)
        return ids
