"""The next session's memory briefing: what was going on in recent sessions, within its budget.

Two sections, returned apart so no caller parses text back: the briefing proper (recent
conversations, pending work, commitments with their times, facts, the user's plan and blockers,
tool calls that failed and those that worked) and the notes (recent notes the user saved).

It reads the recent sessions that had content, newest first (`RECENT_SESSIONS` of them): a
session opened and closed without a word is skipped, so it never displaces one that had a
conversation. For each, the latest checkpoint stands for it: the tier-3 record written on
disconnect or clean shutdown, or, when there is none because the process was killed mid-
session, the same fields rebuilt from the event log (written before anything else happens, so
no completed turn is lost), merged with any tier-2 checkpoint it reached. Open tasks, waiting
approvals and recent notes come from their typed tables; a superseded note is never briefed.
What is coming up today and tomorrow (reminders, and events in the user's own calendar) is
read the same way, so the model knows the day ahead without a tool call.
Lines are chosen in order of importance until the token budget is spent, so the most important
survive a small window, and shown grouped by session, newest first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from compaction.checkpoint import Checkpoint, merge
from compaction.protected import LogEntry, entry_from_row, extract, first_request
from memory.approvals import render
from memory.rows import SessionRow
from memory.store import Store

if TYPE_CHECKING:
    from memory.calendar import Calendar

TAIL_ENTRIES = 4
NOTES_LIMIT = 5
# Reminders and calendar events briefed from today and tomorrow.
COMING_LIMIT = 8
LINE_CHARS = 240
# How many earlier conversations the briefing draws on; the budget decides how much of each.
RECENT_SESSIONS = 4
MODEL_KINDS = ("user", "assistant", "state_answer", "tool_call", "tool_result")

# Importance ranks: lower is kept first. Within a rank, lines keep their display order. The
# newest session's last exchange comes before everything: it is what the user will pick up.
_LAST, _NEWEST, _LIVE, _EARLIER, _PROTECTED, _NOTES, _DESCRIPTIVE = range(7)
# Event kinds that read as one side of the conversation (a state answer is Annie's answer).
_SPOKEN = ("user", "assistant", "state_answer")


@dataclass(frozen=True)
class Source:
    """One session the briefing drew on, and the record that stood for it."""

    session_id: str
    started_at: str
    checkpoint_id: str
    rebuilt_from_log: bool
    lines: int = 0


@dataclass
class Briefing:
    """The briefing's two sections, what they cost, and where every line came from."""

    text: str
    tokens: int
    # The notes section: one note text per entry, without a marker.
    notes: list[str] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)
    # The newest session drawn on (the one "Last conversation" is about).
    session_id: str = ""
    checkpoint_id: str = ""
    rebuilt_from_log: bool = False
    dropped: int = 0
    # Every session drawn on, newest first, with how many of its lines were kept.
    sessions: list[Source] = field(default_factory=list)


@dataclass
class PreviousSession:
    """One earlier session's state as the loader reconstructed it."""

    session: SessionRow | None
    checkpoint: Checkpoint
    tail: list[LogEntry]
    checkpoint_id: str = ""
    rebuilt_from_log: bool = False


def _clip(text: str, chars: int = LINE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


def recent_sessions(
    store: Store,
    current_session_id: str | None = None,
    protects: Mapping[str, str] | None = None,
    limit: int = RECENT_SESSIONS,
) -> list[PreviousSession]:
    """The latest `limit` sessions with content other than the current one, newest first.

    `protects` (tool name -> protected kind) reads a crashed session's tool calls. With no
    such session, a checkpoint that belongs to no session (an import) stands in."""
    rows = store.sessions.with_content(MODEL_KINDS, exclude=current_session_id, limit=limit)
    if rows:
        return [_load(store, row, protects) for row in rows]
    orphan = store.checkpoints.latest()
    if orphan is None or orphan.session_id:
        return []
    return [PreviousSession(None, Checkpoint.from_json(orphan.data), [], orphan.id)]


def previous_session(
    store: Store, current_session_id: str | None = None, protects: Mapping[str, str] | None = None
) -> PreviousSession:
    """The latest finished (or crashed) session with content, other than the current one."""
    found = recent_sessions(store, current_session_id, protects, limit=1)
    return found[0] if found else PreviousSession(None, Checkpoint(), [])


def _load(store: Store, prev: SessionRow, protects: Mapping[str, str] | None) -> PreviousSession:
    row = store.checkpoints.latest(prev.id)
    if row is not None and row.tier == 3:
        cp = Checkpoint.from_json(row.data)
        tail = _tail_from_ids(store, row.tail_event_ids)
        return PreviousSession(prev, cp, tail, row.id)
    # No tier-3 record: the session did not close cleanly. The event log is the source.
    events = store.events.find(prev.id, kinds=MODEL_KINDS)
    entries = [entry_from_row(e) for e in events]
    rebuilt = extract(entries, protects)
    rebuilt.goal = first_request(entries)
    if entries:
        rebuilt.covers = [entries[0].id, entries[-1].id]
    rebuilt.turns = sum(1 for e in entries if e.kind == "user")
    cp = rebuilt
    if row is not None:
        earlier = Checkpoint.from_json(row.data)
        rebuilt.summary = rebuilt.summary or row.summary or earlier.summary
        cp = merge(earlier, rebuilt)
    # entry_from_row has already made state answers "assistant".
    tail = [e for e in entries if e.kind in ("user", "assistant") and e.text.strip()]
    return PreviousSession(prev, cp, tail[-TAIL_ENTRIES:], row.id if row is not None else "", True)


def _tail_from_ids(store: Store, ids: list[str]) -> list[LogEntry]:
    out: list[LogEntry] = []
    for event_id in ids:
        ev = store.events.get(event_id)
        if ev is not None and ev.kind in _SPOKEN and ev.content.strip():
            out.append(entry_from_row(ev))
    return out[-TAIL_ENTRIES:]


@dataclass(frozen=True)
class Line:
    """One candidate line: its section ("briefing" or "notes"), text and source ids.

    `rank` orders the choice (lower first). `origin` is the session the line is about ("" for
    the live tables); a session's details are shown only under its header line, so a reader
    always knows which conversation a line came from."""

    text: str
    ids: list[str]
    section: str = "briefing"
    rank: int = _LIVE
    origin: str = ""
    header: bool = False


def _session_lines(prev: PreviousSession, key: str, newest: bool) -> list[Line]:
    """One session's lines in display order: header, what it was about, then its details."""
    cp = prev.checkpoint
    # A session rebuilt from its log alone has no checkpoint record: the session is the source.
    src = [prev.checkpoint_id or (prev.session.id if prev.session else "")]
    top = _NEWEST if newest else _EARLIER
    if prev.session is not None:
        how = "ended unexpectedly" if prev.rebuilt_from_log else "ended"
        when = prev.session.started_at[:16].replace("T", " ")
        header = f"{'Last' if newest else 'Earlier'} conversation ({when} UTC, {how}):"
    else:
        header = "Earlier conversation:"
    lines = [Line(header, src, rank=_LAST if newest else top, origin=key, header=True)]

    def add(text: str, ids: list[str], rank: int, section: str = "briefing") -> None:
        lines.append(Line(text, ids, section, rank, key))

    if cp.summary:
        add(f"Summary: {_clip(cp.summary, 400)}", src, top)
    # A line the summary already quotes costs tokens and says nothing new.
    said = " ".join(cp.summary.split())
    if cp.goal and " ".join(cp.goal.split()) not in said:
        add(f"Goal: {_clip(cp.goal)}", src, top)
        said += " " + " ".join(cp.goal.split())
    if newest:
        asked, answer, unanswered = _last_exchange(prev.tail)
        if asked is not None and " ".join(asked.text.split()) not in said:
            add(f"User said last: {_clip(asked.text, 160)}", [asked.id], top)
        if answer is not None:
            add(f"Annie answered: {_clip(answer.text, 160)}", [answer.id], _LAST)
        if unanswered is not None:
            add(f"Unanswered when it ended: {_clip(unanswered.text, 160)}", [unanswered.id], _LAST)
    for c in cp.corrections:
        add(f"Correction: {c}", src, top if newest else _PROTECTED)
    for c in cp.commitments:
        add(f"Promised: {cp.commitment_line(c)}", src, _PROTECTED)
    for f in cp.facts:
        add(f"User said: {f}", src, _PROTECTED)
    for p in cp.plan:
        add(f"Plan: {p}", src, _PROTECTED)
    for b in cp.blockers:
        add(f"Blocked: {b}", src, _PROTECTED)
    for failed in cp.failures:
        add(f"Failed: {failed.failure_line()}", src, _PROTECTED)
    for note in cp.notes:
        add(note, src, _NOTES, "notes")
    for q in cp.open_questions:
        add(f"Open question: {q}", src, _DESCRIPTIVE)
    for d in cp.decisions:
        add(f"Decided: {d}", src, _DESCRIPTIVE)
    for tried in cp.attempts:
        if not tried.failed:
            add(f"Tried: {tried.attempt_line()}", src, _DESCRIPTIVE)
    if cp.ids:
        add(f"Ids mentioned: {', '.join(cp.ids)}", src, _PROTECTED if newest else _DESCRIPTIVE)
    return lines if len(lines) > 1 else []


def _last_exchange(
    tail: list[LogEntry],
) -> tuple[LogEntry | None, LogEntry | None, LogEntry | None]:
    """The last completed exchange (the user's words, Annie's answer) and a request after it
    that got no answer. Anything of either side may be missing.

    A turn with tool calls logs Annie's words once per round ("Let me look." before the call,
    the answer after it): the answer is the last of them, and the user's words are those
    before the first."""
    unanswered = tail[-1] if tail and tail[-1].kind == "user" else None
    before = tail[:-1] if unanswered is not None else tail
    answer = before[-1] if before and before[-1].kind == "assistant" else None
    while before and before[-1].kind == "assistant":
        before = before[:-1]
    asked = before[-1] if before and before[-1].kind == "user" else None
    return asked, answer, unanswered


def _key(prev: PreviousSession) -> str:
    return prev.session.id if prev.session is not None else prev.checkpoint_id


def briefing_lines(store: Store, sessions: list[PreviousSession]) -> list[Line]:
    """Candidate lines with their source ids, in display order (newest session first)."""
    lines: list[Line] = []
    moods = store.moods.of_sessions([p.session.id for p in sessions if p.session is not None])
    for prev in sessions:
        lines += _session_lines(prev, _key(prev), newest=not lines)
        mood = moods.get(prev.session.id) if prev.session is not None else None
        if mood is not None and lines and lines[-1].origin == _key(prev):
            # The newest mood only, kept like the session's goal (a briefing carries the user's
            # state), and for the model alone: it is never said unprompted.
            when = mood.said_at[:16].replace("T", " ")
            text = f'Only if asked how they feel: they said "{_clip(mood.words, 160)}" ({when} UTC)'
            lines.append(
                Line(
                    text,
                    [mood.id],
                    rank=_NEWEST,
                    origin=_key(prev),
                )
            )
            moods.clear()
    for task in store.tasks.pending(limit=10):
        lines.append(Line(f"Pending ({task.pending}): {task.id} {task.title}", [task.id]))
    for appr in store.approvals.pending():
        lines.append(Line(render(appr), [appr.id]))
    for new, old in store.provenance.disputes():
        text = (
            f"Unsettled: {new.id} '{_clip(new.text, 80)}' contradicts {old.id} "
            f"'{_clip(old.text, 80)}'; ask the user which is right."
        )
        lines.append(Line(text, [new.id, old.id]))
    # Private notes never enter the head, which lasts the session (`context.provenance`).
    for note in store.notes.recent(limit=NOTES_LIMIT):
        if not note.private and not note.expired():
            lines.append(Line(_clip(note.text), [note.id], "notes", _NOTES))
    # A note the user corrected may still be quoted by an old checkpoint: never brief it.
    quoted = [ln.text for ln in lines if ln.section == "notes"]
    stale = store.notes.superseded_among(quoted) | store.provenance.private_texts(quoted)
    return [line for line in lines if not (line.section == "notes" and line.text in stale)]


def coming_lines(store: Store, calendar: Calendar | None, now: datetime) -> list[Line]:
    """Reminders and calendar events from `now` to the end of tomorrow, earliest first; a
    calendar that cannot be read is said as such, never left to read as an empty day."""
    from context.wording import spoken_when
    from memory.calendar import CalendarError

    end = (now + timedelta(days=2)).replace(hour=0, minute=0, second=0, microsecond=0)
    coming: list[tuple[str, str, str]] = [
        (r.due, f"Reminder {spoken_when(r.due, now)}: {_clip(r.text, 120)}", r.id)
        for r in store.reminders.between(now, end, limit=COMING_LIMIT)
    ]
    try:
        events = calendar.between(now, end) if calendar is not None else []
    except CalendarError as exc:
        return [Line(f"The user's calendar could not be read: {exc}", [])] + [
            Line(text, [i]) for _, text, i in coming
        ]
    for e in events[:COMING_LIMIT]:
        when = spoken_when(e.start.isoformat(), now)
        said = when.split(" at ")[0] + ", all day" if e.all_day else when
        coming.append((e.start.isoformat(), f"Calendar {said}: {_clip(e.title, 120)}", e.id))
    coming.sort(key=lambda c: datetime.fromisoformat(c[0]))
    return [Line(text, [i]) for _, text, i in coming[:COMING_LIMIT]]


def notes_block(notes: list[str]) -> str:
    """The notes section as the system prompt shows it."""
    return "\n".join(f"- {n}" for n in notes)


def _shown(lines: list[Line], kept: set[int]) -> tuple[list[str], list[str]]:
    text = [ln.text for i, ln in enumerate(lines) if i in kept and ln.section != "notes"]
    notes = [ln.text for i, ln in enumerate(lines) if i in kept and ln.section == "notes"]
    return text, notes


def _choose(lines: list[Line], budget: int, count: Callable[[str], int]) -> tuple[set[int], int]:
    """The lines kept (by index) and how many were dropped: most important first."""
    kept: set[int] = set()
    seen: set[tuple[str, str]] = set()
    dropped = 0
    for i in sorted(range(len(lines)), key=lambda i: (lines[i].rank, i)):
        line = lines[i]
        if not line.header:
            if (line.section, line.text) in seen:
                continue
            seen.add((line.section, line.text))
        under = line.origin and not line.header
        if under and not any(lines[j].header and lines[j].origin == line.origin for j in kept):
            dropped += 1
            continue
        text, notes = _shown(lines, kept | {i})
        # Both sections share the budget, measured as the prompt shows them.
        if count("\n".join(text) + "\n" + notes_block(notes)) > budget:
            dropped += 1
            continue
        kept.add(i)
    # A header whose session kept nothing else says nothing.
    bare = {
        i
        for i in kept
        if lines[i].header
        and not any(lines[j].origin == lines[i].origin and not lines[j].header for j in kept)
    }
    return kept - bare, dropped


def build_briefing(
    store: Store,
    *,
    budget: int,
    count: Callable[[str], int],
    current_session_id: str | None = None,
    protects: Mapping[str, str] | None = None,
    calendar: Calendar | None = None,
    now: datetime | None = None,
) -> Briefing:
    """The memory briefing for a new session, at most `budget` tokens as `count` measures;
    `calendar` is the user's own, read for today and tomorrow with the reminders."""
    sessions = recent_sessions(store, current_session_id, protects)
    lines = briefing_lines(store, sessions)
    lines += coming_lines(store, calendar, (now or datetime.now()).astimezone())
    kept, dropped = _choose(lines, budget, count)
    text_lines, notes = _shown(lines, kept)
    sources: list[str] = []
    for i in sorted(kept):
        sources.extend(s for s in lines[i].ids if s and s not in sources)
    text = "\n".join(text_lines)
    shown = "\n".join(x for x in (text, notes_block(notes)) if x)
    drawn = [
        Source(
            session_id=prev.session.id if prev.session else "",
            started_at=prev.session.started_at if prev.session else "",
            checkpoint_id=prev.checkpoint_id,
            rebuilt_from_log=prev.rebuilt_from_log,
            lines=sum(1 for i in kept if lines[i].origin == _key(prev)),
        )
        for prev in sessions
    ]
    newest = sessions[0] if sessions else None
    return Briefing(
        text=text,
        tokens=count(shown) if shown else 0,
        notes=notes,
        source_ids=sources,
        session_id=newest.session.id if newest and newest.session else "",
        checkpoint_id=newest.checkpoint_id if newest else "",
        rebuilt_from_log=newest.rebuilt_from_log if newest else False,
        dropped=dropped,
        sessions=drawn,
    )
