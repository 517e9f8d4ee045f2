"""The deterministic state path: status questions answered from typed state, with no model call.

`StateResolver.resolve(text)` returns a short, speakable answer rendered from the store's
projections plus the ids of the records it read, or None when the text is not a status
question the state path may answer alone (the turn then goes to the model). The anchored
rules decide first (`context.state_rules`); with an `IntentIndex` the classifier decides
phrasings the rules do not know, and answers only in its confident band (unsure turns go to
the model, which reads the same state in its snapshot); without one the rules work alone.
`route` says how a sentence was placed. The answers themselves are in `context.state_answers`.
When a source cannot be read the answer says so instead of turning absence of data into
"nothing".
Approvals are read here too (`memory.approvals`): "what do I need to approve?" names each
waiting action with its exact parameters (marking the ones this conversation can answer), and
"anything pending on me?" counts them. A "yes" or "no" is not a status question: the turn's
chain of answerers resolves it before the state path.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from context import lookup
from context import state_answers as answers
from context.clocks import date_phrase, time_in
from context.normalize import normalize
from context.spoken import count_words, join_spoken, spoken_date, spoken_time, spoken_when
from context.state_answers import NOTHING_PENDING, NOTHING_TO_APPROVE, StateResult
from context.state_rules import Intent, Match, Routed, route
from memory.calendar import Calendar, CalendarError
from memory.db import StoreError

if TYPE_CHECKING:
    from config import Settings
    from context.intents import IntentIndex
    from memory.store import Store

__all__ = [
    "NOTHING_PENDING",
    "NOTHING_TO_APPROVE",
    "StateResolver",
    "StateResult",
    "count_words",
    "join_spoken",
    "spoken_date",
    "spoken_time",
    "spoken_when",
]

CANT_READ_TASKS = "I can't read your task list right now."
CANT_READ_SCHEDULE = "I can't read your schedule right now."
CANT_READ_APPROVALS = "I can't read the approvals right now, so I did nothing."
CANT_READ_NOTES = "I can't read my notes right now, so I can't tell."
_FALLBACK = {
    "schedule": CANT_READ_SCHEDULE,
    "approvals": CANT_READ_APPROVALS,
    "remember": CANT_READ_NOTES,
}


class StateResolver:
    """Answers status questions from the store; None means "not a state question"."""

    def __init__(
        self,
        store: Store | None,
        settings: Settings,
        context_usage: Callable[[], tuple[int, int]] | None = None,
        *,
        store_error: str = "",
        intents: IntentIndex | None = None,
        calendar: Calendar | None = None,
    ) -> None:
        # `store` may be None when the file could not be opened; task answers then say so.
        # `intents` decides what the anchored rules do not place; without it they alone decide.
        self.store = store
        self.settings = settings
        self.context_usage = context_usage
        self.store_error = store_error
        self.intents = intents
        # The user's own calendar (`memory.calendar`), read with tasks and reminders.
        self.calendar = calendar

    def resolve(
        self,
        text: str,
        now: datetime | None = None,
        extra: Iterable[Intent] = (),
        *,
        session_id: str | None = None,
    ) -> StateResult | None:
        """The rendered answer, or None. `extra` are intents the anchored rules also check.

        `session_id` is the conversation asking: approval lists mark which ones it can answer."""
        return self.resolve_routed(text, now, extra, session_id=session_id)[0]

    def resolve_routed(
        self,
        text: str,
        now: datetime | None = None,
        extra: Iterable[Intent] = (),
        *,
        session_id: str | None = None,
    ) -> tuple[StateResult | None, Routed]:
        """The rendered answer (or None) and how the sentence was placed."""
        start = time.perf_counter()
        at = (now or datetime.now()).astimezone()
        routed = route(text, extra, self.intents)
        if routed.match is None:
            return None, routed
        result = self._render(routed.match, at, session_id, text)
        if result is None:
            return None, routed
        result.latency_ms = (time.perf_counter() - start) * 1000.0
        return result, routed

    # --- dispatch -----------------------------------------------------------------------

    def _render(
        self, found: Match, now: datetime, session_id: str | None, text: str
    ) -> StateResult | None:
        intent = found.intent
        if intent == "clock":
            # A place no table knows is the model's: never the local time said as its time.
            said = time_in(found.place, now)
            return StateResult(said, "clock") if said is not None else None
        if intent == "dates":
            dated = date_phrase(normalize(text), now)
            return StateResult(dated.text, "dates") if dated is not None else None
        if intent == "time":
            return StateResult(f"It's {spoken_time(now)}.", "time")
        if intent == "date":
            return StateResult(f"It's {spoken_date(now)}.", "date")
        if intent == "context":
            return self._context()
        fallback = _FALLBACK.get(intent, CANT_READ_TASKS)
        if self.store is None:
            # "What do you know about X" may be general knowledge: without notes to read,
            # it is the model's question, not a failure to report.
            return None if found.needs_notes else StateResult(fallback, intent)
        try:
            if intent == "approvals":
                return answers.approvals_answer(self.store, now, session_id)
            if intent == "pending":
                return answers.pending_answer(self.store, now, session_id)
            if intent == "list":
                return answers.list_answer(self.store)
            if intent == "blocked":
                return answers.blocked_answer(self.store)
            if intent == "remember" and found.mood:
                return answers.mood_answer(self.store, now)
            if intent == "remember" and found.name:
                return answers.name_answer(self.store, now)
            if intent == "remember":
                floor = self.settings.context.evidence_min_similarity
                return answers.remember_answer(self.store, found.subject, found.needs_notes, floor)
            if intent == "timers":
                reminders = self.store.reminders.open()
                return lookup.timers_answer(reminders, found.item, found.alarms, now)
            if intent == "find":
                return self._find(found, now)
            if intent == "agenda":
                return self._agenda(date.fromisoformat(found.item), now)
            return answers.schedule_answer(self.store, found.day, now, self._calendar_between)
        except (StoreError, sqlite3.Error):
            return StateResult(fallback, intent)
        except CalendarError as exc:
            # Never "nothing is scheduled" from a calendar that could not be read.
            return StateResult(f"I can't read your calendar right now: {exc}", intent)

    def _find(self, found: Match, now: datetime) -> StateResult | None:
        assert self.store is not None
        tasks = lookup.task_records(self.store.tasks.find())
        # Words that may be about the world (`Match.loose`): the records answer only where one
        # holds the item, and otherwise the model does.
        if found.within == "done":
            if found.loose and not lookup.find(found.item, tasks).exact:
                return None
            return lookup.done_answer(found.item, tasks, now)
        reminders = lookup.reminder_records(self.store.reminders.open())
        events = self._events(found.item, now)
        if found.loose and not lookup.find(found.item, tasks + reminders + events).exact:
            return None
        timed = [r for r in tasks if r.when] + reminders + events
        if found.within == "when":
            day = "" if found.day == "upcoming" else found.day
            return lookup.when_answer(found.item, day, timed, now, self._embed())
        places = {"list": tasks, "reminders": reminders, "schedule": timed}
        return lookup.membership_answer(found.item, found.within, places, now, self._embed())

    def _agenda(self, day: date, now: datetime) -> StateResult:
        """The schedule of one named day ("anything on my calendar for the 21st")."""
        assert self.store is not None
        start = now.replace(year=day.year, month=day.month, day=day.day, hour=0, minute=0,
                            second=0, microsecond=0)  # fmt: skip
        end = (start + timedelta(days=1, hours=12)).replace(hour=0)
        label = "today" if day == now.date() else f"{day:%A}, {day:%B} {day.day}"
        events = self._calendar_between(start, end)
        return answers.window_answer(self.store, start, end, label, now, events)

    def _calendar_between(self, start: datetime, end: datetime) -> list[answers.Event]:
        """The calendar's events in [start, end); none without a calendar."""
        if self.calendar is None:
            return []
        return [(e.id, e.title, e.start, e.all_day) for e in self.calendar.between(start, end)]

    def _events(self, item: str, now: datetime) -> list[lookup.Record]:
        """The next instances of the calendar events whose titles match `item`: titles are
        matched first (cheap), so only those events' recurrences are expanded."""
        if self.calendar is None:
            return []
        titles = [lookup.Record(t, t, "event") for t in self.calendar.titles()]
        found = lookup.find(item, titles, self._embed())
        wanted = {r.title for r in found.exact or found.close}
        if not wanted:
            return []
        events = self.calendar.next_of(wanted, now - timedelta(days=1), limit=lookup.SPOKEN_ITEMS)
        return [lookup.Record(e.id, e.title, "event", e.start.isoformat()) for e in events]

    def _embed(self) -> lookup.Embed | None:
        """The notes' embedding model, for matching an item by meaning; None when not loaded."""
        model = self.intents.model() if self.intents is not None else None
        if model is None:
            return None
        return lambda texts: model.embed(texts)

    def _context(self) -> StateResult:
        if self.context_usage is None:
            return StateResult(
                "I can't tell how full the context is here; no conversation is running.",
                "context",
            )
        try:
            used, window = self.context_usage()
        except Exception:
            # A broken meter must not become a made-up number.
            return StateResult("I can't tell: the context meter can't be read.", "context")
        if window <= 0:
            return StateResult("I can't tell: the context meter can't be read.", "context")
        used = min(max(used, 0), window)
        percent = round(100 * used / window)
        # Both ways round, so nobody wonders whether the percentage is what is used or left.
        text = f"About {percent} percent used, {window - used:,} of {window:,} tokens left."
        return StateResult(text, "context")
