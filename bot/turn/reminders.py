"""Reminders that fire: the scheduler that watches the table, and what Annie says when one is due.

`ReminderScheduler` runs beside the runtime's sessions. It sleeps until the earliest due time
in the reminders table, marks every reminder that has fallen due as fired (in the table, so a
restart loses nothing), and tells the runtime, which tells every open session. It wakes early
whenever this process writes a reminder (`store.reminders.listeners`) and looks again every
`poll_s` for writes by other processes (`python -m bot reminders add` beside a running
server). A session says fired reminders at its next gap (`Session.announce`); with no session
open they wait in the table, and the next session opens with them ("While you were away").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime

from bot.turn.record import Recorder
from memory.db import StoreError
from memory.rows import ReminderRow, from_iso, utc_now
from memory.store import Store

log = logging.getLogger(__name__)

# How often the table is looked at for changes made by another process.
POLL_S = 2.0


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


class ReminderScheduler:
    """Fires reminders from the table on time; `start()` in a running loop, `stop()` after."""

    def __init__(
        self,
        store: Callable[[], Store],
        on_fired: Callable[[list[ReminderRow]], None],
        *,
        poll_s: float = POLL_S,
    ) -> None:
        self._store = store
        self.on_fired = on_fired
        self.poll_s = poll_s
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.fired: list[ReminderRow] = []  # everything this scheduler fired (tests, doctor)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self.running:
            return
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._store().reminders.listeners.append(self.kick)
        self._task = asyncio.create_task(self._run(), name="reminder-scheduler")

    def kick(self) -> None:
        """Look at the table again now (reminders changed). Safe from any thread."""
        loop, wake = self._loop, self._wake
        if loop is None or wake is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            wake.set()
        else:
            loop.call_soon_threadsafe(wake.set)

    async def stop(self) -> None:
        task, self._task = self._task, None
        with contextlib.suppress(ValueError, StoreError):
            self._store().reminders.listeners.remove(self.kick)
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def check(self) -> float:
        """Fire what is due now; returns how long to sleep before looking again."""
        reminders = self._store().reminders
        fired = reminders.fire_due()
        if fired:
            self.fired.extend(fired)
            log.info("reminders due: %s", ", ".join(r.id for r in fired))
            self.on_fired(fired)
        upcoming = reminders.next_due()
        if upcoming is None:
            return self.poll_s
        wait = (from_iso(upcoming) - utc_now()).total_seconds()
        return min(self.poll_s, max(0.0, wait))

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            # Cleared before reading the table, so a write during the read still wakes us.
            self._wake.clear()
            try:
                delay = self.check()
            except StoreError as exc:
                log.warning("cannot read reminders: %s", exc)
                delay = self.poll_s
            except Exception:
                log.exception("the reminder scheduler failed; retrying")
                delay = self.poll_s
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)
