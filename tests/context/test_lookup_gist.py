"""A question about one of the user's records that no rule reads and that shares too few words
with any record: the record nearest its gist in meaning answers, said as the nearest and never
as a yes; with none near enough, the question is the model's. Through the real state path,
classifier, SQLite store, .ics calendar and all-MiniLM-L6-v2."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from config import Settings
from context.intents import IntentIndex
from context.state import StateResolver
from memory.calendar import Calendar
from memory.store import Store

NOW = datetime(2026, 12, 8, 9, tzinfo=UTC)  # a Tuesday
CALENDAR = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n"
    "BEGIN:VEVENT\r\nUID:dentist@t\r\nSUMMARY:Dentist check-up – Dr Okafor\r\n"
    "DTSTART:20261211T180000Z\r\nDTEND:20261211T200000Z\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:pumpkins@t\r\nSUMMARY:Pumpkin carving at Jo's\r\n"
    "DTSTART:20261031T160000Z\r\nDTEND:20261031T180000Z\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n"
)


@pytest.fixture
def resolver(store: Store, settings: Settings, index: IntentIndex, tmp_path: Path) -> StateResolver:
    store.tasks.add("Renew RAC breakdown cover")
    store.tasks.add("Descale the coffee machine", status="done")
    store.tasks.add("Order Christmas cards")
    store.reminders.add("Pick up dry cleaning", "2026-12-09T17:00:00+00:00")
    ics = tmp_path / "family.ics"
    ics.write_text(CALENDAR)
    return StateResolver(store, settings, intents=index, calendar=Calendar([ics]))


def _asked(resolver: StateResolver, question: str) -> tuple[str | None, str]:
    answer, routed = resolver.resolve_routed(question, NOW)
    return (answer.text if answer else None), routed.how


def test_a_task_asked_in_other_words_is_said_as_the_nearest_with_its_state(
    resolver: StateResolver,
) -> None:
    said, how = _asked(resolver, "okay so is sorting the xmas cards on my list or not")
    assert how == "meaning", (said, how)
    assert said == 'Not in those words; the nearest I have: "Order Christmas cards", still open.'
    done, _ = _asked(resolver, "okay so the coffee maker cleaning did that get done")
    assert done == 'Not in those words; the nearest I have: "Descale the coffee machine", done.'


def test_an_event_asked_in_other_words_is_said_with_when_it_is(resolver: StateResolver) -> None:
    said, how = _asked(resolver, "am I getting my teeth checked this week")
    assert how == "meaning", (said, how)
    assert said is not None and said.startswith("Not in those words; the nearest I have: Dentist")
    assert "Friday" in said, said
    # Asked of a day it is not: the answer says so before naming it.
    not_then, _ = _asked(resolver, "am I getting my teeth checked tomorrow")
    assert not_then is not None and not_then.startswith("Nothing tomorrow in those words;")
    assert "Dentist check-up" in not_then and "Friday" in not_then, not_then


def test_a_question_nothing_is_near_is_the_models(resolver: StateResolver) -> None:
    # A read of what is coming that names a thing no record is near: not the list of what is
    # next, which would read as its answer.
    assert _asked(resolver, "have I got a hotel booked for the Rome trip")[0] is None
    assert _asked(resolver, "did I renew my passport")[0] is None
    # One word is the model's, though a record is near it in meaning.
    assert _asked(resolver, "when's halloween")[0] is None
    assert _asked(resolver, "how many days until my birthday")[0] is None
    # The list of what is coming is still the list.
    coming, _ = _asked(resolver, "what have I got coming up")
    assert coming is not None and coming.startswith("Next:"), coming
