"""The deterministic state path: status questions answered from typed state, with no model call.

`StateResolver.resolve(text)` returns a short, speakable answer rendered from the store's
projections plus the ids of the records it read, or None when the text is not a status
question (the turn then goes to the model). Rules decide (`context.state_rules`). The seed's
rules are applied literally: pending means `pending != "none"` (and not done); an empty
pending set is "Nothing needs you right now."; completed work is never used as padding;
and when a source cannot be read the answer says so instead of turning absence of data into
"nothing".
Approvals are read here too (`memory.approvals`): "what do I need to approve?" names each
waiting action with its exact parameters, "anything pending on me?" counts them, and a "yes"
or "no" resolves the open approval of the conversation that asks (`session_id`), never
another conversation's.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from context.state_rules import Day, Intent, match
from memory import approvals
from memory.db import StoreError
from memory.rows import ApprovalRow, TaskRow, from_iso

if TYPE_CHECKING:
    from config import Settings
    from memory.store import Store

CANT_READ_TASKS = "I can't read your task list right now."
CANT_READ_SCHEDULE = "I can't read your schedule right now."
CANT_READ_APPROVALS = "I can't read the approvals right now, so I did nothing."
NOTHING_TO_APPROVE = "Nothing is waiting for your approval."
NOTHING_PENDING = "Nothing needs you right now."
# How many items an answer names before "and N more": enough to act on, short enough to hear.
SPOKEN_ITEMS = 3

_WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


@dataclass
class StateResult:
    text: str
    intent: str
    sources: list[str] = field(default_factory=list)
    latency_ms: float = 0.0


def count_words(n: int, singular: str, plural: str | None = None) -> str:
    word = _WORDS[n] if 0 <= n < len(_WORDS) else f"{n:,}"
    return f"{word} {singular if n == 1 else plural or singular + 's'}"


def join_spoken(items: list[str], total: int | None = None) -> str:
    """ "a", "a and b", "a, b and c", plus "and N more" when `total` exceeds what is named."""
    names = [i.strip().rstrip(".") for i in items]
    more = (total or len(names)) - len(names)
    if more > 0:
        return ", ".join(names) + f", and {more:,} more"
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def spoken_time(moment: datetime) -> str:
    hour = moment.hour % 12 or 12
    suffix = "AM" if moment.hour < 12 else "PM"
    return f"{hour} {suffix}" if moment.minute == 0 else f"{hour}:{moment.minute:02d} {suffix}"


def spoken_date(moment: datetime) -> str:
    return f"{moment:%A}, {moment:%B} {moment.day}, {moment.year}"


def spoken_when(due_iso: str, now: datetime) -> str:
    due = from_iso(due_iso).astimezone(now.tzinfo)
    days = (due.date() - now.date()).days
    day = "today" if days == 0 else "tomorrow" if days == 1 else f"on {due:%A}, {due:%B} {due.day}"
    if days < 0:
        day = f"on {due:%B} {due.day}"
    return f"{day} at {spoken_time(due)}"


class StateResolver:
    """Answers status questions from the store; None means "not a state question"."""

    def __init__(
        self,
        store: Store | None,
        settings: Settings,
        context_usage: Callable[[], tuple[int, int]] | None = None,
        *,
        store_error: str = "",
        executor: approvals.Executor | None = None,
    ) -> None:
        # `store` may be None when the file could not be opened; task answers then say so.
        # `executor` runs an approved action; without one a "yes" says it cannot act here.
        self.store = store
        self.settings = settings
        self.context_usage = context_usage
        self.store_error = store_error
        self.executor = executor

    def resolve(
        self,
        text: str,
        now: datetime | None = None,
        extra: Iterable[Intent] = (),
        *,
        session_id: str | None = None,
    ) -> StateResult | None:
        """The rendered answer, or None. `extra` are intents a classifier proposes.

        `session_id` is the conversation asking: a "yes" or "no" answers only its approvals
        (without one, none), and approval lists mark which ones it can answer."""
        start = time.perf_counter()
        at = (now or datetime.now()).astimezone()
        result = self._approval(text, at, session_id)
        if result is None:
            found = match(text, extra)
            if found is None:
                return None
            result = self._render(found.intent, found.day, at, session_id)
        result.latency_ms = (time.perf_counter() - start) * 1000.0
        return result

    # --- dispatch -----------------------------------------------------------------------

    def _approval(self, text: str, now: datetime, session_id: str | None) -> StateResult | None:
        decision = approvals.confirmation(text)
        if decision is None:
            return None
        if self.store is None:
            # Without the ledger there is nothing to confirm; saying "done" would be a lie.
            return StateResult(CANT_READ_APPROVALS, "approval")
        try:
            out = approvals.answer(self.store.approvals, decision, session_id, now, self.executor)
        except (StoreError, sqlite3.Error):
            return StateResult(CANT_READ_APPROVALS, "approval")
        return StateResult(out.text, "approval", out.sources) if out is not None else None

    def _render(
        self, intent: Intent, day: Day, now: datetime, session_id: str | None
    ) -> StateResult:
        if intent == "time":
            return StateResult(f"It's {spoken_time(now)}.", "time")
        if intent == "date":
            return StateResult(f"It's {spoken_date(now)}.", "date")
        if intent == "context":
            return self._context()
        fallback = {"schedule": CANT_READ_SCHEDULE, "approvals": CANT_READ_APPROVALS}.get(
            intent, CANT_READ_TASKS
        )
        if self.store is None:
            return StateResult(fallback, intent)
        try:
            if intent == "approvals":
                return self._approvals(self.store, now, session_id)
            if intent == "pending":
                return self._pending(self.store, now, session_id)
            if intent == "list":
                return self._list(self.store)
            return self._schedule(self.store, day, now)
        except (StoreError, sqlite3.Error):
            return StateResult(fallback, intent)

    # --- renderers ----------------------------------------------------------------------

    def _approvals(self, store: Store, now: datetime, session_id: str | None) -> StateResult:
        waiting = store.approvals.pending(now)
        if not waiting:
            return StateResult(NOTHING_TO_APPROVE, "approvals")
        text = _approval_sentence(waiting, session_id)
        return StateResult(text, "approvals", [a.id for a in waiting[:SPOKEN_ITEMS]])

    def _pending(self, store: Store, now: datetime, session_id: str | None) -> StateResult:
        summary = store.tasks.pending_summary(limit=SPOKEN_ITEMS)
        waiting = store.approvals.pending(now)
        total = sum(count for count, _ in summary.values())
        if total == 0 and not waiting:
            return StateResult(NOTHING_PENDING, "pending")
        sources: list[str] = [a.id for a in waiting[:SPOKEN_ITEMS]]
        # An approval is the most urgent thing on the user: it expires if left unanswered.
        parts: list[str] = [_approval_sentence(waiting, session_id)] if waiting else []
        lanes = (
            ("user", "need you", "needs you"),
            ("assistant", "are waiting on me", "is waiting on me"),
            ("external", "are waiting on someone else", "is waiting on someone else"),
        )
        for party, plural_verb, singular_verb in lanes:
            count, rows = summary[party]
            if count == 0:
                if party == "user" and not waiting:
                    parts.append("Nothing is waiting on you.")
                continue
            verb = singular_verb if count == 1 else plural_verb
            noun = count_words(count, "thing").capitalize()
            parts.append(f"{noun} {verb}: {_titles(rows, count)}.")
            sources.extend(r.id for r in rows)
        return StateResult(" ".join(parts), "pending", sources)

    def _list(self, store: Store) -> StateResult:
        index = store.projections.work_index(limit=SPOKEN_ITEMS)
        if index.active_count == 0 and index.blocked_count == 0:
            return StateResult("Your list is empty.", "list")
        parts: list[str] = []
        if index.active_count:
            parts.append(
                f"You have {count_words(index.active_count, 'open task')}: "
                f"{_titles(index.active, index.active_count)}."
            )
        else:
            parts.append("You have no open tasks.")
        if index.blocked_count:
            verb = "is" if index.blocked_count == 1 else "are"
            parts.append(
                f"{count_words(index.blocked_count, 'task').capitalize()} {verb} blocked: "
                f"{_titles(index.blocked, index.blocked_count)}."
            )
        sources = [r.id for r in index.active] + [r.id for r in index.blocked]
        return StateResult(" ".join(parts), "list", sources)

    def _schedule(self, store: Store, day: Day, now: datetime) -> StateResult:
        if day == "upcoming":
            index = store.projections.work_index(now=now, limit=SPOKEN_ITEMS)
            if not index.next_scheduled:
                return StateResult("Nothing is scheduled.", "schedule")
            items = [f"{s.text}, {spoken_when(s.due, now)}" for s in index.next_scheduled]
            return StateResult(
                "Next up: " + "; ".join(items) + ".",
                "schedule",
                [s.id for s in index.next_scheduled],
            )
        start = now.replace(hour=0, minute=0, second=0, microsecond=0)
        if day == "tomorrow":
            start = (start + timedelta(days=1, hours=12)).replace(hour=0)
        end = (start + timedelta(days=1, hours=12)).replace(hour=0)
        reminders = store.reminders.between(start, end, limit=50)
        due = store.tasks.due_between(start, end, limit=50)
        if not reminders and not due:
            return StateResult(f"Nothing is scheduled for {day}.", "schedule")
        parts: list[str] = []
        if reminders:
            named = [
                f"{r.text} at {spoken_time(from_iso(r.due).astimezone(now.tzinfo))}"
                for r in reminders[:SPOKEN_ITEMS]
            ]
            parts.append(
                f"{day.capitalize()} you have {count_words(len(reminders), 'reminder')}: "
                f"{join_spoken(named, len(reminders))}."
            )
        if due:
            verb = "is" if len(due) == 1 else "are"
            parts.append(
                f"{count_words(len(due), 'task').capitalize()} {verb} due {day}: "
                f"{_titles(due[:SPOKEN_ITEMS], len(due))}."
            )
        sources = [r.id for r in reminders[:SPOKEN_ITEMS]] + [t.id for t in due[:SPOKEN_ITEMS]]
        return StateResult(" ".join(parts), "schedule", sources)

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
            return StateResult("I can't read the context meter right now.", "context")
        if window <= 0:
            return StateResult("I can't read the context meter right now.", "context")
        percent = round(100 * used / window)
        return StateResult(f"About {percent} percent, {used:,} of {window:,} tokens.", "context")


def _approval_sentence(waiting: list[ApprovalRow], session_id: str | None) -> str:
    """ "One thing waits for your approval: delete note (note_id=note-3). Say yes or no." """
    named = []
    for a in waiting[:SPOKEN_ITEMS]:
        where = (
            "" if session_id and a.requester == session_id else ", asked in another conversation"
        )
        named.append(approvals.describe(a) + where)
    verb = "waits" if len(waiting) == 1 else "wait"
    text = f"{count_words(len(waiting), 'thing').capitalize()} {verb} for your approval: "
    text += join_spoken(named, len(waiting)) + "."
    if session_id and any(a.requester == session_id for a in waiting):
        text += " Say yes or no."
    return text


def _titles(rows: list[TaskRow], total: int) -> str:
    return join_spoken([r.title for r in rows[:SPOKEN_ITEMS]], total)
