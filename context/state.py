"""The deterministic state path: status questions answered from typed state, with no model call.

`StateResolver.resolve(text)` returns a short, speakable answer rendered from the store's
projections plus the ids of the records it read, or None when the text is not a status
question the state path may answer alone (the turn then goes to the model). The anchored
rules decide first (`context.state_rules`); with an `IntentIndex` the classifier decides
phrasings the rules do not know, and answers only in its confident band (unsure turns go to
the model, which reads the same state in its snapshot); without one the rules work alone.
`route` says how a sentence was placed. Each intent is answered by its own spec's renderer
(`context.intent_specs`), over the answers in `context.state_answers` and `context.lookup`.
When a source cannot be read the answer says so instead of turning absence of data into
"nothing".
Approvals are read here too (`memory.approvals`): "what do I need to approve?" names each
waiting action with its exact parameters (marking the ones this conversation can answer), and
"anything pending on me?" counts them. A "yes" or "no" is not a status question: the turn's
chain of answerers resolves it before the state path.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from context import lookup
from context.intent_specs import (
    BY_NAME,
    CANT_READ_APPROVALS,
    CANT_READ_NOTES,
    CANT_READ_SCHEDULE,
    CANT_READ_TASKS,
    Asked,
    Match,
    Sources,
)
from context.normalize import normalize
from context.state_answers import NOTHING_PENDING, NOTHING_TO_APPROVE, StateResult
from context.state_rules import Routed, day_of, route
from context.wording import count_words, join_spoken, spoken_date, spoken_time, spoken_when
from memory.calendar import Calendar, CalendarError
from memory.db import StoreError

if TYPE_CHECKING:
    from config import Settings
    from context.intents import IntentIndex
    from context.state_vocab import Day
    from memory.store import Store

__all__ = [
    "CANT_READ_APPROVALS",
    "CANT_READ_NOTES",
    "CANT_READ_SCHEDULE",
    "CANT_READ_TASKS",
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


# How a question about one named record asks: whether it is done, or whether it is there.
_DONE = re.compile(
    r"\b(?:(?:did|have|has) (?:i|we)|yet|already|done|finished|sorted|dealt with"
    r"|taken care of|handled|completed?)\b"
)
_WHEN_ASKED = re.compile(
    r"\b(?:when|what time|what day|what date|what night|which day|which night|how long"
    r"|how soon|how many days|till|until|today|tonight|tomorrow|this week|this weekend"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day|on the \d{1,2}(?:st|nd|rd|th))\b"
)
# How a read of what is coming asks ("coming up", "booked", "planned").
_COMING = frozenset([
    "coming", "up", "booked", "book", "planned", "plan", "scheduled", "next", "ahead", "soon",
    "lined", "arranged", "set", "on",
])  # fmt: skip
# The user asking about their own things.
_MINE = re.compile(r"\b(?:i|im|i'm|i've|i'd|my|me|mine|we|we're|our|us)\b")
# A day named in a question about one record; `day` the ones a lookup's answer checks.
_DAY_SAID = re.compile(
    r"\b(?:(?P<day>today|tonight|tomorrow|this week|this morning|this afternoon|this evening)"
    r"|yesterday|this weekend|next \w+|last \w+|(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|\d{1,2}(?:st|nd|rd|th)|on the \d{1,2})\b"
)
_ANY_ONE = r"\b(?:a|an|any|some|another) (?:[a-z]+ )?"
_REMINDED = re.compile(r"\b(?:remind|reminded|reminding|reminder|reminders)\b")
_LISTED = re.compile(
    r"\b(?:list|todo|to do|reminders?|noted|note|written down|write down|wrote down|put)\b"
)


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
        vectors: lookup.Remembered | None = None,
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
        # Record titles' vectors, kept across questions (and, passed in, across resolvers).
        self._remembered = vectors if vectors is not None else lookup.Remembered()

    def resolve(
        self, text: str, now: datetime | None = None, *, session_id: str | None = None
    ) -> StateResult | None:
        """The rendered answer, or None.

        `session_id` is the conversation asking: approval lists mark which ones it can answer."""
        return self.resolve_routed(text, now, session_id=session_id)[0]

    def resolve_routed(
        self, text: str, now: datetime | None = None, *, session_id: str | None = None
    ) -> tuple[StateResult | None, Routed]:
        """The rendered answer (or None) and how the sentence was placed."""
        start = time.perf_counter()
        at = (now or datetime.now()).astimezone()
        routed = route(text, self.intents)
        if (
            routed.match is not None
            and routed.match.intent == "schedule"
            and routed.match.day == "upcoming"
        ):
            # A read of what is coming that names one record in two words or more ("have I got
            # the boiler service for the flat booked", placed by "booked"): that record is the
            # answer, not the list of what is next.
            routed = self._by_record(text, at, routed, narrow=False)

        def rendered(placed: Routed) -> StateResult | None:
            return (
                None
                if placed.match is None
                else self._render(Asked(placed.match, at, text, session_id))
            )

        result = rendered(routed)
        if result is None and routed.match is not None and routed.match.loose:
            # No record holds an item named in words that may be about the world: the
            # sentence is placed as if that rule did not exist (the classifier may know it).
            routed = route(text, self.intents, loose=False)
            result = rendered(routed)
        unanswered = routed.match is not None and routed.match.intent == "find"
        if result is None and (unanswered or routed.how in ("model", "unsure")):
            # No rule placed it, or a lookup found nothing by the words it took as the item.
            placed = self._by_record(text, at, routed)
            result = rendered(placed)
            if result is not None or placed.how != "meaning":
                routed = placed
        if result is None:
            return None, routed
        result.latency_ms = (time.perf_counter() - start) * 1000.0
        return result, routed

    def _by_record(
        self, text: str, at: datetime, routed: Routed, *, narrow: bool = True, gist: bool = True
    ) -> Routed:
        """A question no rule placed that names one of the user's records in words of its
        own (`lookup.named_record`): looked up as that record, asked the way the sentence
        asks (done or not, when, or whether it is there); failing its words, by its gist's
        meaning (`gist`, `_by_meaning`). Otherwise `routed` unchanged."""
        core = normalize(text)
        named = lookup.asked_about(text, core)
        if self.store is None or not named:
            return routed
        try:
            tasks = lookup.task_records(self.store.tasks.find())
            reminders = lookup.reminder_records(self.store.reminders.open())
        except (StoreError, sqlite3.Error):
            return routed
        try:
            titles = self.calendar.titles() if self.calendar is not None else []
        except CalendarError:
            titles = []  # a calendar that cannot be read leaves the tasks and reminders
        events = [lookup.Record(t, t, "event") for t in titles]
        # Asked about a reminder, the reminders answer first; asked when, the records that
        # have a time ("which evening is the choir concert": the concert, not the task of
        # selling its tickets); asked whether it is done, the tasks. A question that shares
        # one word with a record names it only among those (`narrow`).
        if _REMINDED.search(core):
            kind = reminders
        elif _WHEN_ASKED.search(core):
            kind = [r for r in tasks if r.when and not r.done] + reminders + events
        elif _DONE.search(core) or _LISTED.search(core):
            kind = tasks
        else:
            kind = []
        # "Wait for a visa", "any visa": no one record of the user's is meant.
        one = lookup.firm(named)
        narrow = narrow and not (
            len(one) == 1 and re.search(_ANY_ONE + re.escape(one[0]) + r"\b", core)
        )
        record = lookup.named_record(named, kind, narrowed=narrow) if kind else None
        if record is None:
            record = lookup.named_record(named, tasks + reminders + events)
        if record is None:
            # A read of what is coming asks about one thing only where it names one beyond
            # how it asks ("have I booked a hotel for the Sydney trip", not "what have I got
            # coming up"); the list of what is next would not answer it.
            gist = gist and (narrow or len([w for w in named if w not in _COMING]) >= 2)
            return self._by_meaning(named, core, routed) if kind and gist else routed
        if record.kind == "task" and _DONE.search(core) and not _LISTED.search(core):
            within = "done"
        elif _LISTED.search(core) or (record.kind == "task" and not record.when):
            within = ""
        else:
            within = "when"
        return Routed(Match("find", item=record.title, within=within), "records", routed.verdict)

    @staticmethod
    def _by_meaning(named: list[str], core: str, routed: Routed) -> Routed:
        """A question that asks about one of the user's records the way `_by_record` reads
        ("did I put down writing up the vibration readings") in words no record holds: what it
        names, as its gist. Only the record nearest it in meaning then answers, said as the
        nearest in its own words and never as a yes (`intent_specs._gist`); with none near
        enough, the question stays where it was placed (the model's)."""
        # Asked of the user's own things, or in words that may be the world's, where only a
        # close record answers.
        mine = _MINE.search(core) or _REMINDED.search(core) or _LISTED.search(core)
        item = " ".join(lookup.firm(named))
        if len(item.split()) < 2:
            # One word lies near too much: "mother" near "call mom" ("when's mother's day"),
            # "birthday" near a birthday present ("how many days until my birthday").
            return routed
        if _REMINDED.search(core):
            within = "reminders"
        elif _WHEN_ASKED.search(core):
            within = "when"
        elif _DONE.search(core) and not _LISTED.search(core):
            within = "done"
        else:
            within = ""
        day: Day = "upcoming"  # no day asked
        if within == "when" and (said := _DAY_SAID.search(core)) is not None:
            # A day the answer can check ("is choir on tomorrow"), or none: a weekday or a
            # date is not checked here, and an answer that ignored it would read as a yes.
            if said.group("day") is None:
                return routed
            day = day_of(said.group("day"))
        match = Match("find", item=item, within=within, day=day, gist="mine" if mine else "close")
        return Routed(match, "meaning", routed.verdict)

    def _render(self, asked: Asked) -> StateResult | None:
        """The intent's own renderer, over the records it reads; its fallback where they
        cannot be read, never "nothing" made of absent data."""
        spec = BY_NAME[asked.match.intent]
        if spec.reads_store and self.store is None:
            # "What do you know about X" may be general knowledge: without notes to read,
            # it is the model's question, not a failure to report.
            return None if asked.match.needs_notes else StateResult(spec.fallback, spec.name)
        # The embedder, loaded when first asked for; it embeds each text once over the
        # questions (`lookup.Remembered`): a lookup compares the item with the same record
        # titles when it checks that a record holds it, again when it answers, and again at
        # the next question.
        embed = functools.cache(self._embed)
        sources = Sources(self.store, self.settings, self.calendar, self.context_usage, embed)
        try:
            return spec.render(sources, asked)
        except (StoreError, sqlite3.Error):
            return StateResult(spec.fallback, spec.name)
        except CalendarError as exc:
            # Never "nothing is scheduled" from a calendar that could not be read.
            return StateResult(f"I can't read your calendar right now: {exc}", spec.name)

    def _embed(self) -> lookup.Embed | None:
        """The notes' embedding model, for matching an item by meaning; None when not loaded."""
        model = self.intents.model() if self.intents is not None else None
        if model is None:
            return None
        return self._remembered.over(model, lambda texts: model.embed(texts))
