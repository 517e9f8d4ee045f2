"""Each status question the state path answers, in one place: one `IntentSpec` per intent.

A spec holds what the intent answers (one line, what `python -m bot route` and the docs say),
the slots it reads out of a question, how it is placed (the keywords that propose it and the
anchored rules that must match the whole normalized sentence), how it is answered
(`render`, from the records in `Sources`), and what is said when its records cannot be read
(`fallback`). Its examples, when the classifier decides it too, are the data file
`context/examples/<name>.txt` (`context.intent_examples`). `SPECS` is every intent, in the
order the keyword pass tries them; a `Match` is one question as placed: its intent and the
slots read from it.

Adding an intent: its name in `context.state_vocab.Intent`, a spec here with its rules and
renderer, an examples file (and the label in `context.intent_examples.LABELS`, then
`python -m context.intents` to retrain) if the classifier is to place it, and a test. The
state path (`context.state`) and the router (`context.state_rules`) read everything else from
the spec.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from context import lookup
from context import state_answers as answers
from context.clocks import (
    Hours,
    date_phrase,
    day_named,
    hours_asked,
    part_of_day,
    span_named,
    time_in,
)
from context.intent_examples import FOLDER
from context.normalize import normalize
from context.state_answers import StateResult
from context.state_patterns import KEYWORDS, RULES
from context.state_vocab import INTENTS, Day, Intent
from context.wording import spoken_date, spoken_time

if TYPE_CHECKING:
    from config import Settings
    from memory.calendar import Calendar
    from memory.store import Store

# How far back a lookup reads the calendar, for "when was ..." (days): the last week always,
# and further back (`LAST_DAYS`) only for an event with no instance since.
PAST_DAYS = 7
LAST_DAYS = 92
CANT_READ_TASKS = "I can't read your task list right now."
CANT_READ_SCHEDULE = "I can't read your schedule right now."
CANT_READ_APPROVALS = "I can't read the approvals right now, so I did nothing."
CANT_READ_NOTES = "I can't read my notes right now, so I can't tell."
CANT_READ_METER = "I can't tell: the context meter can't be read."


@dataclass(frozen=True)
class Match:
    intent: Intent
    day: Day = "upcoming"
    # "remember": the thing asked about, and whether only notes about it may answer (in
    # "what do you know about X", X may be general knowledge, which is the model's to answer).
    subject: str = ""
    needs_notes: bool = False
    # "How am I feeling lately?": read back what the user said about their mood (`memory.mood`),
    # a question about the notes Annie keeps on the user, so it rides the "remember" intent.
    mood: bool = False
    # "What do you call me?": the name the user gave (`context.user_name`), from the notes and
    # their own words, so it rides the "remember" intent too.
    name: bool = False
    # Questions with an argument (`context.state_arguments`): the item looked up ("find",
    # "timers"), where it is looked for ("list", "reminders", "schedule"; "" everywhere), the
    # place whose clock is asked ("clock"), alarms asked for by that name ("timers").
    item: str = ""
    within: str = ""
    place: str = ""
    alarms: bool = False
    # "find": the one day asked about by weekday or date, ISO ("is my haircut on Friday").
    date: str = ""
    # Asked in words that may be about the world ("when is physio"): answered from the records
    # only where one holds every word of the item, otherwise the model's.
    loose: bool = False
    # The item is the gist of a question no rule read (what it names, in its order): only a
    # record near it in meaning answers, said as the nearest and never as a yes. "mine": asked
    # of the user's own things ("when's my ..."), a record somewhat near answers; "close": no
    # word says whose ("what time does the school concert start"), only one close does.
    gist: str = ""

    def slots(self) -> dict[str, object]:
        """The slots this question fills, by name (what `python -m bot route` shows): those
        its intent's spec reads, where set."""
        out: dict[str, object] = {}
        for name in BY_NAME[self.intent].slots:
            value = getattr(self, name)
            if value and not (name == "day" and value == "upcoming"):
                out[name] = value
        return out


@dataclass(frozen=True)
class Sources:
    """What the renderers read: the store (None when its file could not be opened), the
    user's calendar, the context meter, and the embedding model for matching by meaning."""

    store: Store | None
    settings: Settings
    calendar: Calendar | None = None
    context_usage: Callable[[], tuple[int, int]] | None = None
    embed: Callable[[], lookup.Embed | None] = lambda: None

    def records(self) -> Store:
        """The store, for a renderer whose spec reads it (the resolver checked it is there)."""
        assert self.store is not None, "a spec that reads the store ran without one"
        return self.store

    def calendar_between(self, start: datetime, end: datetime) -> list[answers.Event]:
        """The calendar's events in [start, end); none without a calendar."""
        if self.calendar is None:
            return []
        return [(e.id, e.title, e.start, e.all_day) for e in self.calendar.between(start, end)]

    def events(self, item: str, now: datetime) -> list[lookup.Record]:
        """The next instances of the calendar events whose titles match `item`: titles are
        matched first (cheap), so only those events' recurrences are expanded."""
        if self.calendar is None:
            return []
        titles = [lookup.Record(t, t, "event") for t in self.calendar.titles()]
        found = lookup.find(item, titles, self.embed())
        return self.instances({r.title for r in found.exact or found.close}, now)

    def event_titles(self) -> list[lookup.Record]:
        """Every title on the calendar, as a record with no time (`instances` gives times)."""
        titles = self.calendar.titles() if self.calendar is not None else []
        return [lookup.Record(t, t, "event") for t in titles]

    def instances(self, wanted: set[str], now: datetime) -> list[lookup.Record]:
        """The next instances of the events titled as in `wanted`."""
        if self.calendar is None or not wanted:
            return []
        # From a week back: "when was the Lindqvist tuning" asks about one just past (the
        # answer says the coming ones first).
        since = now - timedelta(days=PAST_DAYS)
        events = self.calendar.next_of(wanted, since, limit=lookup.SPOKEN_ITEMS)
        if not events:
            # "When did the grandkids stay over": the last one, up to a season back.
            back = now - timedelta(days=LAST_DAYS)
            earlier = self.calendar.next_of(wanted, back, limit=100)
            events = [e for e in earlier if e.start < since][-1:]
        return [lookup.Record(e.id, e.title, "event", e.start.isoformat()) for e in events]


@dataclass(frozen=True)
class Asked:
    """One question as placed: its match (intent and slots), when, its words, and the
    conversation asking (approval lists mark which ones it can answer)."""

    match: Match
    now: datetime
    text: str
    session_id: str | None = None


Render = Callable[[Sources, Asked], StateResult | None]


@dataclass(frozen=True)
class IntentSpec:
    """One status intent. `keywords` propose it and `rules`, anchored, place it; an intent
    whose question carries an argument (find, timers, clock, dates, agenda) has neither: it is
    placed by `context.state_arguments`, which reads its slots with its own rules, before the
    keyword pass. `render` returns None to leave the question to the model; `fallback` is said
    when the records it reads cannot be."""

    name: Intent
    answers: str
    slots: tuple[str, ...]
    render: Render
    keywords: tuple[str, ...] = ()
    rules: tuple[re.Pattern[str], ...] = ()
    reads_store: bool = True
    fallback: str = CANT_READ_TASKS

    @property
    def examples(self) -> Path:
        """The file of its examples (only intents the classifier places have one)."""
        return FOLDER / f"{self.name}.txt"


# --- renderers ------------------------------------------------------------------------------


def _time(sources: Sources, asked: Asked) -> StateResult:
    return StateResult(f"It's {spoken_time(asked.now)}.", "time")


def _date(sources: Sources, asked: Asked) -> StateResult:
    return StateResult(f"It's {spoken_date(asked.now)}.", "date")


def _clock(sources: Sources, asked: Asked) -> StateResult | None:
    # A place no table knows is the model's: never the local time said as its time.
    said = time_in(asked.match.place, asked.now)
    return StateResult(said, "clock") if said is not None else None


def _dates(sources: Sources, asked: Asked) -> StateResult | None:
    dated = date_phrase(normalize(asked.text), asked.now)
    return StateResult(dated.text, "dates") if dated is not None else None


def _context(sources: Sources, asked: Asked) -> StateResult:
    if sources.context_usage is None:
        return StateResult(
            "I can't tell how full the context is here; no conversation is running.", "context"
        )
    try:
        used, window = sources.context_usage()
    except Exception:
        # A broken meter must not become a made-up number.
        return StateResult(CANT_READ_METER, "context")
    if window <= 0:
        return StateResult(CANT_READ_METER, "context")
    used = min(max(used, 0), window)
    percent = round(100 * used / window)
    # Both ways round, so nobody wonders whether the percentage is what is used or left.
    text = f"About {percent} percent used, {window - used:,} of {window:,} tokens left."
    return StateResult(text, "context")


def _approvals(sources: Sources, asked: Asked) -> StateResult:
    return answers.approvals_answer(sources.records(), asked.now, asked.session_id)


def _pending(sources: Sources, asked: Asked) -> StateResult:
    return answers.pending_answer(sources.records(), asked.now, asked.session_id)


def _list(sources: Sources, asked: Asked) -> StateResult:
    return answers.list_answer(sources.records())


def _blocked(sources: Sources, asked: Asked) -> StateResult:
    return answers.blocked_answer(sources.records())


def _remember(sources: Sources, asked: Asked) -> StateResult | None:
    found, store = asked.match, sources.records()
    if found.mood:
        return answers.mood_answer(store, asked.now)
    if found.name:
        return answers.name_answer(store, asked.now)
    floor = sources.settings.context.evidence_min_similarity
    return answers.remember_answer(store, found.subject, found.needs_notes, floor)


def _schedule(sources: Sources, asked: Asked) -> StateResult:
    day, now = asked.match.day, asked.now
    hours = _hours_said(asked.text) if day != "overdue" else None
    if hours is not None:
        # "Any meetings between 2 and 5": the hours of the day asked about (today unless it
        # says otherwise).
        start, _, label = answers.day_window("tomorrow" if day == "tomorrow" else "today", now)
        return _hours(sources, start, label, hours, now)
    return answers.schedule_answer(sources.records(), day, now, sources.calendar_between)


def _hours_said(text: str) -> Hours | None:
    """The hours a schedule read placed on a day narrows to: said as hours ("between 2 and
    5") or as a part of the day ("tomorrow evening")."""
    core = normalize(text)
    return hours_asked(core) or part_of_day(core)


def _hours(
    sources: Sources, midnight: datetime, label: str, hours: Hours, now: datetime
) -> StateResult:
    """What falls in the hours asked about of the day that starts at `midnight`."""
    start = midnight + timedelta(minutes=hours.start)
    end = midnight + timedelta(minutes=hours.end)
    said = f"{label} {hours.said()}"
    events = sources.calendar_between(start, end)
    return answers.window_answer(sources.records(), start, end, said, now, events)


def _timers(sources: Sources, asked: Asked) -> StateResult:
    reminders = sources.records().reminders.open()
    return lookup.timers_answer(reminders, asked.match.item, asked.match.alarms, asked.now)


def _holds(item: str, records: list[lookup.Record], embed: lookup.Embed | None) -> bool:
    """Whether one of `records` answers for an item named loosely: it holds every word of it,
    it alone holds most of them, or it alone is near it in meaning (the answer then says it
    as close, in the record's own words, never as a yes)."""
    return (
        bool(lookup.find(item, records).exact)
        or lookup.strongest(item, records) is not None
        or lookup.meant(item, records, embed) is not None
    )


def _find(sources: Sources, asked: Asked) -> StateResult | None:
    found, now, embed = asked.match, asked.now, sources.embed()
    tasks = lookup.task_records(sources.records().tasks.find())
    if found.gist:
        return _gist(sources, asked, tasks)
    # Words that may be about the world (`Match.loose`): the records answer only where one
    # holds the item, and otherwise the model does.
    if found.within == "done":
        if found.loose and not _holds(found.item, tasks, embed):
            return None
        return lookup.done_answer(found.item, tasks, now, embed)
    reminders = lookup.reminder_records(sources.records().reminders.open())
    events = sources.events(found.item, now)
    if found.loose and not _holds(found.item, tasks + reminders + events, embed):
        return None
    timed = [r for r in tasks if r.when] + reminders + events
    if found.within in ("when", "until"):
        day = found.date or ("" if found.day == "upcoming" else found.day)
        until = found.within == "until"
        said = lookup.when_answer(found.item, day, timed, now, embed, until=until)
        return said if said.sources else _noted(sources, found.item, said)
    places = {"list": tasks, "reminders": reminders, "schedule": timed}
    return lookup.membership_answer(found.item, found.within, places, now, embed)


def _gist(sources: Sources, asked: Asked, tasks: list[lookup.Record]) -> StateResult | None:
    """A question no rule read, about the one record nearest its gist in meaning, among the
    kind it asks about; None (the model's) where no record is near enough."""
    found, now = asked.match, asked.now
    if found.within == "done":
        records = tasks
    else:
        reminders = lookup.reminder_records(sources.records().reminders.open())
        events = sources.event_titles()
        if found.within == "reminders":
            records = reminders
        elif found.within == "when":
            records = [r for r in tasks if r.when and not r.done] + reminders + events
        else:
            records = tasks + reminders + events
    near = lookup.meant(found.item, records, sources.embed(), gist=found.gist == "mine")
    if near is not None and near.kind == "event":
        # The event's instance: the next one, or the last one lately.
        near = next(iter(sources.instances({near.title}, now)), None)
    if near is None:
        return None
    return lookup.gist_answer(near, "" if found.day == "upcoming" else found.day, now)


def _noted(sources: Sources, item: str, unfound: StateResult) -> StateResult:
    """No record holds `item`: where notes are about it (every word of it, or judged so as the
    "what did I tell you about" answer judges them, `notes_about`), the answer says them after
    the records read, since a bare "I don't see it" would be wrong where the user told Annie
    when it is. Notes that share only some of its words are not said."""
    floor = sources.settings.context.evidence_min_similarity
    hits, about = answers.notes_about(sources.records(), item, floor, gate=True)
    if not hits or not about:
        return unfound
    said = "; ".join(h.text.rstrip(".") for h in hits)
    lead = "A note says" if len(hits) == 1 else "Notes say"
    return StateResult(f"{unfound.text} {lead}: {said}.", "find", [h.id for h in hits])


def _agenda(sources: Sources, asked: Asked) -> StateResult:
    """The schedule of one named day ("anything on my calendar for the 21st": the item is
    the day's words, `context.clocks.day_named`), or of a span of days ("next week", "in
    March": the item is the span's words, `context.clocks.span_named`). Both are read against
    the time asked, not the time the sentence was placed."""
    now = asked.now
    day = day_named(asked.match.item, now.date())
    span = None if day is not None else span_named(asked.match.item, now.date())
    if span is not None:
        # A span that starts today starts now: what is over today is not to come.
        start = now if span.first == now.date() else answers.midnight(span.first, now)
        end = answers.midnight(span.end, now)
        events = sources.calendar_between(start, end)
        return answers.window_answer(
            sources.records(), start, end, span.said, now, events, dated=True
        )
    if day is None:
        # Words that named a day when the sentence was placed name one now too; if not, the
        # day is unknown, and saying so beats reading the wrong one.
        return StateResult("I can't tell which day that is.", "agenda")
    start, end, label = answers.date_window(day, now)
    hours = _hours_said(asked.text)
    if hours is not None:
        return _hours(sources, start, label, hours, now)
    events = sources.calendar_between(start, end)
    return answers.window_answer(sources.records(), start, end, label, now, events)


# --- the intents ----------------------------------------------------------------------------

SPECS: tuple[IntentSpec, ...] = (
    # First: "anything waiting for my approval?" is also a pending question, and the answer
    # it needs names the waiting actions, not the tasks.
    IntentSpec(
        "approvals",
        "the actions waiting for the user's yes, each with what it would do",
        (),
        _approvals,
        keywords=KEYWORDS["approvals"],
        rules=tuple(RULES["approvals"]),
        fallback=CANT_READ_APPROVALS,
    ),
    # Before "pending": "what is waiting on someone else" is about others, not the user.
    IntentSpec(
        "blocked",
        "the tasks that are blocked or wait on someone else",
        (),
        _blocked,
        keywords=KEYWORDS["blocked"],
        rules=tuple(RULES["blocked"]),
    ),
    IntentSpec(
        "pending",
        "what waits on the user: open tasks due soonest, and approvals owed",
        (),
        _pending,
        keywords=KEYWORDS["pending"],
        rules=tuple(RULES["pending"]),
    ),
    IntentSpec(
        "list",
        "the open tasks",
        (),
        _list,
        keywords=KEYWORDS["list"],
        rules=tuple(RULES["list"]),
    ),
    IntentSpec(
        "schedule",
        "reminders, due tasks and calendar events of a day, a week, or overdue",
        ("day",),
        _schedule,
        keywords=KEYWORDS["schedule"],
        rules=tuple(RULES["schedule"]),
        fallback=CANT_READ_SCHEDULE,
    ),
    IntentSpec(
        "time",
        "the local time",
        (),
        _time,
        keywords=KEYWORDS["time"],
        rules=tuple(RULES["time"]),
        reads_store=False,
    ),
    IntentSpec(
        "date",
        "today's date",
        (),
        _date,
        keywords=KEYWORDS["date"],
        rules=tuple(RULES["date"]),
        reads_store=False,
    ),
    IntentSpec(
        "context",
        "how full the conversation's context window is",
        (),
        _context,
        keywords=KEYWORDS["context"],
        rules=tuple(RULES["context"]),
        reads_store=False,
    ),
    IntentSpec(
        "remember",
        "what the notes say about the user or a subject, the user's mood, their name",
        ("subject", "needs_notes", "mood", "name"),
        _remember,
        keywords=KEYWORDS["remember"],
        rules=tuple(RULES["remember"]),
        fallback=CANT_READ_NOTES,
    ),
    IntentSpec(
        "find",
        "one item on the list, the reminders or the schedule: is it there, is it done, when",
        ("item", "within", "day", "date", "loose", "gist"),
        _find,
    ),
    IntentSpec(
        "timers",
        "running timers and alarms, and how long is left",
        ("item", "alarms"),
        _timers,
    ),
    IntentSpec(
        "clock",
        "the time in another place (a place no table knows is the model's)",
        ("place",),
        _clock,
        reads_store=False,
    ),
    IntentSpec(
        "dates",
        "a date to come or gone ('in five days', 'next Friday')",
        (),
        _dates,
        reads_store=False,
    ),
    IntentSpec(
        "agenda",
        "the schedule of one named day or span of days",
        ("item",),
        _agenda,
        fallback=CANT_READ_SCHEDULE,
    ),
)
BY_NAME: dict[Intent, IntentSpec] = {spec.name: spec for spec in SPECS}
assert set(BY_NAME) == set(INTENTS), "every intent has one spec, and every spec an intent"
