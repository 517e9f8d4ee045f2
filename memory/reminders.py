"""Reminders and timers (`store.reminders`): the rows that fire, and every change to them.

A reminder moves through the table, never through memory, so it survives any restart:
"scheduled" until its time, then "fired" (due, not yet said; the scheduler sets it), then
"announced" (said in a session, waiting for the user's done or snooze), and last "done" or
"cancelled". A snooze puts it back to "scheduled" at a later time. A timer is a reminder with
a duration. Every write calls `listeners`, so a scheduler in this process re-reads the next
due time at once; one in another process sees the change on its next look at the table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from memory.db import NotFoundError, Records, RowMissing, guarded, where_in
from memory.rows import (
    OPEN_REMINDER_STATUSES,
    ReminderRow,
    make_id,
    parse_id,
    parse_when,
    to_iso,
    utc_now,
)

_OPEN = where_in("status", list(OPEN_REMINDER_STATUSES))
_WORD = re.compile(r"[a-z0-9']+")
# Words that say nothing about which reminder is meant ("the reminder about the dentist").
_FILLER = frozenset(
    [
        *("a", "an", "the", "my", "me", "to", "of", "for", "about", "on", "at", "in", "with"),
        *("reminder", "reminders", "timer", "timers", "it", "that", "one", "please"),
    ]
)


def reminder_row(row: Any) -> ReminderRow:
    return ReminderRow(
        id=make_id("reminders", row["n"]),
        text=row["text"],
        due=row["due"],
        status=row["status"],
        created_at=row["created_at"],
        kind=row["kind"],
        duration_s=row["duration_s"],
        fired_at=row["fired_at"],
        announced_at=row["announced_at"],
        announced_in=row["announced_in"],
        updated_at=row["updated_at"] or row["created_at"],
    )


def timer_text(seconds: float, label: str = "") -> str:
    """What a timer is called: "5 minute timer", "90 second timer: tea"."""
    whole = round(seconds)
    if whole % 3600 == 0:
        size = f"{whole // 3600} hour"
    elif whole % 60 == 0:
        size = f"{whole // 60} minute"
    elif whole > 60:
        size = f"{whole // 60} minute {whole % 60} second"
    else:
        size = f"{whole} second"
    return f"{size} timer" + (f": {label.strip()}" if label.strip() else "")


def words_of(text: str) -> set[str]:
    """The words that identify a reminder (lower case, filler removed)."""
    return {w for w in _WORD.findall(text.lower()) if w not in _FILLER}


class Reminders(Records):
    table_name = "reminders"

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        # Called after every write, from whichever thread wrote (the scheduler's wake-up).
        self.listeners: list[Callable[[], None]] = []

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()

    def _update(self, reminder_id: str, changes: dict[str, Any]) -> ReminderRow:
        n = parse_id("reminders", reminder_id)
        changes["updated_at"] = to_iso(utc_now())
        try:
            with self.store.write():
                self.table.update(n, changes)
        except RowMissing as exc:
            raise NotFoundError(f"no reminder {make_id('reminders', n)}") from exc
        self._changed()
        row = self.get(reminder_id)
        assert row is not None
        return row

    def _open_row(self, reminder_id: str) -> ReminderRow:
        row = self.get(reminder_id)
        if row is None:
            n = parse_id("reminders", reminder_id)
            raise NotFoundError(f"no reminder {make_id('reminders', n)}")
        if row.status not in OPEN_REMINDER_STATUSES:
            raise ValueError(f"{row.id} is {row.status} already")
        return row

    # --- writing ------------------------------------------------------------------------

    @guarded
    def add(
        self,
        text: str,
        due: str | datetime,
        *,
        kind: str = "reminder",
        duration_s: float | None = None,
    ) -> str:
        text = text.strip()
        if not text:
            raise ValueError("a reminder needs some text")
        when = parse_when(due)
        if when is None:
            raise ValueError("a reminder needs a due time")
        if kind not in ("reminder", "timer"):
            raise ValueError(f"kind must be reminder or timer, not '{kind}'")
        now = to_iso(utc_now())
        n = self.insert(
            {
                "text": text,
                "due": when,
                "created_at": now,
                "updated_at": now,
                "kind": kind,
                "duration_s": duration_s,
            }
        )
        self._changed()
        return make_id("reminders", n)

    def add_timer(self, seconds: float, label: str = "") -> str:
        """A timer: a reminder `seconds` from now, named by its length (and label)."""
        if seconds <= 0:
            raise ValueError("a timer needs a duration above zero")
        due = utc_now() + timedelta(seconds=seconds)
        return self.add(timer_text(seconds, label), due, kind="timer", duration_s=seconds)

    @guarded
    def snooze(self, reminder_id: str, minutes: float) -> ReminderRow:
        """Say it again `minutes` from now: back to scheduled, its firing forgotten."""
        if minutes <= 0:
            raise ValueError("snooze needs a number of minutes above zero")
        self._open_row(reminder_id)
        due = to_iso(utc_now() + timedelta(minutes=minutes))
        changes = {"status": "scheduled", "due": due, "fired_at": None, "announced_at": None}
        return self._update(reminder_id, changes)

    @guarded
    def done(self, reminder_id: str) -> ReminderRow:
        self._open_row(reminder_id)
        return self._update(reminder_id, {"status": "done"})

    @guarded
    def cancel(self, reminder_id: str) -> ReminderRow:
        """Never say it: the row stays, marked cancelled."""
        self._open_row(reminder_id)
        return self._update(reminder_id, {"status": "cancelled"})

    @guarded
    def fire_due(self, now: datetime | None = None) -> list[ReminderRow]:
        """Mark every scheduled reminder due at or before `now` as fired; returns them."""
        stamp = to_iso(now or utc_now())
        with self.store.write():
            rows = list(
                self.table.rows_where(
                    "status = 'scheduled' AND due <= ?", [stamp], order_by="due, n"
                )
            )
            for r in rows:
                fired = {"status": "fired", "fired_at": stamp, "updated_at": stamp}
                self.table.update(r["n"], fired)
        if rows:
            self._changed()
        return [self.get(make_id("reminders", r["n"])) for r in rows]  # type: ignore[misc]

    @guarded
    def mark_announced(self, ids: Iterable[str], session_id: str) -> None:
        """Annie said these in `session_id`: they wait for the user's done or snooze now."""
        stamp = to_iso(utc_now())
        keys = [parse_id("reminders", i) for i in ids]
        with self.store.write():
            for n in keys:
                self.table.update(
                    n,
                    {
                        "status": "announced",
                        "announced_at": stamp,
                        "announced_in": session_id,
                        "updated_at": stamp,
                    },
                )
        if keys:
            self._changed()

    # --- reading ------------------------------------------------------------------------

    @guarded
    def get(self, reminder_id: str) -> ReminderRow | None:
        row = self.row(parse_id("reminders", reminder_id))
        return reminder_row(row) if row is not None else None

    @guarded
    def between(
        self, start: datetime, end: datetime, limit: int | None = None
    ) -> list[ReminderRow]:
        """Scheduled reminders due in [start, end), earliest first."""
        rows = self.table.rows_where(
            "status = 'scheduled' AND due >= ? AND due < ?",
            [to_iso(start), to_iso(end)],
            order_by="due, n",
            limit=int(limit) if limit is not None else None,
        )
        return [reminder_row(r) for r in rows]

    @guarded
    def open(self, limit: int | None = None) -> list[ReminderRow]:
        """Every reminder not yet done or cancelled, earliest due first."""
        rows = self.table.rows_where(
            _OPEN,
            list(OPEN_REMINDER_STATUSES),
            order_by="due, n",
            limit=int(limit) if limit is not None else None,
        )
        return [reminder_row(r) for r in rows]

    @guarded
    def find(self, status: str | None = None, limit: int | None = None) -> list[ReminderRow]:
        """All reminders (or those with `status`), earliest due first."""
        where, params = ("status = ?", [status]) if status else (None, [])
        rows = self.table.rows_where(
            where, params, order_by="due, n", limit=int(limit) if limit is not None else None
        )
        return [reminder_row(r) for r in rows]

    @guarded
    def next_due(self) -> str | None:
        """The earliest due time of a scheduled reminder (what the scheduler sleeps until)."""
        row = self.store.one("SELECT min(due) AS due FROM reminders WHERE status = 'scheduled'")
        return row["due"] if row is not None and row["due"] else None

    @guarded
    def unannounced(self) -> list[ReminderRow]:
        """Fired and not yet said to anyone, earliest due first."""
        rows = self.table.rows_where("status = 'fired'", order_by="due, n")
        return [reminder_row(r) for r in rows]

    @guarded
    def last_announced(self, session_id: str) -> ReminderRow | None:
        """The reminder most recently said in `session_id` that still waits for done/snooze
        (what "done" or "snooze it" refers to)."""
        rows = self.table.rows_where(
            "status = 'announced' AND announced_in = ?",
            [session_id],
            order_by="announced_at DESC, n DESC",
            limit=1,
        )
        found = [reminder_row(r) for r in rows]
        return found[0] if found else None

    def matching(self, words: str) -> list[ReminderRow]:
        """Open reminders whose text holds every identifying word of `words`."""
        wanted = words_of(words)
        if not wanted:
            return []
        return [r for r in self.open() if wanted <= words_of(r.text) | _stems(r.text)]


def _stems(text: str) -> set[str]:
    """Singular forms too, so "the dentist" finds "dentists appointment"."""
    return {w.rstrip("s") for w in words_of(text)} | {w + "s" for w in words_of(text)}
