"""The next session's memory briefing: what was going on last time, within the briefing budget.

Two sections, returned apart so no caller parses text back: the briefing proper (the last
conversation, pending work, commitments, facts) and the notes (recent notes the user saved).

It reads the previous session's tier-3 checkpoint (written on disconnect or clean shutdown).
When there is none, because the process was killed mid-session, it rebuilds the same fields
from the event log, which is written before anything else happens, so no completed turn is
lost. Open tasks, waiting approvals and recent notes come from their typed tables. Lines are
added in order of importance until the token budget is spent, so the most important survive
a small window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from compaction.checkpoint import Checkpoint, merge
from compaction.protected import LogEntry, entry_from_event, extract, first_request
from memory.approvals import render
from memory.rows import SessionRow
from memory.store import Store

TAIL_ENTRIES = 4
NOTES_LIMIT = 5
LINE_CHARS = 240
MODEL_KINDS = ("user", "assistant", "state_answer", "tool_call", "tool_result")


@dataclass
class Briefing:
    """The briefing's two sections, what they cost, and where every line came from."""

    text: str
    tokens: int
    # The notes section: one note text per entry, without a marker.
    notes: list[str] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)
    session_id: str = ""
    checkpoint_id: str = ""
    rebuilt_from_log: bool = False
    dropped: int = 0


@dataclass
class PreviousSession:
    """The last session's state as the loader reconstructed it."""

    session: SessionRow | None
    checkpoint: Checkpoint
    tail: list[LogEntry]
    checkpoint_id: str = ""
    rebuilt_from_log: bool = False


def _clip(text: str, chars: int = LINE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


def previous_session(
    store: Store, current_session_id: str | None = None, protects: Mapping[str, str] | None = None
) -> PreviousSession:
    """The latest finished (or crashed) session other than the current one.

    `protects` (tool name -> protected kind) reads a crashed session's tool calls."""
    prev = store.sessions.last(exclude=current_session_id)
    if prev is None:
        row = store.checkpoints.latest()
        if row is None:
            return PreviousSession(None, Checkpoint(), [])
        return PreviousSession(None, Checkpoint.from_json(row.data), [], row.id)
    row = store.checkpoints.latest(prev.id)
    if row is not None and row.tier == 3:
        cp = Checkpoint.from_json(row.data)
        tail = _tail_from_ids(store, row.tail_event_ids)
        return PreviousSession(prev, cp, tail, row.id)
    # No tier-3 record: the session did not close cleanly. The event log is the source.
    events = store.events.find(prev.id, kinds=MODEL_KINDS)
    entries = [entry_from_event(e.id, e.kind, e.content, e.name) for e in events]
    rebuilt = extract(entries, protects)
    rebuilt.goal = first_request(entries)
    if entries:
        rebuilt.covers = [entries[0].id, entries[-1].id]
    rebuilt.turns = sum(1 for e in entries if e.kind == "user")
    earlier = Checkpoint.from_json(row.data) if row is not None else Checkpoint()
    if row is not None and not rebuilt.summary:
        rebuilt.summary = row.summary or earlier.summary
    cp = merge(earlier, rebuilt) if row is not None else rebuilt
    if not events and row is None:
        # An empty session (opened and closed at once): fall back to the latest checkpoint.
        older = store.checkpoints.latest()
        if older is not None:
            return PreviousSession(prev, Checkpoint.from_json(older.data), [], older.id)
    tail = [e for e in entries if e.kind in ("user", "assistant") and e.text.strip()]
    return PreviousSession(prev, cp, tail[-TAIL_ENTRIES:], row.id if row is not None else "", True)


def _tail_from_ids(store: Store, ids: list[str]) -> list[LogEntry]:
    out: list[LogEntry] = []
    for event_id in ids:
        ev = store.events.get(event_id)
        if ev is not None and ev.kind in ("user", "assistant") and ev.content.strip():
            out.append(entry_from_event(ev.id, ev.kind, ev.content, ev.name))
    return out[-TAIL_ENTRIES:]


def _recent_notes(store: Store, limit: int) -> list[tuple[str, str]]:
    return [(n.id, n.text) for n in store.notes.recent(limit=limit)]


@dataclass(frozen=True)
class Line:
    """One candidate line: its section ("briefing" or "notes"), text and source ids."""

    text: str
    ids: list[str]
    section: str = "briefing"


def briefing_lines(store: Store, prev: PreviousSession) -> list[Line]:
    """Candidate lines with their source ids, most important first."""
    cp = prev.checkpoint
    lines: list[Line] = []
    src = [prev.checkpoint_id] if prev.checkpoint_id else []
    if prev.session is not None:
        how = "ended unexpectedly" if prev.rebuilt_from_log else "ended"
        lines.append(Line(f"Last conversation ({prev.session.started_at[:16]} UTC, {how}):", src))
    elif not cp.is_empty():
        lines.append(Line("Earlier conversation:", src))
    if cp.summary:
        lines.append(Line(f"Summary: {_clip(cp.summary, 400)}", src))
    if cp.goal:
        lines.append(Line(f"Goal: {_clip(cp.goal)}", src))
    tail = prev.tail
    unanswered = tail[-1] if tail and tail[-1].kind == "user" else None
    for entry in (tail[:-1] if unanswered else tail)[-2:]:
        who = "User" if entry.kind == "user" else "Annie"
        lines.append(Line(f"{who} said last: {_clip(entry.text, 160)}", [entry.id]))
    if unanswered is not None:
        lines.append(
            Line(f"Unanswered when it ended: {_clip(unanswered.text, 160)}", [unanswered.id])
        )
    for c in cp.corrections:
        lines.append(Line(f"Correction: {c}", src))
    for task in store.tasks.pending(limit=10):
        lines.append(Line(f"Pending ({task.pending}): {task.id} {task.title}", [task.id]))
    for appr in store.approvals.pending():
        lines.append(Line(render(appr), [appr.id]))
    for c in cp.commitments:
        lines.append(Line(f"Promised: {c}", src))
    for f in cp.facts:
        lines.append(Line(f"User said: {f}", src))
    for note_id, text in _recent_notes(store, NOTES_LIMIT):
        lines.append(Line(_clip(text), [note_id], "notes"))
    for note in cp.notes:
        lines.append(Line(note, src, "notes"))
    for q in cp.open_questions:
        lines.append(Line(f"Open question: {q}", src))
    for d in cp.decisions:
        lines.append(Line(f"Decided: {d}", src))
    if cp.ids:
        lines.append(Line(f"Ids mentioned: {', '.join(cp.ids)}", src))
    return lines


def notes_block(notes: list[str]) -> str:
    """The notes section as the system prompt shows it."""
    return "\n".join(f"- {n}" for n in notes)


def build_briefing(
    store: Store,
    *,
    budget: int,
    count: Callable[[str], int],
    current_session_id: str | None = None,
    protects: Mapping[str, str] | None = None,
) -> Briefing:
    """The memory briefing for a new session, at most `budget` tokens as `count` measures."""
    prev = previous_session(store, current_session_id, protects)
    kept: list[str] = []
    notes: list[str] = []
    sources: list[str] = []
    dropped = 0
    seen: set[tuple[str, str]] = set()
    for line in briefing_lines(store, prev):
        if (line.section, line.text) in seen:
            continue
        seen.add((line.section, line.text))
        is_note = line.section == "notes"
        more_kept = kept if is_note else [*kept, line.text]
        more_notes = [*notes, line.text] if is_note else notes
        # Both sections share the budget, measured as the prompt shows them.
        if count("\n".join(more_kept) + "\n" + notes_block(more_notes)) > budget:
            dropped += 1
            continue
        kept, notes = more_kept, more_notes
        sources.extend(i for i in line.ids if i and i not in sources)
    text = "\n".join(kept)
    shown = "\n".join(x for x in (text, notes_block(notes)) if x)
    return Briefing(
        text=text,
        tokens=count(shown) if shown else 0,
        notes=notes,
        source_ids=sources,
        session_id=prev.session.id if prev.session else "",
        checkpoint_id=prev.checkpoint_id,
        rebuilt_from_log=prev.rebuilt_from_log,
        dropped=dropped,
    )
