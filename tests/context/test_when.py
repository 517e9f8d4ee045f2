"""Time phrases in a question become the window of days the notes it asks about were written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from context.when import EVENT_SPAN, parse

# A Friday evening.
NOW = datetime(2026, 3, 27, 19, 0, tzinfo=UTC)


def day(y: int, m: int, d: int, tz: timezone = UTC) -> datetime:
    return datetime(y, m, d, tzinfo=tz)


@pytest.mark.parametrize(
    ("question", "since", "until"),
    [
        ("what did I tell you yesterday about the car?", day(2026, 3, 26), day(2026, 3, 27)),
        ("What did I say last Tuesday about the boiler?", day(2026, 3, 24), day(2026, 3, 25)),
        ("what did I note on Friday", day(2026, 3, 27), day(2026, 3, 28)),
        ("and last Friday?", day(2026, 3, 20), day(2026, 3, 21)),
        ("the day before yesterday, what came up?", day(2026, 3, 25), day(2026, 3, 26)),
        ("what did I mention two weeks ago", day(2026, 3, 9), day(2026, 3, 17)),
        ("three days ago", day(2026, 3, 24), day(2026, 3, 25)),
        ("anything about the roof last week?", day(2026, 3, 16), day(2026, 3, 23)),
        ("what did I say last month", day(2026, 2, 1), day(2026, 3, 1)),
        ("what did I say in early February", day(2026, 2, 1), day(2026, 2, 12)),
        ("what did I say in January", day(2026, 1, 1), day(2026, 2, 1)),
        ("in December", day(2025, 12, 1), day(2026, 1, 1)),
    ],
)
def test_a_phrase_names_its_days(question: str, since: datetime, until: datetime) -> None:
    when = parse(question, NOW)
    assert when is not None, question
    assert (when.since, when.until) == (since, until), question


def test_the_rest_of_the_question_keeps_its_words_without_the_phrase() -> None:
    when = parse("What did I tell you last Tuesday about the boiler?", NOW)
    assert when is not None
    assert when.phrase == "last tuesday"
    assert when.rest == "What did I tell you about the boiler?"
    when = parse("What did I note on Wednesday?", NOW)
    assert when is not None and when.rest == "What did I note?"


def test_days_begin_in_the_users_time_zone() -> None:
    tokyo = timezone(timedelta(hours=9))
    when = parse("what did I say yesterday", NOW.astimezone(tokyo))  # Saturday 04:00 there
    assert when is not None
    assert (when.since, when.until) == (day(2026, 3, 27, tokyo), day(2026, 3, 28, tokyo))


def test_an_event_is_left_for_the_caller_to_date() -> None:
    when = parse("What did I say about the plants before the trip?", NOW)
    assert when is not None
    assert (when.anchor, when.relation, when.since, when.until) == ("trip", "before", None, None)
    at = day(2026, 3, 1)
    # "Before the trip" is the weeks before it, not every day since notes began.
    assert (when.bounded(at).since, when.bounded(at).until) == (at - EVENT_SPAN, at)
    assert when.bounded(at).event and not when.event  # recall lowers its floor inside it
    after = parse("after the wedding, how was the suit?", NOW)
    assert after is not None and after.bounded(at).since == at
    assert after.bounded(at).until == at + EVENT_SPAN


@pytest.mark.parametrize(
    ("question", "relation", "anchor", "rest"),
    [
        ("Before Chloe's wedding, what did I need doing to my suit?", "before",
         "chloe's wedding", "what did I need doing to my suit?"),
        ("After my knee op, what did the doctor say?", "after", "knee op",
         "what did the doctor say?"),
        ("When I got back from Lisbon, what did I have to pick up?", "after", "lisbon",
         "what did I have to pick up?"),
        ("How were the plants when I came back from Portugal?", "after", "portugal",
         "How were the plants?"),
        ("Before I went to Lisbon, where was Biscuit going?", "before", "lisbon",
         "where was Biscuit going?"),
        ("What did I buy to get ready for the knee op?", "before", "knee op", "What did I buy?"),
        # "look after" is a verb: the time is the trip.
        ("Who did I get to look after the plants before the Lisbon trip?", "before",
         "lisbon trip", "Who did I get to look after the plants?"),
        ("What did I note about the mail after the trip to Lisbon?", "after",
         "trip to lisbon", "What did I note about the mail?"),
        ("After Chloe and Rafael's wedding, was the hotel dear?", "after",
         "chloe and rafael's wedding", "was the hotel dear?"),
    ],
)  # fmt: skip
def test_events_are_read_however_they_are_said(
    question: str, relation: str, anchor: str, rest: str
) -> None:
    when = parse(question, NOW)
    assert when is not None
    assert (when.relation, when.anchor, when.rest) == (relation, anchor, rest)


@pytest.mark.parametrize(
    "question",
    [
        "What's the wifi password at the cabin?",
        "May I ask what Maya's shoe size is?",
        "What should I buy this Saturday?",  # ahead of today: not a note's day
        "Set a timer for five minutes",
        "Is Tom allergic to anything I should know about before he comes over?",
    ],
)
def test_no_time_phrase_no_window(question: str) -> None:
    assert parse(question, NOW) is None


def test_a_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="time zone"):
        parse("yesterday", datetime(2026, 3, 27, 19, 0))


def test_a_span_of_weekdays_is_when_something_happens_not_when_it_was_said() -> None:
    assert parse("How early is the gym open Monday to Friday?", NOW) is None
    assert parse("what time does the pool open mondays through fridays", NOW) is None
    said = parse("What did I say on Tuesday about the gym's hours Monday to Friday?", NOW)
    assert said is not None and said.phrase == "on tuesday"
