"""What Annie says when reminders fall due, and how a session says the ones no one has heard.

A session says fired reminders at its next gap (`Session` on a `SayReminders` command, the
voice connection finding the gap with `bot.reminders.gaps`); with no session open they wait in
the table, and the next session opens with them ("While you were away"). Times are said in
local time ("3 PM", "3:05 PM"), as the spoken reminder commands say them too.
"""

from __future__ import annotations

from datetime import datetime

from bot.turn.record import Recorder
from memory.rows import ReminderRow, from_iso
from memory.store import Store


def clock_time(stamp: str) -> str:
    """A stored time as spoken, in local time: "3 PM", "3:05 PM"."""
    moment = from_iso(stamp).astimezone()
    hour = moment.hour % 12 or 12
    suffix = "AM" if moment.hour < 12 else "PM"
    return f"{hour} {suffix}" if moment.minute == 0 else f"{hour}:{moment.minute:02d} {suffix}"


def _said(row: ReminderRow) -> str:
    return f"time's up on your {row.text}" if row.kind == "timer" else row.text


def announcement(rows: list[ReminderRow], session_started: datetime) -> tuple[str, bool]:
    """What Annie says for these fired reminders, and whether it opens with "While you were
    away" (some fell due before this session began)."""
    away = [r for r in rows if from_iso(r.due) < session_started]
    live = [r for r in rows if r not in away]
    parts: list[str] = []
    if away:
        items = "; ".join(f"{_said(r)} (due at {clock_time(r.due)})" for r in away)
        parts.append(f"While you were away: {items}.")
    for r in live:
        parts.append(f"Time's up: your {r.text}." if r.kind == "timer" else f"Reminder: {r.text}.")
    return " ".join(parts), bool(away)


def listed(rows: list[ReminderRow]) -> list[dict[str, str]]:
    """The reminders as the page lists them."""
    return [{"id": r.id, "text": r.text, "due": r.due, "kind": r.kind} for r in rows]


def say_unheard(
    store: Store, record: Recorder, session_id: str, started_at: datetime, turn_id: str = ""
) -> tuple[str, bool, list[ReminderRow]] | None:
    """Fire what has fallen due (the scheduler may not have reached it yet), then say every
    fired reminder no one has heard: logged and kept in the conversation as Annie's words (so
    "snooze it" has a referent), marked announced in this session. Returns what was said,
    whether it opened with "While you were away", and the reminders; None when none wait.
    Raises `StoreError` when the table cannot be read or written."""
    reminders = store.reminders
    reminders.fire_due()
    rows = reminders.unannounced()
    if not rows:
        return None
    text, away = announcement(rows, started_at)
    ids = [r.id for r in rows]
    record.say(
        "reminder",
        text,
        turn_id,
        meta={"reminders": ids, "away": away},
        reason="reminder announcement",
    )
    reminders.mark_announced(ids, session_id)
    return text, away, rows
