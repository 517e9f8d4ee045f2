"""The user's calendar at a URL (`[calendar] url`), fetched in the background into Annie's home.

Calendar apps publish a read-only .ics address (Google's "secret address in iCal format",
iCloud's public calendar, Nextcloud's export link). It is off by default. Once the user sets
one, it is the one request Annie makes without asking each time, so it is made the careful way:

- the URL (a `webcal://` one is read as `https://`) passes the egress check
  (`context.egress`) first, so a URL that would carry a private note's words is never sent;
- it is fetched through the same pinned transport as `fetch_webpage`
  (`bot.tools.web.fetch_pinned`): every hop resolved once and checked, private addresses
  refused unless `url_allow_private` (a calendar server on the home network), capped at
  `url_max_bytes` and `url_timeout_s`;
- what comes back must parse as iCalendar before it replaces the copy in
  `<home>/calendar/feed.ics` (`memory.calendar.feed_file`), written whole and renamed into
  place, so a failed or half fetch leaves the last good copy answering; the same calendar
  fetched again is not written, so it is not parsed again, and a changed one is parsed and
  expanded at once, in a worker thread, not by the next question.

`memory.calendar` reads that copy like any .ics file, so the schedule, the state path and the
briefing see the URL's events with no network on their path. The refresh runs every
`refresh_minutes` while the server runs; `status` says how the last one went, which `doctor`
prints and `/healthz` carries for the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import icalendar

from bot.tools.pinned_http import (
    Connector,
    FetchRefused,
    Resolver,
    direct_connector,
    system_resolver,
)
from bot.tools.web import TooManyRedirects, fetch_pinned
from config import Settings
from context.egress import egress_for
from memory.calendar import Calendar, CalendarError, feed_file

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FeedStatus:
    """How the last refresh went: `ok`, what it found or why not, and when."""

    ok: bool
    detail: str
    at: str


def feed_url(settings: Settings) -> str:
    """The configured URL as it is fetched ("" when none): webcal:// is https://."""
    url = settings.calendar.url.strip()
    for scheme in ("webcal://", "webcals://"):
        if url.lower().startswith(scheme):
            return "https://" + url[len(scheme) :]
    return url


class CalendarFeed:
    """Fetches `[calendar] url` into the calendar's copy, now (`refresh`) and in the
    background (`start`, `stop`). Where names resolve and how connections open are parameters,
    as for fetch_webpage, so tests can serve a calendar on this machine."""

    def __init__(
        self,
        settings: Settings,
        store: Any,
        *,
        resolver: Resolver = system_resolver,
        connector: Connector = direct_connector,
        calendar: Calendar | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        # The runtime's calendar, read again at once when a fetch changes its copy.
        self.calendar = calendar
        self.resolver = resolver
        self.connector = connector
        self.status: FeedStatus | None = None
        self._task: asyncio.Task[None] | None = None

    async def refresh(self) -> FeedStatus:
        """Fetch the URL once and keep what came back if it is a calendar."""
        self.status = await self._fetch()
        if not self.status.ok:
            log.warning("calendar URL: %s", self.status.detail)
        return self.status

    async def _fetch(self) -> FeedStatus:
        cfg = self.settings.calendar
        url = feed_url(self.settings)
        if not url:
            return _status(False, "no calendar URL is set ([calendar] url)")
        leak = egress_for(self.store).check(url)
        if leak is not None:
            return _status(False, f"not fetched: {leak.reason}; nothing left this machine")
        try:
            _, page = await fetch_pinned(
                url,
                allow_private=cfg.url_allow_private,
                timeout_s=cfg.url_timeout_s,
                max_bytes=cfg.url_max_bytes,
                resolver=self.resolver,
                connector=self.connector,
            )
        except (FetchRefused, TooManyRedirects) as exc:
            return _status(False, f"refused to fetch the calendar URL: {exc}")
        except httpx.HTTPError as exc:
            return _status(False, f"could not fetch the calendar URL: {type(exc).__name__}: {exc}")
        if page.status != 200:
            return _status(False, f"the calendar URL answered HTTP {page.status}")
        if page.truncated:
            return _status(
                False,
                f"the calendar at the URL is over {cfg.url_max_bytes:,} bytes (url_max_bytes)",
            )
        events = await asyncio.to_thread(_events_in, page.body)
        if events is None:
            return _status(False, "what the calendar URL sent is not iCalendar")
        fetched = f"{events:,} event{'' if events == 1 else 's'}"
        if not await asyncio.to_thread(_replace, feed_file(self.settings), page.body):
            return _status(True, f"{fetched}, unchanged")
        if self.calendar is not None:
            # Parsed and expanded now, off the event loop, so no question or new session's
            # briefing pays for a changed calendar (a 2,000-event one takes seconds).
            await asyncio.to_thread(_warm, self.calendar)
        return _status(True, f"{fetched} fetched")

    def start(self) -> None:
        """Refresh now and every `refresh_minutes` until `stop`; nothing when no URL is set."""
        if self._task is None and feed_url(self.settings):
            self._task = asyncio.create_task(self._run(), name="calendar feed")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            try:
                await self.refresh()
            except Exception:
                # A bug here must not end the refreshes: the next one may work.
                log.exception("the calendar refresh failed")
            await asyncio.sleep(self.settings.calendar.refresh_minutes * 60)


def _status(ok: bool, detail: str) -> FeedStatus:
    return FeedStatus(ok, detail, datetime.now(UTC).isoformat(timespec="seconds"))


def _events_in(body: bytes) -> int | None:
    """How many events an iCalendar body holds; None when it is not one."""
    try:
        calendars = icalendar.Calendar.from_ical(body, multiple=True)
    # A third-party parser fed a server's answer may fail in any way; each is "not iCalendar".
    except Exception:
        return None
    found = [c for c in calendars if c.name == "VCALENDAR"]
    if not found:
        return None
    return sum(len(c.walk("VEVENT")) for c in found)


def _warm(calendar: Calendar) -> None:
    now = datetime.now().astimezone()
    with contextlib.suppress(CalendarError):  # the questions that need it say so
        calendar.between(now, now + timedelta(days=1))


def _replace(path: os.PathLike[str], body: bytes) -> bool:
    """Write `body` to `path` whole (a temporary file beside it, renamed into place); False,
    and nothing written, when the file already holds it: an unchanged calendar keeps its
    modification time, so it is not parsed again."""
    with contextlib.suppress(OSError):
        if Path(path).read_bytes() == body:
            return False
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".feed-", suffix=".ics")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True
