"""Time expressions in a question, as a window over when notes were written.

"What did I tell you last Tuesday about the boiler?" asks about a note written on one day,
not about the newest note on boilers. `parse` finds the first time phrase a small set of rules
knows (today, yesterday, last night, on/last WEEKDAY, N days/weeks/months ago, last/this
week/month, last weekend, in MONTH, earlier this week, recently) and returns the window it
means, in the time zone of `now`, with the question's other words. "before the trip", "after
my knee op", "when I got back from Lisbon" name an event instead of a date: its words are
returned as `anchor`, for the caller to date by the note that mentions it, and the window is
the two weeks before or after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "two": 2,
    "three": 3,
    "a few": 3,
    "few": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_NUM = (
    r"(?P<num>\d{1,2}|a couple of|a couple|couple of|a few|few|an?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten)"
)
_DAY = "|".join(WEEKDAYS)
# "May" is left out of bare month names: "may" is far more often the verb.
_MONTH = "|".join(m for m in MONTHS if m != "may") + r"|may(?= \d| last| this| of)"

# "before the trip" is the weeks before it, not every day before it.
EVENT_SPAN = timedelta(days=14)
# "before the trip", "after my knee op", "when I got back from Lisbon", "to get ready for
# Chloe's wedding": a relation, perhaps a determiner or someone's, then the event's words (up
# to three, with "to/in/at/of" joining a fourth: "the trip to Lisbon"), up to a word that
# starts the rest of the question.
_BEFORE = (
    r"before (?:i|we) (?:went|flew|left|drove|headed|set off)(?: off| away| out)?(?: to| for)?"
    r"|before|ahead of|in the run-up to|leading up to|in preparation for"
    r"|(?:to get|getting|got) ready for"
)
_AFTER = (
    r"after (?:i|we) (?:got|came) (?:back|home)(?: from)?|after (?:i|we) returned(?: from)?"
    r"|after|since|(?:when|once) (?:i|we) (?:got|came|was|were) (?:back|home) from"
    r"|(?:got|came|coming|getting) (?:back|home) from|back from"
)
_STOP = (
    r"what|who|whom|whose|when|where|why|how|which|did|do|does|was|were|is|are|had|has|have"
    r"|i|we|you|he|she|they|it|him|her|them|us|me|and|or|but|so|then|about|for|with|from|on"
    r"|in|at|to|anything|something|if"
    r"|before|after|since|the|my|our|your|a|an|this|that|back|home"
    # Times are other rules' ("the day before yesterday", "after Monday"), never events.
    r"|yesterday|today|tomorrow|tonight|now|then|last|next|day|days|night|morning|afternoon"
    r"|evening|week|weeks|weekend|month|months|year|" + "|".join(WEEKDAYS + MONTHS)
)
_EVENT_WORD = rf"(?!(?:{_STOP})\b)[a-z][a-z'\-]*"
_EVENT = re.compile(
    rf"\b(?P<rel>{_BEFORE}|{_AFTER})\s+"
    r"(?:(?:the|my|our|your|a|an|this|that)\s+)?"
    # "Chloe and Rafael's wedding": two people's event.
    rf"(?P<anchor>(?:{_EVENT_WORD}\s+and\s+)?{_EVENT_WORD}(?:\s+{_EVENT_WORD}){{0,2}}"
    rf"(?:\s+(?:to|in|at|of)\s+{_EVENT_WORD})?)"
)
# "look after the plants", "named after her gran": "after" as part of a verb, not a time.
_PHRASAL = frozenset(
    ["look", "looks", "looked", "looking", "take", "takes", "took", "taking", "named", "run",
     "ran", "running", "go", "went", "going", "come", "came", "coming", "ask", "asked", "asking"]
)  # fmt: skip

# Order matters: longer phrases first, so "the day before yesterday" is not read as "yesterday".
_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("event", _EVENT),
    ("day_before_yesterday", re.compile(r"\b(?:on\s+)?the day before yesterday\b")),
    ("yesterday", re.compile(r"\byesterday(?:\s+(?:morning|afternoon|evening))?\b")),
    ("last_night", re.compile(r"\blast night\b")),
    ("today", re.compile(r"\b(?:earlier\s+)?today\b|\bthis (?:morning|afternoon|evening)\b")),
    ("ago", re.compile(rf"\b{_NUM}\s+(?P<unit>day|week|month)s?\s+ago\b")),
    ("weekday", re.compile(rf"\b(?:(?P<which>last|this|on|past)\s+)?(?P<day>{_DAY})\b")),
    ("last_weekend", re.compile(r"\b(?:last|past)\s+weekend\b|\bat the weekend\b")),
    ("last_week", re.compile(r"\b(?:last|past|previous)\s+week\b|\ba week or so ago\b")),
    ("this_week", re.compile(r"\b(?:earlier\s+)?this week\b")),
    ("last_month", re.compile(r"\b(?:last|past|previous)\s+month\b")),
    ("this_month", re.compile(r"\b(?:earlier\s+)?this month\b")),
    (
        "month",
        re.compile(
            rf"\b(?:in|during|back in)\s+(?P<part>early|mid|late)?[\s-]*(?P<month>{_MONTH})\b"
        ),
    ),
    ("recently", re.compile(r"\b(?:recently|lately|the other day)\b")),
]
# "Monday to Friday" names the days something happens, not the day something was said.
_DAY_SPAN = re.compile(
    rf"\b(?:{_DAY})s?\s*(?:to|through|thru|till|until|-|\u2013)\s*(?:{_DAY})s?\b"
)
# Words that only frame the time phrase ("on", "from") and would be left dangling.
_DANGLING = re.compile(r"\s+(?:on|from|in|during|back)\s*(?=[?.!,]|$)")


@dataclass(frozen=True)
class When:
    """A time window for a question: notes written in [since, until) answer it.

    `anchor` is set for "before/after the EVENT": the open end is to be dated by the note
    about that event (`relation` says which end). `rest` is the question without the phrase.
    """

    phrase: str
    since: datetime | None
    until: datetime | None
    rest: str
    anchor: str = ""
    relation: str = ""
    event: bool = False  # the window is an event's, dated (`bounded`)

    def bounded(self, at: datetime) -> When:
        """This window with its event dated `at`: before it, or after (or since) it."""
        if self.relation == "before":
            return When(self.phrase, at - EVENT_SPAN, at, self.rest, event=True)
        return When(self.phrase, at, at + EVENT_SPAN, self.rest, event=True)


def _midnight(day: datetime) -> datetime:
    return datetime.combine(day.date(), time(0), tzinfo=day.tzinfo)


def _days(start: datetime, days: float) -> tuple[datetime, datetime]:
    return start, start + timedelta(days=days)


def _month_start(year: int, month: int, now: datetime) -> datetime:
    return datetime(year, month, 1, tzinfo=now.tzinfo)


def _add_months(year: int, month: int, n: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + n
    return index // 12, index % 12 + 1


def _window(
    rule: str, m: re.Match[str], now: datetime
) -> tuple[datetime | None, datetime | None] | None:
    today = _midnight(now)
    week_start = today - timedelta(days=now.weekday())
    if rule == "day_before_yesterday":
        return _days(today - timedelta(days=2), 1)
    if rule == "yesterday":
        return _days(today - timedelta(days=1), 1)
    if rule == "last_night":
        return today - timedelta(hours=6), today + timedelta(hours=6)
    if rule == "today":
        return today, now + timedelta(seconds=1)
    if rule == "ago":
        num = m["num"]
        n = int(num) if num.isdigit() else _NUMBERS[num]
        unit = m["unit"]
        if unit == "day":
            return _days(today - timedelta(days=n), 1)
        if unit == "week":
            # "two weeks ago" is loose: the week around that day, not one date.
            centre = today - timedelta(days=7 * n)
            return centre - timedelta(days=4), centre + timedelta(days=4)
        centre = today - timedelta(days=30 * n)
        return centre - timedelta(days=16), centre + timedelta(days=16)
    if rule == "weekday":
        day = WEEKDAYS.index(m["day"])
        back = (now.weekday() - day) % 7
        if m["which"] in ("last", "past") and back == 0:
            back = 7
        if m["which"] == "this" and day > now.weekday():
            return None  # "this Friday" ahead of today is about the future, not a note
        return _days(today - timedelta(days=back), 1)
    if rule == "last_weekend":
        saturday = week_start - timedelta(days=2)
        if now.weekday() >= 5:  # on the weekend itself "last weekend" is the one before
            saturday -= timedelta(days=7)
        return _days(saturday, 2)
    if rule == "last_week":
        return _days(week_start - timedelta(days=7), 7)
    if rule == "this_week":
        return week_start, now + timedelta(seconds=1)
    if rule in ("last_month", "this_month"):
        year, month = now.year, now.month
        if rule == "last_month":
            year, month = _add_months(year, month, -1)
        ny, nm = _add_months(year, month, 1)
        return _month_start(year, month, now), _month_start(ny, nm, now)
    if rule == "month":
        month = MONTHS.index(m["month"]) + 1
        year = now.year if month <= now.month else now.year - 1
        start = _month_start(year, month, now)
        ny, nm = _add_months(year, month, 1)
        end = _month_start(ny, nm, now)
        if m["part"] == "early":
            end = start + timedelta(days=11)
        elif m["part"] == "mid":
            start, end = start + timedelta(days=9), start + timedelta(days=21)
        elif m["part"] == "late":
            start = start + timedelta(days=19)
        return start, end
    if rule == "recently":
        return today - timedelta(days=14), now + timedelta(seconds=1)
    return None


def _event(lowered: str) -> re.Match[str] | None:
    """The first event phrase in `lowered` whose relation is not part of a verb."""
    for m in _EVENT.finditer(lowered):
        before = lowered[: m.start()].split()
        if m["rel"] == "after" and before and before[-1] in _PHRASAL:
            continue
        return m
    return None


def parse(text: str, now: datetime) -> When | None:
    """The first time phrase in `text` as a window in `now`'s time zone; None if there is none.

    `now` must carry its time zone (day boundaries are the user's, not UTC's)."""
    if now.tzinfo is None:
        raise ValueError("parse needs an aware `now` (a time zone decides where days begin)")
    # Spans of weekdays are blanked (same length, so match positions still index `text`).
    lowered = _DAY_SPAN.sub(lambda m: " " * len(m.group()), text.lower())
    for rule, pattern in _RULES:
        m = _event(lowered) if rule == "event" else pattern.search(lowered)
        if m is None:
            continue
        rest = _DANGLING.sub("", (text[: m.start()] + text[m.end() :]).strip())
        rest = re.sub(r"\s+([?.!,])", r"\1", re.sub(r"\s{2,}", " ", rest)).strip(" ,")
        if rule == "event":
            relation = "before" if re.fullmatch(_BEFORE, m["rel"]) else "after"
            return When(m.group(0), None, None, rest, anchor=m["anchor"], relation=relation)
        window = _window(rule, m, now)
        if window is None:
            continue
        return When(m.group(0), window[0], window[1], rest)
    return None
