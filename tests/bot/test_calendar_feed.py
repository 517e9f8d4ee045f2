"""The calendar at a URL: fetched through the pinned, capped client after the egress check,
kept only when it is iCalendar, read by the calendar like any file, reported by doctor.

A real aiohttp server on this machine plays the calendar app (loopback, so the tests allow
private addresses as a home-network calendar server would need), a real SQLite store holds
the private note the egress check guards, and the real calendar reads the fetched copy.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest
from aiohttp import web

from bot.calendar_feed import CalendarFeed, feed_url
from bot.commands.doctor import calendar_check
from config import Settings, load_settings
from memory.calendar import CalendarError, feed_file, from_settings
from memory.store import Store

DAY = datetime(2026, 3, 12, 9, 0).astimezone()
ICS = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n"
    f"BEGIN:VEVENT\r\nUID:standup@t\r\nSUMMARY:Team standup\r\nDTSTART:{DAY:%Y%m%d}T100000\r\n"
    f"DTEND:{DAY:%Y%m%d}T103000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


@dataclass
class CalendarServer:
    url: str
    body: bytes = ICS.encode()
    status: int = 200
    requests: list[str] = field(default_factory=list)


@pytest.fixture
async def server() -> AsyncIterator[CalendarServer]:
    served = CalendarServer("")

    async def handle(request: web.Request) -> web.Response:
        served.requests.append(request.path_qs)
        return web.Response(body=served.body, status=served.status, content_type="text/calendar")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    served.url = f"http://127.0.0.1:{port}/cal.ics"
    yield served
    await runner.cleanup()


def _settings(url: str, **calendar: object) -> Settings:
    return load_settings(calendar={"url": url, "url_allow_private": True, **calendar})


async def test_a_fetched_calendar_is_read_like_a_file(
    annie_home: object, server: CalendarServer, store: Store
) -> None:
    settings = _settings(server.url)
    calendar = from_settings(settings)
    assert calendar is not None
    with pytest.raises(CalendarError, match="has not been fetched yet"):
        calendar.between(DAY, DAY + timedelta(days=1))
    status = await CalendarFeed(settings, store, calendar=calendar).refresh()
    assert status.ok and status.detail == "1 event fetched", status
    (event,) = calendar.between(DAY, DAY + timedelta(days=1))
    assert event.title == "Team standup" and feed_file(settings).is_file()
    # The same calendar again: not written, so not parsed again.
    written = feed_file(settings).stat().st_mtime_ns
    again = await CalendarFeed(settings, store).refresh()
    assert again.ok and again.detail == "1 event, unchanged", again
    assert feed_file(settings).stat().st_mtime_ns == written


async def test_a_bad_answer_keeps_the_last_good_copy(
    annie_home: object, server: CalendarServer, store: Store
) -> None:
    settings = _settings(server.url)
    feed = CalendarFeed(settings, store)
    assert (await feed.refresh()).ok
    server.body = b"<html>Sign in to see this calendar</html>"
    status = await feed.refresh()
    assert not status.ok and "not iCalendar" in status.detail
    server.status, server.body = 404, b"gone"
    status = await feed.refresh()
    assert not status.ok and "HTTP 404" in status.detail
    calendar = from_settings(settings)
    assert calendar is not None
    assert [e.title for e in calendar.between(DAY, DAY + timedelta(days=1))] == ["Team standup"]


async def test_an_oversized_calendar_is_not_kept(
    annie_home: object, server: CalendarServer, store: Store
) -> None:
    server.body = ICS.encode() + b" " * 5000
    status = await CalendarFeed(_settings(server.url, url_max_bytes=2048), store).refresh()
    assert not status.ok and "over 2,048 bytes" in status.detail
    assert not feed_file(_settings(server.url)).exists()


async def test_a_url_holding_something_private_is_never_requested(
    annie_home: object, server: CalendarServer, store: Store
) -> None:
    note = store.notes.add("My locker code at the gym is 48213")
    store.provenance.stamp(note, sensitivity="private")
    status = await CalendarFeed(_settings(server.url + "?pin=48213"), store).refresh()
    assert not status.ok and "nothing left this machine" in status.detail
    assert server.requests == []


async def test_a_private_address_needs_the_users_say_so(
    annie_home: object, server: CalendarServer, store: Store
) -> None:
    settings = load_settings(calendar={"url": server.url})  # url_allow_private off
    status = await CalendarFeed(settings, store).refresh()
    assert not status.ok and status.detail.startswith("refused to fetch the calendar URL")
    assert server.requests == []


def test_a_webcal_address_is_fetched_over_https(annie_home: object) -> None:
    settings = load_settings(calendar={"url": " webcal://cal.example.com/u/basic.ics"})
    assert feed_url(settings) == "https://cal.example.com/u/basic.ics"
    assert feed_url(load_settings()) == ""


def test_doctor_fetches_the_url_and_says_how_it_went(
    annie_home: object, server_thread_url: str
) -> None:
    good = calendar_check(_settings(server_thread_url))
    assert good["ok"] and good["url"] == {"ok": True, "detail": "1 event fetched"}
    assert good["summary"].startswith("1 file, 1 event")
    bad = calendar_check(_settings(server_thread_url.replace("/cal.ics", "/missing")))
    assert good["ok"] and not bad["ok"] and "HTTP 404" in bad["url"]["detail"]


@pytest.fixture
def server_thread_url() -> object:
    """A calendar server in a thread of its own: doctor runs its own event loop."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            ok = self.path == "/cal.ics"
            body = ICS.encode() if ok else b"gone"
            self.send_response(200 if ok else 404)
            self.send_header("Content-Type", "text/calendar")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/cal.ics"
    httpd.shutdown()
    httpd.server_close()
