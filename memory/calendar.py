"""The user's own calendar, read from local .ics files, for "anything on my calendar for the 21st?".

Sources are .ics files, or folders of them, that the user exported from any calendar app and
named in `[calendar] files`, and the copy of `[calendar] url` that `bot.calendar_feed` fetches
into Annie's home. They are read here and never fetched. A file is parsed on first
use and again only when its modification time (or size) changes, so asking twice costs one
parse, and an export the user replaces is seen on the next question. Recurring events (RRULE,
RDATE, EXDATE and moved or cancelled instances) are expanded by `recurring_ical_events`; the
times that come back are made timezone-aware here, floating ones in the calendar's zone.

The parse splits each file in two. Its single events (no RRULE or RDATE, no moved or cancelled
instance) are expanded by the library once, there, and kept as `Event`s sorted by start, so a
question about a day finds them by bisection. The recurring series are expanded by the library
when a question first needs them, over a span around it (two weeks before to 370 days after),
and the next questions within that span are answered by bisection too. `titles` says what the
calendar holds without expanding anything, and `next_of` finds the next instances of events by
title, expanding only the series with them.

Reading is bounded whatever the file holds. A file over `_READ_BYTES` is cut: its events
farthest from today are left out until the rest fits, and `check` says how many and which dates
stayed. A file's parse is stopped at `_PARSE_S` (an error naming the file). The library's
expansion of one recurring event is stopped at `_SERIES_S`, and all of one question's
expansions at `_QUESTION_S`: a series stopped, or not reached in time, is left out of every
answer from then on and named by `check`, and the rest of the schedule answers as before. So a
question costs at most the parse of a file that changed plus `_QUESTION_S`.
"""

from __future__ import annotations

import bisect
import contextlib
import re
import threading
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, Any, NamedTuple

import icalendar
import recurring_ical_events

from memory.deadline import Overrun, within

if TYPE_CHECKING:
    from config.settings import Settings

NO_TITLE = "(no title)"
# The fetched copy of the calendar at `[calendar] url`, kept in Annie's home.
FEED_NAME = "feed.ics"
HOW_TO_SET = "set them with `[calendar] files` in config.toml or ANNIE_CALENDAR__FILES"
# The expansion is asked for a wider window than the caller's, then cut to it here: the library
# reads floating times in the query's own zone, and ours may be another (or the machine's local
# rules, whose offset changes with the date). No zone is more than 26 hours from another.
_QUERY_MARGIN = timedelta(days=2)
# The properties an event's place in time depends on: one that did not parse makes the event
# unusable, so it is skipped (and reported by `check`) rather than breaking the whole file.
_TIME_PROPERTIES = frozenset(
    ["DTSTART", "DTEND", "DURATION", "RRULE", "RDATE", "EXDATE", "RECURRENCE-ID"]
)
# A component with any of these makes its UID a series: the library has to see all of that
# UID's components together to know which instances there are.
_SERIES_PROPERTIES = ("RRULE", "RDATE", "RECURRENCE-ID")
# The span each single event is expanded over at parse time: all of them, in any real calendar.
# The library widens a span's start by the event's length, so the start leaves a century of
# room; a longer event would overflow there and is left to the series query instead.
_EVER = (datetime(100, 1, 1), datetime(9999, 1, 1))
# The span the series are expanded over when a question falls outside the spans expanded so far:
# from two weeks before its start to 370 days after, so the days around it and the year ahead
# (what a lookup by name asks for: a day back to a year on) are answered from one expansion.
_SPAN_BEFORE = timedelta(days=14)
_SPAN_AFTER = timedelta(days=370)
# Spans kept per file, the latest first: a question about a far date does not throw away the
# expansion around today.
_SPANS_KEPT = 2
# next_of expands the series it needs over a window from `after` that starts at a week and
# doubles until it holds enough instances, up to two years: a series matched only by the title
# of one moved instance would otherwise be expanded for ever. (Not the library's lazy after():
# it halves its window, down to 15 minutes, each time one holds an instance, and every window
# walks the rule from its first instance again; `bench calendar` took 65 ms at p99, not 8.)
_NEXT_FIRST_SPAN = timedelta(days=7)
_NEXT_HORIZON = timedelta(days=2 * 366)
# The errors for which the library leaves a series out of every answer (skip_bad_series).
_SKIPPED_ERRORS = tuple(recurring_ical_events.CalendarQuery.suppressed_errors)
# The bounds on reading (see the module docstring; the figures behind them are in
# docs/reliability.md). The most of a file that is parsed, events nearest today first.
_READ_BYTES = 500_000
# Past this a file's parse is given up, as an error naming it.
_PARSE_S = 5.0
# One recurring event's expansion over one span; a rule that never matches would otherwise be
# walked to the year 9999.
_SERIES_S = 0.25
# All the expansions one question makes (`between`, `next_of`), every file together.
_QUESTION_S = 1.0
# How many skipped events `check` names; the rest are counted.
_NAMED_SKIPPED = 5


class CalendarError(ValueError):
    """A calendar source that cannot be used, naming the file and what is wrong with it."""


@dataclass(frozen=True)
class Event:
    """One instance of an event: a single event, or one occurrence of a recurring one."""

    # The UID; for an instance of a recurring event, plus "#" and the instance's original
    # start (RECURRENCE-ID): in UTC for a timed event, the date for an all-day one.
    id: str
    title: str
    start: datetime
    # None for an event with no length (no DTEND or DURATION, or one equal to the start).
    end: datetime | None
    all_day: bool
    location: str


class _Fields(NamedTuple):
    """What an instance takes from the VEVENT it comes from; its times are its own."""

    cancelled: bool
    title: str
    uid: str  # stripped; "" when the VEVENT has none
    location: str

    @classmethod
    def of(cls, component: Any) -> _Fields:
        return cls(
            str(component.get("STATUS", "")).upper() == "CANCELLED",
            _title(component),
            str(component.get("UID", "")).strip(),
            str(component.get("LOCATION", "")).strip(),
        )


@dataclass(frozen=True)
class _Expansion:
    """Event instances sorted by start, found by bisection; complete over [first, last]."""

    first: datetime
    last: datetime
    events: list[Event]
    starts: list[datetime]
    # The longest instance: none that starts more than this before a window reaches into it.
    longest: timedelta
    # The same instances by title, each list sorted by start too.
    by_title: dict[str, list[Event]]

    @classmethod
    def of(cls, events: list[Event], first: datetime, last: datetime) -> _Expansion:
        events = sorted(events, key=_order)
        longest = max((_length(e) for e in events), default=timedelta(0))
        by_title: dict[str, list[Event]] = {}
        for event in events:
            by_title.setdefault(event.title, []).append(event)
        return cls(first, last, events, [e.start for e in events], longest, by_title)

    def covers(self, start: datetime, end: datetime) -> bool:
        return self.first <= start and end <= self.last

    def overlapping(self, start: datetime, end: datetime) -> list[Event]:
        low = bisect.bisect_left(self.starts, _back(start, self.longest))
        high = bisect.bisect_left(self.starts, end)
        return [e for e in self.events[low:high] if _overlaps(e, start, end)]

    def next_of(
        self, title: str, after: datetime, limit: int, since: datetime | None = None
    ) -> list[Event]:
        """The first `limit` instances titled `title` that are not over by `after` and start
        before `last` (past it, this expansion may not hold them all), and at or after `since`
        when given."""
        events = self.by_title.get(title, [])
        reach = _back(after, self.longest)
        low_start = reach if since is None else max(reach, since)
        low = bisect.bisect_left(events, low_start, key=lambda e: e.start)
        found: list[Event] = []
        for event in events[low:]:
            if event.start >= self.last or len(found) == limit:
                break
            if _ends_after(event, after):
                found.append(event)
        return found


@dataclass
class _Series:
    """One file's recurring events, which the library expands when a question needs them."""

    # The file's calendar properties (X-WR-TIMEZONE, CALSCALE) and its components other than
    # VEVENTs (VTIMEZONEs above all), to build a calendar of some of its series from.
    template: icalendar.Calendar
    # Every series in one recurring_ical_events.CalendarQuery (untyped), for `between`; None
    # when the file has no series.
    query: Any
    # Each series' VEVENTs by UID, and those UIDs by the titles of their non-cancelled VEVENTs.
    groups: dict[str, list[icalendar.cal.component.Component]]
    by_title: dict[str, list[str]]
    # One query per series, made the first time `next_of` asks for that series.
    queries: dict[str, Any] = field(default_factory=dict)
    # Expansions of all the series over the spans asked about, the latest first; replaced as a
    # whole, so a thread reading it never sees one half-built.
    expansions: list[_Expansion] = field(default_factory=list)
    # The library's series (by UID) that took too long to expand: left out of every answer.
    left_out: set[str] = field(default_factory=set)

    def query_of(self, key: str) -> Any:
        query = self.queries.get(key)
        if query is None:
            calendar = _calendar_like(self.template, self.template.subcomponents + self.groups[key])
            query = recurring_ical_events.of(calendar, skip_bad_series=True)
            self.queries[key] = query
        return query


@dataclass
class _Parsed:
    """One file's parsed contents and the file state they were read from."""

    mtime_ns: int
    size: int
    recurring_uids: frozenset[str]
    events: int
    skipped: list[str]
    series: _Series
    # What was cut from the file to keep reading it bounded (see the module docstring).
    cut: list[str] = field(default_factory=list)


@dataclass
class _Index:
    """One file in the form questions are answered from: its single events sorted by start."""

    parsed: _Parsed
    singles: _Expansion


class Calendar:
    """The user's calendar: every event in the given .ics files and folders of them."""

    def __init__(
        self, sources: list[Path], tz: tzinfo | None = None, fetched: Path | None = None
    ) -> None:
        self._sources = list(sources)
        # The copy of `[calendar] url` among the sources: missing, it is not fetched yet.
        self._fetched = fetched
        # None keeps the machine's local zone, applied per date (datetime.astimezone()) so a
        # floating 10:00 in July gets July's offset, not whatever offset today has.
        self._tz = tz
        self._cache: dict[Path, _Index] = {}
        # Tools may ask from several threads at once; one parse per changed file is enough.
        self._lock = threading.Lock()

    @property
    def sources(self) -> list[Path]:
        return list(self._sources)

    def between(self, start: datetime, end: datetime) -> list[Event]:
        """Every event instance overlapping [start, end), sorted by start, title, then id.

        Naive `start` and `end` are read in the calendar's zone. Cancelled events are left out.
        """
        start, end = self._aware(start), self._aware(end)
        if end < start:
            raise ValueError(f"the end ({end.isoformat()}) is before the start")
        found: dict[str, Event] = {}
        loaded = self._load()
        until = monotonic() + _QUESTION_S
        for path, index in loaded:
            events = index.singles.overlapping(start, end)
            events += self._series_between(index.parsed, path, start, end, until)
            for event in events:
                # The same meeting exported into two calendars (same UID) is said once.
                found.setdefault(event.id, event)
        return sorted(found.values(), key=_order)

    def titles(self) -> list[str]:
        """The distinct titles of every event that is not cancelled, sorted; nothing expanded."""
        names: set[str] = set()
        for _, index in self._load():
            names.update(index.singles.by_title)
            names.update(index.parsed.series.by_title)
        return sorted(names)

    def next_of(self, titles: Collection[str], after: datetime, limit: int = 5) -> list[Event]:
        """The next `limit` instances of events titled one of `titles`, sorted like `between`.

        An instance counts when it ends after `after` (so one under way then is included) or,
        having no end, starts at or after it. Titles match exactly, as `titles()` gives them.
        Series are read from a span `between` expanded when one holds `after`; past it, only
        the series carrying one of the titles are expanded, and no further than two years past
        `after`. A naive `after` is read in the calendar's zone.
        """
        after = self._aware(after)
        wanted = sorted(set(titles))
        if limit <= 0 or not wanted:
            return []
        found: dict[str, Event] = {}
        loaded = self._load()
        until = monotonic() + _QUESTION_S
        for path, index in loaded:
            events = [e for t in wanted for e in index.singles.next_of(t, after, limit)]
            events += self._series_next(index.parsed, path, wanted, after, limit, until)
            for event in sorted(events, key=_order)[:limit]:
                found.setdefault(event.id, event)
        return sorted(found.values(), key=_order)[:limit]

    def check(self) -> str:
        """Parse every source and say what is there in one line, e.g. "2 files, 14 events".

        Raises CalendarError when a source is missing or a file cannot be read or parsed.
        """
        loaded = [(path, index.parsed) for path, index in self._load()]
        events = sum(parsed.events for _, parsed in loaded)
        line = f"{_plural(len(loaded), 'file')}, {_plural(events, 'event')}"
        skipped = [f"{path.name}: {why}" for path, parsed in loaded for why in parsed.skipped]
        if skipped:
            named = skipped[:_NAMED_SKIPPED]
            if len(skipped) > len(named):
                named.append(f"and {len(skipped) - len(named):,} more")
            line += f"; {_plural(len(skipped), 'event')} skipped ({'; '.join(named)})"
        cut = [f"{path.name}: {what}" for path, parsed in loaded for what in parsed.cut]
        if cut:
            line += f"; left out to keep reading bounded: {'; '.join(cut)}"
        empty = [str(p) for p in self._sources if p.is_dir() and not _ics_in(p)]
        if empty:
            line += f"; no .ics files in {', '.join(empty)}"
        return line

    def _series_between(
        self, parsed: _Parsed, path: Path, start: datetime, end: datetime, until: float
    ) -> list[Event]:
        series = parsed.series
        if series.query is None:
            return []
        kept = series.expansions
        expansion = next((x for x in kept if x.covers(start, end)), None)
        if expansion is None:
            first = start - _SPAN_BEFORE
            last = max(end, start + _SPAN_AFTER)
            expansion = self._expand(series.query.series, parsed, path, first, last, until)
            series.expansions = [expansion, *kept][:_SPANS_KEPT]
        return expansion.overlapping(start, end)

    def _expand(
        self,
        series_list: list[Any],
        parsed: _Parsed,
        path: Path,
        first: datetime,
        last: datetime,
        until: float,
    ) -> _Expansion:
        """Every instance that overlaps [first, last] of the given library Series, of those
        expanded by `until` (monotonic()); see `_expand_one` for the rest."""
        # The library compares floating and all-day times in the query's zone: asking in ours
        # keeps its answer close, and the margin covers the rest (see _QUERY_MARGIN).
        zone = self._tz or first.astimezone().tzinfo or UTC
        query_start = (first - _QUERY_MARGIN).astimezone(zone)
        query_end = (last + _QUERY_MARGIN).astimezone(zone)
        events: list[Event] = []
        for series in series_list:
            events += self._expand_one(series, parsed, path, query_start, query_end, until)
        return _Expansion.of(events, first, last)

    def _expand_one(
        self,
        series: Any,
        parsed: _Parsed,
        path: Path,
        start: datetime,
        end: datetime,
        until: float,
    ) -> list[Event]:
        """One series' instances in [start, end]; none for a series left out.

        As the library's own query does, a series that fails is left out: one whose times or
        length take the library's arithmetic on the span past year 1 or 9999 is left out of
        this answer, one that fails in any other way (its rule cannot be stepped through:
        BYDAY=53MO, INTERVAL=0) of every answer from then on, named by `check`. dateutil's
        cache keeps its lock when an error or `Overrun` stops it mid-step, and the next
        expansion of that rule would wait on it for ever. So is a series whose expansion (its
        instances made into `Event`s included) takes over `_SERIES_S`, or that `until`
        (monotonic()) leaves no time for.
        """
        uid = str(series.uid)
        if uid in parsed.series.left_out:
            return []
        now = monotonic()
        if now >= until:
            self._leave_out(parsed, uid, f"the {_QUESTION_S:g} s a question may spend ran out")
            return []
        try:
            with within(min(_SERIES_S, until - now)):
                return self._instances(series.between(start, end), parsed, path)
        except Overrun:
            if until - now > _SERIES_S:
                why = f"took over {_SERIES_S:g} s to expand"
            else:
                why = f"the {_QUESTION_S:g} s a question may spend ran out"
            self._leave_out(parsed, uid, why)
        except OverflowError:
            pass
        # A third-party library fed a user's rule may fail in any way.
        except Exception as exc:
            self._leave_out(parsed, uid, f"{type(exc).__name__}: {exc}", failed=True)
        return []

    def _instances(self, occurrences: Iterable[Any], parsed: _Parsed, path: Path) -> list[Event]:
        # An occurrence's fields are those of the VEVENT it comes from (the series' own, or
        # one moved instance's, told apart by its RECURRENCE-ID); only its times are its
        # own. The library's query copies the VEVENT for every occurrence, which took most
        # of a question's time; here it is copied once per VEVENT.
        events: list[Event] = []
        sources: dict[tuple[Any, ...], tuple[_Fields, date | datetime | None]] = {}
        for occurrence in occurrences:
            source = sources.get(occurrence.recurrence_ids)
            if source is None:
                component = occurrence.as_component(False)
                original = component["RECURRENCE-ID"].dt if occurrence.recurrence_ids else None
                source = sources[occurrence.recurrence_ids] = (_Fields.of(component), original)
            fields, original = source
            event = self._instance(fields, occurrence.start, occurrence.end, original, parsed, path)
            if event is not None:
                events.append(event)
        return events

    @staticmethod
    def _leave_out(parsed: _Parsed, uid: str, why: str, failed: bool = False) -> None:
        """Leave a series out of every answer from now on, and say so: as an event skipped when
        its rule failed, as cut to keep reading bounded when it was too slow."""
        series = parsed.series
        if uid in series.left_out:
            return
        series.left_out.add(uid)
        components = series.groups.get(uid.strip()) or []
        name = _title(components[0]) if components else NO_TITLE
        if failed:
            parsed.skipped.append(f"'{name}' could not be expanded ({why})")
        else:
            parsed.cut.append(f"the recurring event '{name}' ({why})")

    def _series_next(
        self,
        parsed: _Parsed,
        path: Path,
        wanted: list[str],
        after: datetime,
        limit: int,
        until: float,
    ) -> list[Event]:
        """The first `limit` instances of the file's series titled one of `wanted`."""
        series = parsed.series
        keys = dict.fromkeys(k for t in wanted for k in series.by_title.get(t, ()))
        if not keys:
            return []
        found: list[Event] = []
        since: datetime | None = None
        expansion = next((x for x in series.expansions if x.covers(after, after)), None)
        if expansion is not None:
            found = [e for t in wanted for e in expansion.next_of(t, after, limit)]
            if len(found) >= limit:
                return sorted(found, key=_order)[:limit]
            # It holds every instance that starts before its end; the rest start from there.
            since = expansion.last
        matching = [one for key in keys for one in series.query_of(key).series]
        first, horizon = since or after, after + _NEXT_HORIZON
        width = _NEXT_FIRST_SPAN
        while first < horizon:
            last = min(first + width, horizon)
            window = self._expand(matching, parsed, path, first, last, until)
            more = [e for t in wanted for e in window.next_of(t, after, limit, since)]
            if len(found) + len(more) >= limit or last == horizon:
                found += more
                break
            width *= 2
        return sorted(found, key=_order)[:limit]

    def _files(self) -> list[Path]:
        files: list[Path] = []
        seen: set[Path] = set()
        for source in self._sources:
            if source.is_dir():
                found = _ics_in(source)
            elif source.is_file():
                found = [source]
            elif source == self._fetched:
                raise CalendarError(
                    "the calendar URL has not been fetched yet ([calendar] url; "
                    "`python -m bot doctor` fetches it and says why not)"
                )
            else:
                raise CalendarError(f"calendar source {source} does not exist; {HOW_TO_SET}")
            for path in found:
                # A file named directly and again through its folder is read once.
                key = path.resolve()
                if key not in seen:
                    seen.add(key)
                    files.append(path)
        return files

    def _load(self) -> list[tuple[Path, _Index]]:
        with self._lock:
            files = self._files()
            loaded: list[tuple[Path, _Index]] = []
            for path in files:
                try:
                    stat = path.stat()
                except OSError as exc:
                    raise CalendarError(f"cannot read calendar file {path}: {exc}") from exc
                index = self._cache.get(path)
                # Size as well as mtime: a rewrite within the file system's clock tick keeps
                # the mtime but rarely the size.
                if index is None or (index.parsed.mtime_ns, index.parsed.size) != (
                    stat.st_mtime_ns,
                    stat.st_size,
                ):
                    index = self._index(path, *_parse(path, stat.st_mtime_ns, stat.st_size))
                    self._cache[path] = index
                loaded.append((path, index))
            # Files gone from a folder are not kept alive in memory.
            for stale in set(self._cache) - set(files):
                del self._cache[stale]
            return loaded

    def _index(self, path: Path, parsed: _Parsed, singles: list[Any]) -> _Index:
        """The file's single events (the library's expansions of them) as sorted `Event`s."""
        events = [e for e in (self._event(c, parsed, path) for c in singles) if e is not None]
        always = (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC))
        return _Index(parsed, _Expansion.of(events, *always))

    def _aware(self, when: datetime) -> datetime:
        """A datetime with a zone: a naive one is read in the calendar's zone."""
        if when.tzinfo is not None:
            return when
        return when.replace(tzinfo=self._tz) if self._tz is not None else when.astimezone()

    def _at(self, value: date | datetime) -> datetime:
        """An iCalendar time as an aware datetime: a date is its local midnight."""
        if not isinstance(value, datetime):
            value = datetime.combine(value, time())
        return self._aware(value)

    def _event(self, component: Any, parsed: _Parsed, path: Path) -> Event | None:
        # `component` is one expanded VEVENT (an icalendar.Event, as the untyped library hands
        # it back): its DTSTART and DTEND are this instance's, date or datetime.
        end = component.get("DTEND")
        original = component.get("RECURRENCE-ID")
        return self._instance(
            _Fields.of(component),
            component["DTSTART"].dt,
            end.dt if end is not None else None,
            original.dt if original is not None else None,
            parsed,
            path,
        )

    def _instance(
        self,
        fields: _Fields,
        raw_start: date | datetime,
        raw_end: date | datetime | None,
        original: date | datetime | None,
        parsed: _Parsed,
        path: Path,
    ) -> Event | None:
        """One instance as an `Event`, None when cancelled; `original` is its RECURRENCE-ID."""
        if fields.cancelled:
            return None
        all_day = not isinstance(raw_start, datetime)
        start = self._at(raw_start)
        end = self._at(raw_end) if raw_end is not None else None
        if end is not None and end <= start and not all_day:
            # The library writes DTEND = DTSTART for an event that had no length.
            end = None
        uid = fields.uid
        if not uid:
            # Without a UID (against RFC 5545) the file, title and start stand in for one.
            uid = f"{path.name}:{fields.title}:{start.isoformat()}"
        event_id = uid
        if uid in parsed.recurring_uids:
            # The library gives an instance with no RECURRENCE-ID of its own its start as one.
            instance = original if original is not None else raw_start
            event_id = f"{uid}#{self._instance_key(instance)}"
        return Event(event_id, fields.title, start, end, all_day, fields.location)

    def _instance_key(self, instance: date | datetime) -> str:
        # An all-day instance is its date whatever the zone; a timed one its moment, in UTC so
        # the key does not depend on the zone the file happened to write it in.
        if not isinstance(instance, datetime):
            return instance.isoformat()
        return self._aware(instance).astimezone(UTC).isoformat()


def feed_file(settings: Settings) -> Path:
    """Where the calendar fetched from `[calendar] url` is kept (`bot.calendar_feed`)."""
    return settings.home_path / "calendar" / FEED_NAME


def from_settings(settings: Settings) -> Calendar | None:
    """The calendar named in `[calendar] files` and `[calendar] url` (as its fetched copy), or
    None when neither is set."""
    sources = [Path(f).expanduser() for f in settings.calendar.files]
    fetched = feed_file(settings) if settings.calendar.url.strip() else None
    if fetched is not None:
        sources.append(fetched)
    return Calendar(sources, fetched=fetched) if sources else None


def _parse(path: Path, mtime_ns: int, size: int) -> tuple[_Parsed, list[Any]]:
    """The file's series, and each single event as the library expands it (zero or one)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CalendarError(f"cannot read calendar file {path}: {exc}") from exc
    data, cut = _cut(path, data, datetime.now(UTC).date())
    try:
        with within(_PARSE_S):
            parsed, expanded = _parse_data(path, data, mtime_ns, size)
    except Overrun:
        raise CalendarError(
            f"calendar file {path} took over {_PARSE_S:g} s to read; export a shorter range"
        ) from None
    parsed.cut[:0] = cut
    return parsed, expanded


def _parse_data(path: Path, data: bytes, mtime_ns: int, size: int) -> tuple[_Parsed, list[Any]]:
    try:
        components = icalendar.Calendar.from_ical(data, multiple=True)
    # A third-party parser fed a user's file may fail in any way; each is "not iCalendar".
    except Exception as exc:
        raise CalendarError(f"calendar file {path} is not valid iCalendar: {exc}") from exc
    calendars = [c for c in components if c.name == "VCALENDAR"]
    if not calendars:
        # The parser returns nothing, not an error, for an empty or unterminated file.
        raise CalendarError(
            f"calendar file {path} is not valid iCalendar: no complete BEGIN:VCALENDAR ... "
            "END:VCALENDAR in it"
        )
    merged = calendars[0]
    # Exports sometimes hold several calendars back to back; they are read as one.
    for calendar in calendars[1:]:
        for sub in calendar.subcomponents:
            merged.add_component(sub)
    skipped: list[str] = []
    vevents: list[icalendar.cal.component.Component] = []
    others: list[icalendar.cal.component.Component] = []
    for sub in merged.subcomponents:
        if sub.name != "VEVENT":
            others.append(sub)
        elif problem := _unusable(sub):
            skipped.append(problem)
        else:
            vevents.append(sub)
    recurring = frozenset(
        str(sub.get("UID", "")) for sub in vevents if any(p in sub for p in _SERIES_PROPERTIES)
    )
    # The library groups a file's VEVENTs by UID into series; the split keeps each group whole.
    # One without a UID goes with the series, where its stand-in id (see `_event`) meets the
    # others' in the same order as ever.
    keys = [str(sub.get("UID", "")).strip() for sub in vevents]
    series_keys: set[str] = {k for k in keys if not k}
    series_keys |= {
        k for k, sub in zip(keys, vevents, strict=True) if any(p in sub for p in _SERIES_PROPERTIES)
    }
    singles = [sub for k, sub in zip(keys, vevents, strict=True) if k not in series_keys]
    expanded: list[Any] = []
    try:
        # skip_bad_series: a rule the pre-check above let through drops its own series only.
        single_query = recurring_ical_events.of(
            _calendar_like(merged, others + singles), skip_bad_series=True
        )
        for one in single_query.series:
            try:
                occurrences = list(one.between(*_EVER))
            except _SKIPPED_ERRORS:
                continue  # left out of every answer, as the library would leave it
            except Exception:
                # An event too long for _EVER's room: the series query meets it as before.
                series_keys.add(str(one.uid).strip())
                continue
            expanded += [occurrence.as_component(False) for occurrence in occurrences]
        grouped = [
            (k or f"#{n}", sub)
            for n, (k, sub) in enumerate(zip(keys, vevents, strict=True))
            if k in series_keys
        ]
        series_query = (
            recurring_ical_events.of(
                _calendar_like(merged, others + [sub for _, sub in grouped]),
                skip_bad_series=True,
            )
            if grouped
            else None
        )
    except Exception as exc:
        raise CalendarError(f"calendar file {path} is not valid iCalendar: {exc}") from exc
    groups: dict[str, list[icalendar.cal.component.Component]] = {}
    by_title: dict[str, list[str]] = {}
    for key, sub in grouped:
        groups.setdefault(key, []).append(sub)
        if str(sub.get("STATUS", "")).upper() != "CANCELLED":
            uids = by_title.setdefault(_title(sub), [])
            if key not in uids:
                uids.append(key)
    series = _Series(_calendar_like(merged, others), series_query, groups, by_title)
    # A recurring event counts once; its moved or cancelled instances do not count again.
    count = sum(1 for sub in vevents if "RECURRENCE-ID" not in sub)
    return _Parsed(mtime_ns, size, recurring, count, skipped, series), expanded


_EVENT_BEGIN = b"BEGIN:VEVENT"
_START_DATE = re.compile(rb"^DTSTART[;:][^\r\n]*?:(\d{4})(\d\d)(\d\d)", re.IGNORECASE)
_REPEATS = re.compile(rb"^(RRULE|RDATE)[;:]", re.IGNORECASE)


def _cut(path: Path, data: bytes, today: date) -> tuple[bytes, list[str]]:
    """`data` within `_READ_BYTES`: whole VEVENTs are left out, those farthest from `today`
    first (a recurring one counts as today, one whose start cannot be read as the farthest),
    until the rest fits; and what was left out. Everything outside the VEVENTs (the calendar's
    properties, its time zones) is kept: when that alone is too big, the file is an error."""
    if len(data) <= _READ_BYTES:
        return data, []
    lines = data.splitlines(keepends=True)
    # Each top-level VEVENT as (first line, line after its END), and its bytes.
    blocks: list[tuple[int, int]] = []
    depth, first = 0, -1
    for n, line in enumerate(lines):
        word = line.rstrip(b"\r\n").upper()
        if depth == 0:
            if word == _EVENT_BEGIN:
                depth, first = 1, n
        elif word.startswith(b"BEGIN:"):
            depth += 1
        elif word.startswith(b"END:"):
            depth -= 1
            if depth == 0:
                blocks.append((first, n + 1))
    sizes = [sum(len(line) for line in lines[a:b]) for a, b in blocks]
    frame = len(data) - sum(sizes)
    if frame > _READ_BYTES:
        raise CalendarError(
            f"calendar file {path} holds {_mb(frame)} besides its events, over the "
            f"{_mb(_READ_BYTES)} read of a file"
        )
    distance: list[tuple[int, int]] = []
    for n, (a, b) in enumerate(blocks):
        days = 10**7  # farthest: no readable start
        if any(_REPEATS.match(line) for line in lines[a:b]):
            days = 0
        else:
            for line in lines[a:b]:
                found = _START_DATE.match(line)
                if found:
                    with contextlib.suppress(ValueError):
                        days = abs((date(*map(int, found.groups())) - today).days)
                    break
        distance.append((days, n))
    room = _READ_BYTES - frame
    kept: set[int] = set()
    for _, n in sorted(distance):
        if sizes[n] <= room:
            kept.add(n)
            room -= sizes[n]
    dropped = {a: b for n, (a, b) in enumerate(blocks) if n not in kept}
    out: list[bytes] = []
    n = 0
    while n < len(lines):
        if n in dropped:
            n = dropped[n]
            continue
        out.append(lines[n])
        n += 1
    nearest = max((distance[n][0] for n in kept), default=0)
    said = (
        f"{len(dropped):,} of {len(blocks):,} events, the file being {_mb(len(data))} (the most "
        f"read is {_mb(_READ_BYTES)}): those more than {nearest:,} days from today"
    )
    return b"".join(out), [said]


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def _calendar_like(
    template: icalendar.Calendar, components: list[icalendar.cal.component.Component]
) -> icalendar.Calendar:
    """A calendar with the template's properties and the given components."""
    calendar = icalendar.Calendar()
    # The properties change how the library reads the events (X-WR-TIMEZONE, CALSCALE).
    calendar.update(template)
    calendar.subcomponents = list(components)
    return calendar


def _unusable(event: icalendar.cal.component.Component) -> str:
    """Why an event cannot be placed in time, or "" when it can."""
    name = str(event.get("SUMMARY", "")).strip() or str(event.get("UID", "")) or NO_TITLE
    if "DTSTART" not in event:
        return f"'{name}' has no DTSTART"
    for prop, error in event.errors:
        if prop in _TIME_PROPERTIES:
            return f"'{name}' has a bad {prop}: {error}"
    steps = _rule_steps(event)
    if steps > _MAX_RULE_STEPS:
        times = "without end" if steps == float("inf") else f"{steps:,.0f} times in three years"
        return f"'{name}' repeats too often to expand ({times})"
    return ""


# The library walks a rule from its first instance to the span asked about, one step per
# FREQ: every second since 2000 is hours of work. A rule with more steps than this from its
# DTSTART to three years from now (its UNTIL, if sooner) is skipped as unusable; an event
# every day since 1900 is 47,000 steps.
_MAX_RULE_STEPS = 100_000
_FREQ_S = {
    "SECONDLY": 1,
    "MINUTELY": 60,
    "HOURLY": 3600,
    "DAILY": 86400,
    "WEEKLY": 7 * 86400,
    "MONTHLY": 28 * 86400,
    "YEARLY": 365 * 86400,
}


def _rule_steps(event: icalendar.cal.component.Component) -> float:
    """The most steps any RRULE of `event` takes from its DTSTART to three years from now
    (0 when its times cannot say: the library then judges the rule as before)."""
    try:
        return _steps(event)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return 0.0


def _steps(event: icalendar.cal.component.Component) -> float:
    rules = event.get("RRULE")
    if rules is None:
        return 0.0
    start: Any = event["DTSTART"].dt  # type: ignore[union-attr]
    if not isinstance(start, datetime):
        start = datetime.combine(start, time())
    start = start if start.tzinfo is not None else start.replace(tzinfo=UTC)
    horizon = datetime.now(UTC) + timedelta(days=3 * 366)
    most = 0.0
    for rule in rules if isinstance(rules, list) else [rules]:
        period = _FREQ_S.get(str((rule.get("FREQ") or [""])[0]).upper())
        if period is None:
            continue
        interval = (rule.get("INTERVAL") or [1])[0]
        if isinstance(interval, int) and interval < 1:
            return float("inf")  # the library would step in place for ever
        with contextlib.suppress(TypeError, ValueError):
            period *= max(1, int(interval))
        end = horizon
        until = (rule.get("UNTIL") or [None])[0]
        if isinstance(until, date):
            until = until if isinstance(until, datetime) else datetime.combine(until, time())
            end = min(end, until if until.tzinfo is not None else until.replace(tzinfo=UTC))
        most = max(most, (end - start).total_seconds() / period)
    return most


def _title(component: Any) -> str:
    return str(component.get("SUMMARY", "")).strip() or NO_TITLE


def _order(event: Event) -> tuple[datetime, str, str]:
    # The id last, so events with the same start and title come out in the same order always.
    # In UTC: times in one zone compare without working out each one's offset, which made
    # sorting a year of instances take seconds.
    return (event.start.astimezone(UTC), event.title, event.id)


def _back(when: datetime, length: timedelta) -> datetime:
    """`when - length`, or the earliest time when an event as long as the ages reaches past it."""
    try:
        return when - length
    except OverflowError:
        return datetime.min.replace(tzinfo=UTC)


def _length(event: Event) -> timedelta:
    if event.end is None:
        return timedelta(0)
    # In UTC: two times in one zone subtract as wall-clock times, an hour short across DST.
    return event.end.astimezone(UTC) - event.start.astimezone(UTC)


def _overlaps(event: Event, start: datetime, end: datetime) -> bool:
    if event.end is None:
        # A moment is in the window when it is at or after the start and before the end.
        return start <= event.start < end
    return event.start < end and event.end > start


def _ends_after(event: Event, when: datetime) -> bool:
    if event.end is None:
        return event.start >= when
    return event.end > when


def _ics_in(folder: Path) -> list[Path]:
    # Any case of the suffix (some apps write .ICS); hidden files are editors' leftovers.
    return sorted(
        p
        for p in folder.iterdir()
        if p.suffix.lower() == ".ics" and not p.name.startswith(".") and p.is_file()
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
