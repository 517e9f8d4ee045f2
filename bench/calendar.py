"""`python -m bot bench calendar`: how fast the user's calendar answers from a large export.

A calendar of `--events` events (2,000 by default) is written to one .ics file in a temporary
folder, as a calendar app exports it: 90% single events (one in ten of them all-day, the
timed ones in UTC, in Europe/Berlin or floating), 5% weekly series of 60 instances and 5% daily
series with no end, over two years around a fixed date. Through `memory.calendar.Calendar`
the bench times the first parse (`titles()`, which expands nothing), 200 `next_of` calls for
titles drawn at random before anything else is expanded (each expands only its series), the first
`between` (which expands the series over the span around it), 200 one-day `between` calls on
consecutive days, and the same 200 `next_of` calls again (now read from that span). It prints
p50 and p99 of each against the target (p99 within 20 ms). Beside them, in the same run: the
plain library query (`recurring_ical_events` over the whole file, which walks every event on
every question) for the first 20 of those days, so the speed-up is shown side by side.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import icalendar
import recurring_ical_events

from memory.calendar import Calendar

HELP = "a 2,000-event calendar file: one day's events and next instances, against 20 ms"
TARGET_MS = 20.0
DAYS = 200
NEXT_CALLS = 200
LIBRARY_DAYS = 20
# A Monday at a fixed date, so every run builds and asks the same calendar.
BASE = datetime(2026, 3, 2, tzinfo=UTC)
SEED = 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--events", type=int, default=2000, help="events in the file (default 2000)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def _when(moment: datetime, kind: str) -> str:
    """A DTSTART/DTEND value of the given kind: date, utc, berlin or floating."""
    if kind == "date":
        return f";VALUE=DATE:{moment:%Y%m%d}"
    if kind == "utc":
        return f":{moment:%Y%m%dT%H%M%S}Z"
    if kind == "berlin":
        return f";TZID=Europe/Berlin:{moment:%Y%m%dT%H%M%S}"
    return f":{moment:%Y%m%dT%H%M%S}"


def write_calendar(path: Path, events: int, rng: random.Random) -> dict[str, int]:
    """Write the calendar described in the module docstring; the count of each kind."""
    weekly = daily = events // 20
    singles = events - weekly - daily
    all_day = singles // 10
    base = BASE.replace(tzinfo=None)
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//annie//bench calendar//EN"]
    for n in range(singles):
        day = base + timedelta(days=rng.randrange(-365, 365))
        if n < all_day:
            start, end, kind = day, day + timedelta(days=rng.choice((1, 1, 1, 2, 7))), "date"
        else:
            start = day + timedelta(minutes=rng.randrange(7 * 60, 20 * 60, 15))
            end = start + timedelta(minutes=rng.choice((15, 30, 60, 60, 90, 120)))
            kind = rng.choice(("utc", "utc", "berlin", "floating"))
        # Titles repeat, as "Dentist" or "Haircut" do in a real calendar.
        lines += [
            "BEGIN:VEVENT",
            f"UID:single-{n}@bench",
            f"SUMMARY:Appointment {n % (singles // 3 or 1)}",
            f"DTSTART{_when(start, kind)}",
            f"DTEND{_when(end, kind)}",
            "END:VEVENT",
        ]
    for n in range(weekly + daily):
        is_weekly = n < weekly
        start = base + timedelta(
            days=rng.randrange(-365, 0), minutes=rng.randrange(7 * 60, 20 * 60, 15)
        )
        kind = rng.choice(("utc", "berlin", "floating"))
        lines += [
            "BEGIN:VEVENT",
            f"UID:series-{n}@bench",
            f"SUMMARY:{'Weekly' if is_weekly else 'Daily'} {n}",
            f"DTSTART{_when(start, kind)}",
            f"DTEND{_when(start + timedelta(minutes=30), kind)}",
            "RRULE:FREQ=WEEKLY;COUNT=60" if is_weekly else "RRULE:FREQ=DAILY",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    return {"single": singles - all_day, "all_day": all_day, "weekly": weekly, "daily": daily}


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


def _time_next_of(calendar: Calendar, asks: list[tuple[str, datetime]]) -> list[float]:
    times: list[float] = []
    for title, after in asks:
        t0 = time.perf_counter()
        calendar.next_of([title], after)
        times.append(_ms(t0))
    return times


def _percentiles(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"p50": ordered[len(ordered) // 2], "p99": p99}


def measure(events: int) -> dict[str, Any]:
    """Build the calendar, ask it, and return the figures."""
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="annie-calendar-") as folder:
        path = Path(folder) / "export.ics"
        kinds = write_calendar(path, events, rng)
        calendar = Calendar([path], tz=UTC)
        days = [BASE + timedelta(days=d) for d in range(DAYS)]

        t0 = time.perf_counter()
        titles = calendar.titles()
        parse_ms = _ms(t0)
        asks = [
            (rng.choice(titles), rng.choice(days) + timedelta(hours=rng.randrange(24)))
            for _ in range(NEXT_CALLS)
        ]
        next_lazy_ms = _time_next_of(calendar, asks)

        t0 = time.perf_counter()
        calendar.between(days[0], days[0] + timedelta(days=1))
        expand_ms = _ms(t0)
        between_ms: list[float] = []
        found = 0
        for day in days:
            t0 = time.perf_counter()
            found += len(calendar.between(day, day + timedelta(days=1)))
            between_ms.append(_ms(t0))
        next_ms = _time_next_of(calendar, asks)

        # The plain library query: the whole file through recurring_ical_events, every time.
        t0 = time.perf_counter()
        query = recurring_ical_events.of(icalendar.Calendar.from_ical(path.read_bytes()))
        library_parse_ms = _ms(t0)
        library_ms: list[float] = []
        library_found = 0
        for day in days[:LIBRARY_DAYS]:
            t0 = time.perf_counter()
            library_found += len(query.between(day, day + timedelta(days=1)))
            library_ms.append(_ms(t0))
    return {
        "events": events,
        "kinds": kinds,
        "titles": len(titles),
        "target_ms": TARGET_MS,
        "parse_ms": parse_ms,
        "first_between_ms": expand_ms,
        "between": _percentiles(between_ms) | {"calls": DAYS, "instances": found},
        "next_of_lazy": _percentiles(next_lazy_ms) | {"calls": NEXT_CALLS},
        "next_of": _percentiles(next_ms) | {"calls": NEXT_CALLS},
        "library_parse_ms": library_parse_ms,
        "library_between": _percentiles(library_ms)
        | {"calls": LIBRARY_DAYS, "instances": library_found},
    }


def _verdict(p99: float) -> str:
    return "pass" if p99 <= TARGET_MS else "FAIL"


def _print(f: dict[str, Any]) -> None:
    k = f["kinds"]
    print(
        f"calendar: {f['events']:,} events in one file ({k['single']:,} single timed, "
        f"{k['all_day']:,} all-day, {k['weekly']} weekly COUNT=60, {k['daily']} daily with no "
        f"end; {f['titles']:,} titles)"
    )
    print(f"  first parse: Calendar {f['parse_ms']:.0f} ms (nothing expanded), plain library "
          f"{f['library_parse_ms']:.0f} ms")  # fmt: skip
    print(f"  first between: {f['first_between_ms']:.0f} ms (expands the series over the "
          "span around it)")  # fmt: skip
    print(f"  {'':<44}{'p50':>10}{'p99':>10}   target p99 <= {f['target_ms']:.0f} ms")
    rows = [
        (f"next_of, 1 title x{f['next_of_lazy']['calls']}, before any between",
         f["next_of_lazy"], True),
        (f"between, 1 day x{f['between']['calls']}", f["between"], True),
        (f"next_of, 1 title x{f['next_of']['calls']}, after", f["next_of"], True),
        (f"library between, 1 day x{f['library_between']['calls']}",
         f["library_between"], False),
    ]  # fmt: skip
    for label, row, judged in rows:
        verdict = _verdict(row["p99"]) if judged else "(for comparison)"
        print(f"  {label:<44}{row['p50']:>7.2f} ms{row['p99']:>7.2f} ms   {verdict}")
    speed_up = f["library_between"]["p50"] / max(f["between"]["p50"], 1e-9)
    print(f"  one day's between at p50: {speed_up:.0f}x faster than the plain library query")


def run(args: argparse.Namespace) -> int:
    if args.events < 20:
        print("error: --events takes 20 or more")
        return 2
    figures = measure(args.events)
    if args.json:
        print(json.dumps(figures))
        return 0
    _print(figures)
    return 0
