"""Status questions that carry an argument, answered from a real store: membership, lookup,
timers, other clocks and dates counted from today; goodbyes never taken as status reads."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from config import Settings
from context.clocks import day_named
from context.intents import IntentIndex
from context.lookup import Record, asked_about, named_record, strongest, timers_answer
from context.normalize import normalize
from context.state import StateResolver
from context.state_arguments import argued, farewell
from context.state_rules import route
from memory.calendar import Calendar
from memory.rows import ReminderRow
from memory.store import Store


def _now() -> datetime:
    # Timers count from the real clock (`add_timer`), so these answers are read at it too.
    return datetime.now().astimezone()


def _resolver(store: Store, settings: Settings) -> StateResolver:
    return StateResolver(store, settings, lambda: (1, 2))


@pytest.fixture
def seeded(store: Store) -> Store:
    now = _now()
    store.tasks.add("do the laundry")
    store.tasks.add("book the dentist", due=now + timedelta(days=2))
    store.tasks.add("pay the gas bill", status="done")
    store.reminders.add("call mom", now + timedelta(hours=3))
    store.reminders.add("meeting with Ann", now + timedelta(days=1))
    return store


@pytest.mark.parametrize(
    ("question", "starts", "holds"),
    [
        ("is laundry on my to-do list", "Yes", '"do the laundry" is on your list'),
        ("did I put the laundry on my list?", "Yes", '"do the laundry"'),
        ("Is there an item called dentist on my list", "Yes", "due"),
        ("is milk on my todo list", "No", "milk isn't on your list"),
        ("is the gas bill still on my list", '"pay the gas bill"', "it is done"),
        ("do I have call mom in my reminders", "Yes", '"call mom" is in your reminders'),
        ("is the dentist in my reminders", "Not in your reminders", "book the dentist"),
    ],
)
def test_membership_is_said_with_the_record_s_own_words(
    seeded: Store, settings: Settings, question: str, starts: str, holds: str
) -> None:
    result = _resolver(seeded, settings).resolve(question, now=_now())
    assert result is not None, question
    assert result.intent == "find"
    assert result.text.startswith(starts) and holds in result.text, result.text


def test_a_yes_names_the_records_it_read(seeded: Store, settings: Settings) -> None:
    result = _resolver(seeded, settings).resolve("is laundry on my list", now=_now())
    assert result is not None
    laundry = [t.id for t in seeded.tasks.find() if t.title == "do the laundry"]
    assert result.sources == laundry


def test_when_is_my_event(seeded: Store, settings: Settings) -> None:
    resolver = _resolver(seeded, settings)
    result = resolver.resolve("when is my meeting with Ann", now=_now())
    assert result is not None and result.intent == "find"
    assert result.text.startswith("Meeting with Ann, tomorrow at"), result.text
    asked = resolver.resolve("is the meeting with Ann today", now=_now())
    assert asked is not None and asked.text.startswith("Not today: meeting with Ann, tomorrow")
    held = resolver.resolve("what time is the meeting I have with Ann", now=_now())
    assert held is not None and held.text.startswith("Meeting with Ann, tomorrow at"), held.text


def test_a_day_named_by_weekday_or_date_is_checked_against_the_record(
    seeded: Store, settings: Settings
) -> None:
    resolver = _resolver(seeded, settings)
    now = _now()
    ann = now + timedelta(days=1)
    on_day = resolver.resolve(f"is my meeting with Ann on {ann:%A}", now=now)
    assert on_day is not None and on_day.text.startswith("Yes: meeting with Ann"), on_day
    other = now + timedelta(days=4)
    said = f"is it true that my meeting with Ann is on the {other.day}th"
    off_day = resolver.resolve(said, now=now)
    assert off_day is not None, said
    assert off_day.text.startswith(f"Not on {other:%A}, {other:%B} {other.day}: meeting with Ann")
    assert route(f"is my meeting with Ann on {ann:%A}").match.date == ann.date().isoformat()
    # Words after "on" that name no day are not read as one.
    for question in ("is my meeting with ann on the agenda", "is my meeting with ann on the 45th"):
        found = argued(question)
        assert found is None or found.date == "", (question, found)


@pytest.mark.parametrize(
    "question",
    ["how long until my meeting with Ann", "how many days till my meeting with ann"],
)
def test_how_long_until_an_event_is_said_first(
    seeded: Store, settings: Settings, question: str
) -> None:
    result = _resolver(seeded, settings).resolve(question, now=_now())
    assert result is not None and result.intent == "find", question
    assert result.text.startswith("In a day: meeting with Ann, tomorrow at"), result.text


@pytest.mark.parametrize("question", ["what date is my anniversary", "how soon is my anniversary"])
def test_other_ways_to_ask_when_say_where_they_looked(
    store: Store, settings: Settings, question: str
) -> None:
    result = _resolver(store, settings).resolve(question, now=_now())
    assert result is not None, question
    assert result.text == "I don't see an anniversary in your schedule, reminders or tasks."


def test_deliveries_and_countdowns_are_read_only_where_a_record_holds_them(
    store: Store, settings: Settings
) -> None:
    # A takeaway or a ride is the shop's or the driver's to say when no record holds it, and
    # counting down to a day no record holds is arithmetic on a date the model may know.
    resolver = _resolver(store, settings)
    assert resolver.resolve("how long until my takeaway", now=_now()) is None
    assert resolver.resolve("how long until my order arrives", now=_now()) is None
    assert resolver.resolve("how many days till my graduation", now=_now()) is None


def test_when_is_something_no_record_holds_says_where_it_looked(
    seeded: Store, settings: Settings
) -> None:
    # Never a bare "no": the answer names the records it read.
    result = _resolver(seeded, settings).resolve("when is my flight to Rome", now=_now())
    assert result is not None and result.intent == "find"
    assert result.text == "I don't see a flight to rome in your schedule, reminders or tasks."


def test_when_is_something_only_a_note_holds_says_the_note(
    seeded: Store, settings: Settings
) -> None:
    # The user told Annie when it is without making it a record: "I don't see it" alone would
    # be a wrong answer. A note that shares one word of it is not about it.
    seeded.notes.add("The flight to Rome leaves Friday at 7 from gate B.")
    seeded.notes.add("Rome in spring is lovely.")
    result = _resolver(seeded, settings).resolve("when is my flight to Rome", now=_now())
    assert result is not None and result.intent == "find"
    flight = [n.id for n in seeded.notes.recent(5) if "gate B" in n.text]
    assert result.sources == flight, result
    assert result.text == (
        "I don't see a flight to rome in your schedule, reminders or tasks. "
        "A note says: The flight to Rome leaves Friday at 7 from gate B."
    )


def test_timers_and_what_is_left_on_them(store: Store, settings: Settings) -> None:
    resolver = _resolver(store, settings)
    none = resolver.resolve("is my timer still running", now=_now())
    assert none is not None and none.text == "No timer is running."
    store.reminders.add_timer(600, "pasta")
    store.reminders.add_timer(3600, "bread")
    pasta = resolver.resolve("how long is left on the pasta timer?", now=_now())
    assert pasta is not None and pasta.intent == "timers"
    assert "left on the" in pasta.text and "pasta" in pasta.text and "bread" not in pasta.text
    both = resolver.resolve("what timers do I have", now=_now())
    assert both is not None and "pasta" in both.text and "bread" in both.text
    eggs = resolver.resolve("how long is left on the eggs timer", now=_now())
    assert eggs is not None and eggs.text.startswith("No eggs timer is running")


def test_time_left_in_whole_hours_says_no_minutes() -> None:
    now = _now()
    due = (now + timedelta(hours=2)).isoformat()
    bread = ReminderRow("rem-1", "bread", due, "open", now.isoformat(), kind="timer")
    said = timers_answer([bread], "", False, now).text
    assert said == "Two hours left on the bread.", said
    later = replace(bread, due=(now + timedelta(hours=2, minutes=5)).isoformat())
    assert timers_answer([later], "", False, now).text == (
        "Two hours and five minutes left on the bread."
    )


def test_alarms_are_the_reminders_to_come(seeded: Store, settings: Settings) -> None:
    result = _resolver(seeded, settings).resolve("what alarms do I have", now=_now())
    assert result is not None and result.intent == "timers"
    assert "call mom" in result.text and "meeting with Ann" in result.text


def test_the_clock_in_another_place(store: Store, settings: Settings) -> None:
    resolver = _resolver(store, settings)
    tokyo = resolver.resolve("What time is it in Tokyo right now?")
    assert tokyo is not None and tokyo.intent == "clock"
    assert tokyo.text.startswith("In Tokyo it's")
    # A place no table knows is the model's, never the local time said as its time.
    assert resolver.resolve("what time is it in narnia") is None


def test_dates_counted_from_today(store: Store, settings: Settings) -> None:
    result = _resolver(store, settings).resolve("what's the date in 5 days")
    assert result is not None and result.intent == "dates"
    assert result.text.startswith("It will be ")


@pytest.mark.parametrize(
    "text", ["bye", "later", "signing off", "ok thanks Annie", "talk to you later", "good night"]
)
def test_goodbyes_are_never_status_reads(store: Store, settings: Settings, text: str) -> None:
    core = normalize(text)
    assert farewell(core) or not core  # normalizing may leave nothing of a thanks
    assert route(text).match is None
    assert _resolver(store, settings).resolve(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "is milk on my shopping list",  # Annie keeps one to-do list, not a shopping list
        "when is the super bowl",
        "what time is it in the morning in spain when it's noon here",
        "is it on my list",  # no item named
        "add laundry to my list",  # a change, not a read
        "is there a phone number for sam on my list",  # the address book's, not the list's
        "do i have an email address for priya in my list",
    ],
)
def test_look_alikes_carry_no_argument(text: str) -> None:
    found = argued(normalize(text))
    assert found is None or found.intent not in ("find", "clock"), found


def test_someone_s_event_on_a_day_is_checked_and_said_as_theirs(
    store: Store, settings: Settings
) -> None:
    now = _now()
    day = now + timedelta(days=3)
    store.reminders.add("Rosa's birthday dinner", day)
    resolver = _resolver(store, settings)
    yes = resolver.resolve(f"is it true that rosa's birthday is on {day:%A}", now=now)
    assert yes is not None and yes.text.startswith("Yes: Rosa's birthday dinner"), yes
    # No record: said back as the person's, with no article ("a tom party" before).
    none = resolver.resolve(f"is tom's party on {day:%A}", now=now)
    assert none is not None and "tom's party" in none.text and "a tom" not in none.text, none


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("fifteenth of this month", date(2026, 12, 15)),
        ("the fourth of this month", date(2026, 12, 4)),  # this month's, though past
        ("twenty second of next month", date(2027, 1, 22)),
        ("march one", date(2027, 3, 1)),
        ("may twenty two", date(2027, 5, 22)),
        ("thirty first of next month", date(2027, 1, 31)),
        ("thirty first of the month", date(2026, 12, 31)),
        ("february thirty", None),
    ],
)
def test_days_said_of_this_month_or_as_a_month_and_a_number(
    phrase: str, expected: date | None
) -> None:
    assert day_named(phrase, date(2026, 12, 7)) == expected


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("please list active alarms", "timers"),
        ("when does my alarm go off", "timers"),
        ("what time will my alarm wake me up", "timers"),  # waking asked about, not set
        ("set an alarm for six am", None),
        ("can you wake me up at seven", None),
        ("olly cancel all my alarms", None),
        ("how do alarms work", None),
        ("give me the time in london", "clock"),
        ("new york time", "clock"),
        ("what is the current central time", "clock"),
        ("what is the time", "time"),  # the local clock, not another place's
        ("lunch time", None),
        ("list out my meetings today", "schedule"),
        ("show me my events", "schedule"),
        ("do i have a dentist appointment on monday", "agenda"),
        ("any events in my town this weekend", None),  # the town's events, not the user's
        ("what is the best calendar app", None),
        ("i want to plan my sister's birthday", None),  # a plan to make, not one to read
        ("open my list", "list"),
        ("what lists do i have", None),  # Annie keeps one list; the model says so
        ("anything is ok with me", None),
        ("the march events are to be added to my calendar", None),  # a change, not a read
        ("what do i have next week", "agenda"),
        ("any meetings in the first week of june", "agenda"),
        ("could you confirm what i just said", None),
        # Alarms the user asks to have confirmed, and alerts only when said to be theirs.
        ("just to check you set my alarm for seven", "timers"),
        ("have a look if i have set an alarm for monday", "timers"),
        ("read out the alerts i have set", "timers"),
        ("any flood alerts near the river", None),
        ("is email sam on my list", "find"),  # a task about writing to someone
        # Another zone asked as a conversion or a guess; the one said last is read.
        ("convert the time from pst to cet", "clock"),
        ("switch this time to central", "clock"),
        ("if i were in singapore what time would it be", "clock"),
        ("is it midnight in sydney yet", "clock"),
        ("switch my time zone to tokyo", None),  # sets the device's clock
        ("convert this to euros", None),
        ("what is the time in this city", "time"),  # the local clock, asked as a place
        ("what's the time at ten", None),  # an hour, though the city table holds a "Ten"
        ("tell me the time in my time zone", "time"),
        # What goes on at a place is the world's, unless the user asks of their own.
        ("any concerts near me tomorrow", None),
        ("what's going on in denver this weekend", None),
        ("whats around here tonight", None),
        ("what is on my calendar in denver this weekend", "schedule"),
        ("what's on my calendar in june", "agenda"),
        # Asked to say the last thing again.
        ("can you say that again", None),
        ("what was it you just said", None),
        # Whether someone's birthday or an event falls on a day: the user's calendar's to say.
        ("is it true that rosa's birthday is on june second", "find"),
        ("june second is rosa's birthday right", "find"),
        ("is the quiz night event on the tenth of this month true", "find"),
        ("is it true that christmas is on december 25th", None),
        # A reminder asked for at a time, or of "that", is a command; the day's reminders a read.
        ("remind me of my nine o'clock call by half eight", None),
        ("remind me about my flight two hours before", None),
        ("remind me of that", None),
        ("remind me of my appointments tomorrow", "schedule"),
        ("is there any pending reminder", "schedule"),
        # Words for others, a list to start, the events of a place.
        ("reply to everyone that i'm stuck in traffic", None),
        ("new grocery list", None),
        ("is there any event around", None),
        # Orders and requests that a read's words would claim first.
        ("start me a fresh list", None),
        ("fresh list", None),
        ("my new camping gear list", None),
        ("tell me when it's half past four", None),
        ("i'd like to hear that part again.", None),
        ("which festivals might we enjoy to attend", None),
        ("concerts we might want to go to this week", None),
        # Events at a place no zone list knows; a time or the calendar is not a place.
        ("show me the upcoming shows in the twin villages", None),
        ("show me events in the coming week", "agenda"),
        ("what's on my list again", "list"),
        # When an event starts, or its day; never when it ends, which the records do not hold.
        ("what time does the book club dinner start tonight", "find"),
        ("which day is the dentist appointment on", "find"),
        ("when does my shift end", None),
        # Events asked of some hours, without "my".
        ("are there any appointments between one and three", "schedule"),
        ("whether there are meetings from ten to noon", "schedule"),
        ("what's happening between one and three", "schedule"),
        ("what's happening between the two leaders", None),
        # An event said as the user's by "I have" after it.
        ("when is the lunch i have with priya", "find"),
        # How full a day is.
        ("am i having a packed day tomorrow", "schedule"),
        ("do i have a quiet one on saturday", "agenda"),
        ("is it a busy day for the airports", None),
        # Sums hold a time read's words.
        ("what is twelve times four", None),
        ("what's eight time six", None),
    ],
)
def test_requests_in_their_own_words(text: str, intent: str | None) -> None:
    match = route(text).match
    assert (match.intent if match else None) == intent, text


def test_a_day_s_agenda_reads_the_calendar_with_the_records(
    store: Store, settings: Settings, tmp_path: Path
) -> None:
    now = _now()
    day = now.date() + timedelta(days=2)
    ics = tmp_path / "home.ics"
    ics.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n"
        f"BEGIN:VEVENT\r\nUID:dentist@t\r\nSUMMARY:Dentist\r\nDTSTART:{day:%Y%m%d}T100000\r\n"
        f"DTEND:{day:%Y%m%d}T110000\r\nEND:VEVENT\r\n"
        f"BEGIN:VEVENT\r\nUID:book@t\r\nSUMMARY:Book club\r\nDTSTART;VALUE=DATE:{day:%Y%m%d}\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    resolver = StateResolver(store, settings, calendar=Calendar([ics]))
    result = resolver.resolve(f"anything on my calendar for {day:%A}", now=now)
    assert result is not None and result.intent == "schedule"
    assert result.text.startswith(f"{day:%A}, {day:%B} {day.day} on your calendar:")
    assert "Dentist at 10 AM" in result.text and "Book club all day" in result.text
    assert set(result.sources) == {"book@t", "dentist@t"}
    when = resolver.resolve("when is my dentist appointment", now=now)
    assert when is not None and when.text.startswith("Dentist, ")


def _in_days(n: int) -> str:
    return f"{_now().date() + timedelta(days=n):%Y%m%d}"


def test_a_span_of_days_reads_every_event_in_it_with_its_day(
    store: Store, settings: Settings, tmp_path: Path
) -> None:
    """ "Next week", "the next three months", "from Monday to Friday": the calendar and the
    records over those days, each said with its day; nothing outside them."""
    now = _now()
    monday = now.date() + timedelta(days=7 - now.weekday())
    ics = tmp_path / "span.ics"
    events = [
        ("early", "Boiler service", _in_days(-1)),  # yesterday: in no span to come
        ("mon", "Team offsite", f"{monday:%Y%m%d}"),
        ("fri", "Piano recital", f"{monday + timedelta(days=4):%Y%m%d}"),
        ("later", "Tax return review", _in_days(60)),
    ]
    ics.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n"
        + "".join(
            f"BEGIN:VEVENT\r\nUID:{uid}@t\r\nSUMMARY:{title}\r\nDTSTART:{day}T100000\r\n"
            f"DTEND:{day}T110000\r\nEND:VEVENT\r\n"
            for uid, title, day in events
        )
        + "END:VCALENDAR\r\n"
    )
    store.reminders.add("renew the passport", datetime.combine(monday, now.timetz()).replace(
        hour=9, minute=0) + timedelta(days=2))  # fmt: skip
    resolver = StateResolver(store, settings, calendar=Calendar([ics]))
    week = resolver.resolve("what do I have next week", now=now)
    assert week is not None and week.intent == "schedule"
    assert week.text.startswith("Next week on your calendar:"), week.text
    assert set(week.sources) == {"mon@t", "fri@t"} | {
        r.id for r in store.reminders.open() if r.text == "renew the passport"
    }
    assert "Team offsite" in week.text and "Piano recital" in week.text
    assert "renew the passport" in week.text
    three = resolver.resolve("any events planned for the next three months", now=now)
    assert (
        three is not None
        and "later@t" in three.sources
        and "in the next three months" in (three.text.lower())
    )
    friday = monday + timedelta(days=4)
    days = resolver.resolve(
        f"anything on my calendar from {monday:%B} {monday.day} to {friday:%B} {friday.day}",
        now=now,
    )
    assert days is not None and set(days.sources) >= {"mon@t", "fri@t"}
    assert "early@t" not in days.sources and "later@t" not in days.sources
    empty = resolver.resolve(f"anything on my calendar in the first week of {monday:%B}", now=now)
    assert empty is not None and empty.intent == "schedule"


@pytest.mark.parametrize(
    ("phrase", "first", "days", "said"),
    [
        ("next week", "monday", 7, "next week"),
        ("the next few days", "today", 3, "in the next few days"),
        ("the next 2 weeks", "today", 14, "in the next two weeks"),
        ("from the 3rd to the 5th of june", "june 3", 3, "from "),
        ("monday to wednesday", "monday", 3, "from Monday"),
    ],
)
def test_spans_of_days_are_read_from_their_words(
    phrase: str, first: str, days: int, said: str
) -> None:
    from datetime import date

    from context.clocks import span_named

    today = date(2026, 12, 2)  # a Wednesday
    span = span_named(phrase, today)
    assert span is not None, phrase
    starts = {"today": today, "monday": date(2026, 12, 7), "june 3": date(2027, 6, 3)}[first]
    assert span.first == starts and (span.end - span.first).days == days, span
    assert span.said.startswith(said), span.said


@pytest.mark.parametrize(
    "phrase",
    [
        "i may go",
        "between two and five",
        "to the shop",
        "what did i do last week",
        "between 9 and 11",
    ],
)
def test_words_that_name_no_span_of_days_are_none(phrase: str) -> None:
    from datetime import date

    from context.clocks import span_in

    assert span_in(phrase, date(2026, 12, 2)) is None, phrase


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("am I free between 2 and 4 tomorrow", "standup@t"),
        ("do I have anything going on at six tomorrow", "dinner@t"),
        ("what do I have after 5 tomorrow", "dinner@t"),
        ("anything on tomorrow before noon", "dentist@t"),
        ("any meetings tomorrow between 9 and 11 in the morning", "dentist@t"),
        ("let me know if there are any events from 2 to 4 tomorrow", "standup@t"),
        ("what's going on tomorrow from five until seven", "dinner@t"),
    ],
)
def test_the_hours_asked_narrow_a_day_s_schedule(
    store: Store, settings: Settings, tmp_path: Path, question: str, names: str
) -> None:
    day = _now().date() + timedelta(days=1)
    ics = tmp_path / "day.ics"
    ics.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n"
        + "".join(
            f"BEGIN:VEVENT\r\nUID:{uid}@t\r\nSUMMARY:{title}\r\nDTSTART:{day:%Y%m%d}T{at}00\r\n"
            f"DTEND:{day:%Y%m%d}T{at[:2]}4500\r\nEND:VEVENT\r\n"
            for uid, title, at in [
                ("dentist", "Dentist", "1000"),
                ("standup", "Standup", "1500"),
                ("dinner", "Dinner with Ann", "1800"),
            ]
        )
        + "END:VCALENDAR\r\n"
    )
    resolver = StateResolver(store, settings, calendar=Calendar([ics]))
    result = resolver.resolve(question, now=_now())
    assert result is not None and result.intent == "schedule", question
    assert result.sources == [names], result.text
    assert result.text.startswith("Tomorrow "), result.text


def test_a_calendar_that_cannot_be_read_is_said_never_nothing(
    store: Store, settings: Settings, tmp_path: Path
) -> None:
    resolver = StateResolver(store, settings, calendar=Calendar([tmp_path / "gone.ics"]))
    result = resolver.resolve("what's on my calendar for friday", now=_now())
    assert result is not None and result.text.startswith("I can't read your calendar right now")
    assert "gone.ics" in result.text


def test_when_is_a_recurring_event_names_its_next_instance(
    store: Store, settings: Settings, tmp_path: Path
) -> None:
    now = _now()
    first = now.date() - timedelta(days=20)
    ics = tmp_path / "choir.ics"
    ics.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:choir@t\r\n"
        f"SUMMARY:Choir practice\r\nDTSTART:{first:%Y%m%d}T190000\r\n"
        f"DTEND:{first:%Y%m%d}T203000\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    resolver = StateResolver(store, settings, calendar=Calendar([ics]))
    result = resolver.resolve("when is my choir practice", now=now)
    assert result is not None and result.intent == "find"
    assert result.text.startswith("Choir practice, ") and "at 7 PM" in result.text
    # The next instance: at most a week ahead, never one of the past ones.
    assert result.sources and result.sources[0].startswith("choir@t#")
    when = datetime.fromisoformat(result.sources[0].split("#", 1)[1])
    assert now - timedelta(days=1) < when.astimezone() < now + timedelta(days=8)


@pytest.fixture
def household(store: Store, tmp_path: Path) -> tuple[Store, Calendar]:
    now = _now()
    store.tasks.add("renew car insurance", status="done")
    store.tasks.add("sign Þóra's permission slip")
    store.tasks.add("buy birdseed")
    store.reminders.add("cancel the Audible trial", now + timedelta(days=2))
    store.tasks.add("send Maya's dentist form", status="done")
    store.tasks.add("pay council tax")
    store.tasks.add("refill the pill organizer")
    store.reminders.add("ring Gareth (boiler)", now + timedelta(days=1))
    store.reminders.add("school photos - order online", now + timedelta(days=4))
    start = (now + timedelta(days=3)).astimezone().strftime("%Y%m%dT%H%M%S")
    past = (now - timedelta(days=3)).astimezone().strftime("%Y%m%dT%H%M%S")
    ics = tmp_path / "cal.ics"
    ics.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n"
        f"BEGIN:VEVENT\r\nUID:e1@t\r\nSUMMARY:Coffee with Dr. Ólafsdóttir\r\nDTSTART:{start}\r\n"
        "END:VEVENT\r\n"
        f"BEGIN:VEVENT\r\nUID:e2@t\r\nSUMMARY:Demo at Vinnslan\r\nDTSTART:{start}\r\n"
        "END:VEVENT\r\n"
        f"BEGIN:VEVENT\r\nUID:e3@t\r\nSUMMARY:Tuning - Lindqvist\r\nDTSTART:{past}\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    return store, Calendar([ics])


@pytest.mark.parametrize(
    ("question", "names"),
    [
        # The task's own verb asks whether it is done.
        ("did I already renew the car insurance", "renew car insurance"),
        ("have I renewed my car insurance yet", "renew car insurance"),
        # The item said first.
        ("birdseed, is that on my to-do list", "buy birdseed"),
        ("the audible trial, do I have a reminder", "cancel the Audible trial"),
        ("thora's permission slip, did I sign it already", "sign Þóra's permission slip"),
        # Accents folded, "doctor" as "dr", and one person's or place's events.
        ("do I have anything with doctor olafsdottir", "Coffee with Dr. Ólafsdóttir"),
        ("hey do I have plans with Dr Olafsdottir", "Coffee with Dr. Ólafsdóttir"),
        ("anything at vinnslan coming up", "Demo at Vinnslan"),
        # A doubled consonant undone: "cancelling" is "cancel".
        ("do I have something about cancelling audible", "cancel the Audible trial"),
        # Most of one record's words, and no other's: said as that record, as close.
        ("have I sent off Maya's dentist form yet", "send Maya's dentist form"),
        ("did I set a reminder to phone the boiler man", "ring Gareth (boiler)"),
        # Past forms a stem does not reach, and a participle alone asks whether it is done.
        ("have I paid the council tax", "pay council tax"),
        # A preamble that sets the scene, not the question.
        ("before I head out, did I already pay the council tax", "pay council tax"),
        # British and American spellings.
        ("is the pill organiser on my list", "refill the pill organizer"),
        # An event just past, and when a reminder goes off.
        ("when was the Lindqvist tuning", "Tuning - Lindqvist"),
        ("when does the school photos reminder go off", "chool photos - order online"),
        # The list named before what it is about.
        ("is there anything on my list about the birdseed", "buy birdseed"),
        ("on my reminders, have I got something for the school photos", "chool photos"),
        # Where an event is, and with whom: the record's own words, with when.
        ("where is the demo", "Demo at Vinnslan"),
        ("who am I having coffee with", "Coffee with Dr. Ólafsdóttir"),
        # Said without commas, the topic before the question, or a tag turning it into one.
        ("gareth and the boiler did i ring him", "Gareth (boiler)"),
        ("the permission slip for thora is that signed", "Þóra's permission slip"),
        ("the vinnslan demo is in three days yeah", "Demo at Vinnslan"),
        # One word only, among the records of the kind asked about: the reminders, or those
        # with a time.
        ("will i be reminded about audible", "Audible trial"),
        ("hang on when was lindqvist", "Tuning - Lindqvist"),
    ],
)
def test_lookups_in_the_words_people_use_name_the_record(
    household: tuple[Store, Calendar], settings: Settings, question: str, names: str
) -> None:
    store, calendar = household
    result = StateResolver(store, settings, calendar=calendar).resolve(question, now=_now())
    assert result is not None, question
    assert names in result.text, result.text


def test_an_item_no_record_holds_is_placed_again_without_the_loose_rules(
    household: tuple[Store, Calendar], settings: Settings
) -> None:
    store, calendar = household
    resolver = StateResolver(store, settings, calendar=calendar)
    # "Did I leave the oven on" is not about the records: no task holds it, so not a "no".
    result, routed = resolver.resolve_routed("did I leave the oven on", now=_now())
    assert result is None and routed.match is None
    assert route("did I leave the oven on").match is not None  # the loose rule did read it


def test_where_a_person_is_is_no_record_s(
    household: tuple[Store, Calendar], settings: Settings
) -> None:
    store, calendar = household
    resolver = StateResolver(store, settings, calendar=calendar)
    store.tasks.add("thank you card for Gareth")
    for question in ("where are you", "who is she with", "where is my phone"):
        assert resolver.resolve(question, now=_now()) is None, question


def test_when_something_arrives_is_read_only_where_a_record_holds_it(
    store: Store, settings: Settings
) -> None:
    # A delivery or a train may be a shop's or a timetable's to say: with no record of it, the
    # model answers, never "I don't see it" said as if the records were the whole world.
    resolver = _resolver(store, settings)
    assert resolver.resolve("when is my parcel being delivered", now=_now()) is None
    store.reminders.add("train to Leeds", _now() + timedelta(hours=5))
    result = resolver.resolve("when is my train to leeds leaving", now=_now())
    assert result is not None and result.intent == "find", result
    assert result.text.startswith("Train to Leeds"), result.text


def test_an_item_named_by_meaning_alone_is_said_as_close_in_the_record_s_words(
    store: Store, settings: Settings, index: IntentIndex
) -> None:
    store.tasks.add("Cancel Spotify family plan")
    store.tasks.add("Move car before street sweeping on Albany St")
    store.tasks.add("Renew car registration")
    store.tasks.add("Clean the oven")
    resolver = StateResolver(store, settings, intents=index)
    # No word of the question is the task's, but its meaning is, and no other task's is.
    said = resolver.resolve("did I put down cancelling the music streaming subscription")
    assert said is not None and said.intent == "find", said
    assert said.text.startswith("Not") and "Cancel Spotify family plan" in said.text, said.text
    said = resolver.resolve("did I already cancel my music subscription")
    assert said is not None and "Cancel Spotify family plan" in said.text, said
    assert said.text.startswith("Not in those words"), said.text
    # Near two records at once, or near none: never a yes made of meaning.
    for question in ("did I add renewing my passport", "did I leave the oven on"):
        said = resolver.resolve(question)
        assert said is None or not said.text.startswith("Yes"), (question, said)


def test_another_person_s_schedule_is_not_the_user_s() -> None:
    assert route("what's on jess's schedule today").match is None
    found = route("what's on today's schedule")
    assert found.match is not None and found.match.intent == "schedule"


def test_the_strongest_record_is_one_alone_holding_most_of_the_words() -> None:
    bills = [Record("t1", "pay gas bill", "task"), Record("t2", "pay water bill", "task")]
    assert strongest("pay the electricity bill", bills) is None  # two hold as much
    assert strongest("pay the gas bill off", bills) == bills[0]
    assert strongest("gas", bills) is None  # one word is an exact match or nothing
    assert strongest("gas meter reading", bills) is None  # one word of three


@pytest.mark.parametrize(
    ("question", "names", "starts"),
    [
        # In other words than any rule reads, the item first or last.
        ("the boiler man gareth, did I ring him already", "ring Gareth (boiler)", ""),
        ("maya's form for the dentist, is that sorted", "send Maya's dentist form", "Yes"),
        ("vinnslan demo, what time does it start", "Demo at Vinnslan", ""),
        ("okay so the pill organiser refill, is that sorted", "refill the pill organizer", "No"),
    ],
)
def test_a_question_naming_one_record_in_its_own_words_is_that_record_s(
    household: tuple[Store, Calendar], settings: Settings, question: str, names: str, starts: str
) -> None:
    store, calendar = household
    resolver = StateResolver(store, settings, calendar=calendar)
    result, routed = resolver.resolve_routed(question, now=_now())
    assert result is not None and routed.how == "records", (question, routed)
    assert names.lower() in result.text.lower() and result.text.startswith(starts), result.text


def test_a_calendar_that_cannot_be_read_leaves_the_records_a_question_names(
    store: Store, settings: Settings, tmp_path: Path
) -> None:
    store.tasks.add("send Maya's dentist form", status="done")
    resolver = StateResolver(store, settings, calendar=Calendar([tmp_path / "gone.ics"]))
    result, routed = resolver.resolve_routed("maya's form for the dentist, is that sorted")
    assert routed.how == "records" and result is not None
    assert result.text.startswith("Yes") and "Maya's dentist form" in result.text
    # And a sentence for the model is still the model's, not an error.
    result, routed = resolver.resolve_routed("what did the romans build in portugal and spain")
    assert result is None and routed.match is None


@pytest.mark.parametrize(
    "text",
    [
        # Statements, orders and talk about a record are not questions about it.
        "Actually the council tax is due on Thursday.",
        "ring gareth about the boiler",
        "what did we decide about the council tax",
        "is it too late to ring gareth about the boiler",
        # One word of a record, or two records alike.
        "is vinnslan a good place for lunch",
        "how is the weather for the demo at the new place",
        # An order with a tag is still an order; one word of a record among others is not
        # the record, even among those with a time.
        "remind me to buy more birdseed yeah",
        "when is the tuning of a piano done by ear",
        "what time does the council meet",
    ],
)
def test_statements_talk_and_one_shared_word_are_not_a_record_s(
    household: tuple[Store, Calendar], settings: Settings, text: str
) -> None:
    store, calendar = household
    result, routed = StateResolver(store, settings, calendar=calendar).resolve_routed(
        text, now=_now()
    )
    assert routed.how != "records", (text, routed, result)


def test_a_record_is_named_only_where_no_other_is_named_as_much() -> None:
    bills = [Record("t1", "pay gas bill", "task"), Record("t2", "pay water bill", "task")]
    asked = "the gas bill, did I pay it"
    assert named_record(asked_about(asked, normalize(asked)), bills) == bills[0]
    asked = "the bill, did I pay it now"  # both hold "pay bill", neither alone
    assert named_record(asked_about(asked, normalize(asked)), bills) is None
    # A word said as written beats one reached by its stem.
    paints = [
        Record("r1", "Return painted sign", "reminder"),
        Record("r2", "Buy paint", "reminder"),
    ]
    asked = "when will you remind me about the paint"
    assert named_record(asked_about(asked, normalize(asked)), paints, narrowed=True) == paints[1]
    assert named_record(asked_about(asked, normalize(asked)), paints) is None  # one word only
    # A word that asks how may be a record's own: "finish" and "meeting" count where held.
    reports = [Record("t1", "Finish report", "task"), Record("t2", "Print report", "task")]
    asked = "did i finish the report"
    assert named_record(asked_about(asked, normalize(asked)), reports) == reports[0]
    lunches = [Record("e1", "Team meeting", "event"), Record("e2", "Team lunch", "event")]
    asked = "what time does the team lunch finish"
    assert named_record(asked_about(asked, normalize(asked)), lunches) == lunches[1]
    asked = "when is the team meeting"
    assert named_record(asked_about(asked, normalize(asked)), lunches) == lunches[0]


def test_a_weekday_before_its_date_and_a_part_of_the_day_narrow_the_agenda(
    store: Store, settings: Settings, index: IntentIndex, tmp_path: Path
) -> None:
    """ "Anything for Tuesday the 18th" is the 18th; "tomorrow evening" the evening's events; the
    day is read as of the time asked, not the time the sentence was placed."""
    now = datetime(2031, 3, 12, 8, 15).astimezone()
    ics = tmp_path / "days.ics"
    events = [("lunch", "Lunch with Ines", "20310318T123000"),
              ("talk", "School talk", "20310313T100000"),
              ("play", "Evening play", "20310313T183000")]  # fmt: skip
    ics.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n"
        + "".join(
            f"BEGIN:VEVENT\r\nUID:{uid}@t\r\nSUMMARY:{title}\r\nDTSTART:{at}\r\nEND:VEVENT\r\n"
            for uid, title, at in events
        )
        + "END:VCALENDAR\r\n"
    )
    resolver = StateResolver(store, settings, intents=index, calendar=Calendar([ics]))
    for asked in ("anything for tuesday the 18th", "what is happening on the 18th please"):
        result = resolver.resolve(asked, now=now)
        assert result is not None and result.sources == ["lunch@t"], (asked, result)
        assert "March 18" in result.text
    evening = resolver.resolve("what do i have on tomorrow evening", now=now)
    assert evening is not None and evening.sources == ["play@t"], evening
