"""Other clocks and dates counted from today, on the real place table and IANA zones."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from context.clocks import date_phrase, hours_asked, time_in, zones_for
from context.normalize import normalize

# A Friday morning in London, in winter: New York is five hours behind, Tokyo nine ahead.
NOW = datetime(2026, 12, 4, 9, 5, tzinfo=ZoneInfo("Europe/London"))
SUMMER = datetime(2026, 7, 3, 9, 5, tzinfo=ZoneInfo("Europe/London"))


@pytest.mark.parametrize(
    ("place", "said"),
    [
        ("dallas", "In Dallas it's 3:05 AM."),
        ("new york", "In New York it's 4:05 AM."),
        ("tokyo", "In Tokyo it's 6:05 PM."),
        ("paris", "In Paris it's 10:05 AM."),
        ("dallas texas", "In Dallas it's 3:05 AM."),
        ("india", "In India it's 2:35 PM."),
        ("est", "In EST it's 4:05 AM."),
    ],
)
def test_the_time_in_a_place_is_its_own_zone(place: str, said: str) -> None:
    assert time_in(place, NOW) == said


@pytest.mark.parametrize(
    ("place", "said"),
    [
        ("gmt plus five", "In GMT plus 5 it's 2:05 PM."),
        ("g m t minus 3", "In GMT minus 3 it's 6:05 AM."),
        ("utc+10", "In UTC plus 10 it's 7:05 PM."),
        ("utc plus 14 hours", "In UTC plus 14 it's 11:05 PM."),
    ],
)
def test_a_fixed_offset_from_gmt_is_its_own_zone(place: str, said: str) -> None:
    assert time_in(place, NOW) == said


@pytest.mark.parametrize("place", ["gmt plus 15", "utc minus 13", "gmt plus zero", "utc plus"])
def test_an_offset_no_zone_has_is_the_model_s(place: str) -> None:
    assert time_in(place, NOW) is None


def test_summer_time_is_the_place_s_own() -> None:
    # London and New York both move their clocks; Phoenix never does.
    assert time_in("new york", SUMMER) == "In New York it's 4:05 AM."
    assert time_in("phoenix", SUMMER) == "In Phoenix it's 1:05 AM."


def test_a_day_over_the_line_is_named() -> None:
    late = datetime(2026, 12, 4, 22, 0, tzinfo=ZoneInfo("Europe/London"))
    said = time_in("tokyo", late)
    assert said is not None and said.endswith("Saturday.")


def test_an_area_across_zones_is_never_one_of_them() -> None:
    said = time_in("the us", NOW)
    assert said is not None and said.startswith("It spans time zones")
    assert "New York City it's 4:05 AM" in said and "Los Angeles it's 1:05 AM" in said
    assert len(zones_for("united states", NOW)) == 3


def test_a_place_the_table_does_not_know_is_the_model_s() -> None:
    assert time_in("narnia", NOW) is None
    assert time_in("the moon", NOW) is None


@pytest.mark.parametrize(
    ("question", "answer", "day"),
    [
        ("What's the date in 5 days?", "It will be Wednesday, December 9.", date(2026, 12, 9)),
        ("what day will it be in two weeks", "It will be Friday, December 18.", date(2026, 12, 18)),
        ("what date was it 10 days ago", "It was Tuesday, November 24.", date(2026, 11, 24)),
        ("what's the date 3 days from now", "It will be Monday, December 7.", date(2026, 12, 7)),
        ("what is tomorrow's date", "Tomorrow will be Saturday, December 5.", date(2026, 12, 5)),
        ("what day was it yesterday", "Yesterday was Thursday, December 3.", date(2026, 12, 3)),
        ("what date is next friday", "That will be Friday, December 11.", date(2026, 12, 11)),
        ("what day is the 31st", "That will be Thursday, December 31.", date(2026, 12, 31)),
        ("how many days until the 25th", "21 days until Friday, December 25.", date(2026, 12, 25)),
        ("is it the 14th today or the 15th", "No, today is Friday, December 4.", date(2026, 12, 4)),
        ("is it the 4th today", "Yes, today is Friday, December 4.", date(2026, 12, 4)),
        ("what day of the week is january 3rd", "That will be Sunday, January 3, 2027.", None),
        # The nth or last weekday of a month, and how long this month is.
        (
            "what date is the third friday of this month",
            "That will be Friday, December 18.",
            date(2026, 12, 18),
        ),
        ("when is the first monday of this month", "That will be Monday, December 7.", None),
        ("when was the first tuesday of this month", "That was Tuesday, December 1.", None),
        (
            "the last friday of the month lands on what day",
            "That will be Friday, December 25.",
            date(2026, 12, 25),
        ),
        (
            "what date is the first sunday of next month",
            "That will be Sunday, January 3, 2027.",
            date(2027, 1, 3),
        ),
        (
            "what day of the week does the twenty second fall on this month",
            "That will be Tuesday, December 22.",
            date(2026, 12, 22),
        ),
        ("how many days are in this month", "December has 31 days.", None),
        ("how many days does next month have", "January 2027 has 31 days.", None),
    ],
)
def test_dates_counted_from_today(question: str, answer: str, day: date | None) -> None:
    found = date_phrase(normalize(question), NOW)
    assert found is not None, question
    assert found.text == answer
    if day is not None:
        assert found.when == day


@pytest.mark.parametrize(
    "question",
    [
        "what's the date",  # the plain date is the "date" intent's
        "what day is it",
        "what day is christmas",  # a holiday is knowledge, not arithmetic
        "what is the date of the battle of hastings",
        "what day is february 30th",  # no such day: never a made-up answer
        "how many days are in a year",
        "how many days are in february",  # a month by name is knowledge
        "when is the fifth friday of this month",  # December 2026 has four
    ],
)
def test_not_a_date_counted_from_today(question: str) -> None:
    assert date_phrase(normalize(question), NOW) is None


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("any meetings between 2 and 5 pm", "between 2 PM and 5 PM"),
        ("events between 8:30am and 5 p.m. today", "between 8:30 AM and 5 PM"),
        ("do I have anything at 5pm", "between 5 PM and 6 PM"),
        ("from four to six", "between 4 PM and 6 PM"),  # unsaid: afternoon hours
        ("between eleven and two pm", "between 11 AM and 2 PM"),
        ("anything before noon", "before 12 PM"),
        ("what do I have after 9", "after 9 AM"),
    ],
)
def test_the_hours_a_question_names(question: str, said: str) -> None:
    hours = hours_asked(normalize(question))
    assert hours is not None and hours.said() == said


@pytest.mark.parametrize(
    "question", ["any meetings in 3 days", "what is on at 25", "between 3 pm and 1 pm", "at last"]
)
def test_no_hours_named(question: str) -> None:
    assert hours_asked(normalize(question)) is None
