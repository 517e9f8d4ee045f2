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
from datetime import datetime
from typing import TYPE_CHECKING

from context import state_answers as answers
from context.spoken import count_words, join_spoken, spoken_date, spoken_time, spoken_when
from context.state_answers import NOTHING_PENDING, NOTHING_TO_APPROVE, StateResult
from context.state_rules import Intent, Match, Routed, route
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
    ) -> None:
        # `store` may be None when the file could not be opened; task answers then say so.
        # `intents` decides what the anchored rules do not place; without it they alone decide.
        self.store = store
        self.settings = settings
        self.context_usage = context_usage
        self.store_error = store_error
        self.intents = intents

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
        result = self._render(routed.match, at, session_id)
        if result is None:
            return None, routed
        result.latency_ms = (time.perf_counter() - start) * 1000.0
        return result, routed

    # --- dispatch -----------------------------------------------------------------------

    def _render(self, found: Match, now: datetime, session_id: str | None) -> StateResult | None:
        intent = found.intent
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
            if intent == "remember":
                floor = self.settings.context.evidence_min_similarity
                return answers.remember_answer(self.store, found.subject, found.needs_notes, floor)
            return answers.schedule_answer(self.store, found.day, now)
        except (StoreError, sqlite3.Error):
            return StateResult(fallback, intent)

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
