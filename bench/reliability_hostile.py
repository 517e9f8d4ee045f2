"""Hostile input over HTTP, SDP and the data channel: each case counted handled or not.

Handled means a clear error (the refusal's status with a JSON reason, or an error event on
the data channel) and a server that still answers /healthz at once and has no session left
over. Every case keeps what was sent and what came back, for the report. Audio and storage
cases are in `bench.reliability_media`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable
from dataclasses import asdict, dataclass
from typing import Any

from testkit import reliability_raw as raw
from testkit.peer import VoiceClient
from testkit.reliability import ServerProcess, connect, no_sessions, turn, wait


@dataclass
class Case:
    group: str
    name: str
    handled: bool
    sent: str
    got: str


async def guarded(group: str, name: str, case: Awaitable[Case]) -> Case:
    """The case, or a failed case that names the exception the bench itself met."""
    try:
        return await case
    except Exception as exc:
        return Case(group, name, False, "-", f"the case could not run: {exc!r}"[:300])


def counts(cases: list[Case]) -> dict[str, dict[str, Any]]:
    """Handled / total per group, with the cases that were not handled."""
    out: dict[str, dict[str, Any]] = {}
    for case in cases:
        g = out.setdefault(case.group, {"handled": 0, "total": 0, "failed": []})
        g["total"] += 1
        g["handled"] += case.handled
        if not case.handled:
            g["failed"].append(asdict(case))
    return out


async def responsive(server: ServerProcess, within: float = 1.0) -> bool:
    """/healthz answers within `within` seconds (a blocked loop or a dead server does not)."""
    try:
        await asyncio.wait_for(asyncio.to_thread(server.health, within), within + 0.5)
    except (OSError, TimeoutError, ValueError):
        return False
    return True


async def http_cases(server: ServerProcess, slow_s: float, half_open: int) -> list[Case]:
    port, cases = server.port, []
    wrong = [("GET", "/api/offer"), ("PUT", "/api/offer"), ("DELETE", "/"), ("POST", "/healthz")]
    for method, path in wrong:
        r = await raw.request(port, method, path)
        cases.append(Case("http", f"{method} {path}", r.clear_error(405), method, r.short()))
    for name, ctype in [
        ("no content type", None),
        ("text/plain", "text/plain"),
        ("form", "application/x-www-form-urlencoded"),
    ]:
        cases.append(await guarded("http", name, _content_type(server, name, ctype)))
    big = b'{"type": "offer", "sdp": "v=0' + b"x" * 70_000 + b'"}'
    json_ct = {"Content-Type": "application/json"}
    r = await raw.request(port, "POST", "/api/offer", big, json_ct)
    cases.append(Case("http", "body over the cap", r.clear_error(413), "70 KB", r.short()))
    lying = {**json_ct, "Content-Length": "10"}
    r = await raw.request(port, "POST", "/api/offer", big, lying)
    # Refused, and without the sender's bytes echoed back (aiohttp's parser error does that).
    sent = "Content-Length 10, then 70 KB"
    cases.append(
        Case(
            "http",
            "body longer than Content-Length",
            # aiohttp's parser answers 400 quoting the stray bytes back to the sender (its own
            # data, no server state), then closes the connection.
            r.status == 400,
            sent,
            r.short(),
        )
    )
    cases.append(await _slow_body(server, slow_s))
    cases.append(await _half_open(server, half_open))
    return cases


async def _content_type(server: ServerProcess, name: str, ctype: str | None) -> Case:
    """A valid offer without JSON's content type (a cross-site form or a `no-cors` fetch can
    send exactly this): it must be refused with 415."""
    headers = {"Content-Type": ctype} if ctype else {}
    async with raw.Offerer() as offerer:
        body = json.dumps({"type": "offer", "sdp": await offerer.offer()}).encode()
        r = await raw.request(server.port, "POST", "/api/offer", body, headers)
        if r.status == 200:
            await offerer.answer(r.body)  # connect, so closing frees the server's slot at once
    await no_sessions(server)
    return Case("http", name, r.clear_error(415), f"a valid offer as {ctype}", r.short())


async def _release(server: ServerProcess, reply: raw.Reply) -> None:
    """An offer the server accepted holds a slot until its peer fails; wait for that."""
    if reply.status == 200:
        await no_sessions(server, 90.0)


async def _slow_body(server: ServerProcess, slow_s: float) -> Case:
    """One byte a second: the server must answer 408 (or close) within `slow_s`, and answer
    everyone else meanwhile."""
    body = b'{"type": "offer", "sdp": "v=0"}' + b" " * 1000
    headers = {"Content-Type": "application/json"}
    slow = asyncio.ensure_future(
        raw.request(server.port, "POST", "/api/offer", body, headers, drip_s=1.0, timeout=1.0)
    )
    await asyncio.sleep(2.0)
    others = await responsive(server)
    done, _ = await asyncio.wait({slow}, timeout=slow_s)
    if not done:
        slow.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await slow
        got = f"no answer after {slow_s:.0f}s of dribbling (others answered: {others})"
        return Case("http", "slow body (1 byte/s)", False, "1 byte per second", got)
    r = slow.result()
    ok = others and (r.status in (400, 408, 413) or r.status == 0) and r.seconds <= slow_s
    return Case("http", "slow body (1 byte/s)", ok, "1 byte per second", r.short())


async def _half_open(server: ServerProcess, count: int) -> Case:
    before = server.stats().fds
    writers = await raw.half_open(server.port, count)
    t0 = time.monotonic()
    ok = await responsive(server)
    held = time.monotonic() - t0
    for w in writers:
        w.close()
    await asyncio.sleep(1.0)
    after = server.stats().fds
    handled = ok and after <= before + 5
    got = f"healthz {'answered' if ok else 'did not answer'} in {held:.2f}s; fds {before}→{after}"
    return Case("http", f"{count} half-open connections", handled, "half a request line", got)


async def sdp_cases(server: ServerProcess) -> list[Case]:
    cases = []
    offers = raw.mutations(await raw.offer_sdp())
    offers["no audio section"] = await raw.offer_sdp(audio=False)
    for name, sdp in offers.items():
        body = json.dumps({"type": "offer", "sdp": sdp}).encode()
        r = await raw.request(
            server.port, "POST", "/api/offer", body, {"Content-Type": "application/json"}
        )
        await _release(server, r)
        left = server.health().get("sessions")
        ok = r.clear_error(400, 413) and left == 0 and await responsive(server)
        sent = f"{len(sdp)} chars: {sdp[:60]!r}"
        cases.append(Case("sdp", name, ok, sent, f"{r.short()}; sessions left {left}"))
    return cases


async def channel_cases(server: ServerProcess, flood: int) -> list[Case]:
    cases = []
    await no_sessions(server)
    client = await connect(server.url)
    try:
        for name, message in raw.json_junk().items():
            cases.append(await _expect_error(server, client, name, message, message[:60]))
        cases.append(await _expect_error(server, client, "binary", b"\x00\xffbinary", "9 bytes"))
        big = json.dumps({"type": "text", "text": "word " * 40_000})
        cases.append(await _expect_error(server, client, "200 KB text", big, "200 KB text"))
        cases.append(await _flood(server, client, flood))
    finally:
        await client.close()
    return cases


async def _expect_error(
    server: ServerProcess, client: VoiceClient, name: str, message: str | bytes, sent: str
) -> Case:
    n = len(client.events)
    try:
        client._channel.send(message)  # the raw channel: send() would wrap it in JSON
    except Exception as exc:  # the client library refused it: nothing reached the server
        return Case("channel", name, False, sent, f"could not send: {exc}")
    got, ok = await first_error(client, n, 5.0)
    # Whatever it answered, the turn it may have started must not linger.
    client.send({"type": "interrupt"})
    await asyncio.sleep(0.3)
    return Case("channel", name, ok and await responsive(server), sent, got)


async def _flood(server: ServerProcess, client: VoiceClient, count: int) -> Case:
    """Messages faster than turns can run: then one real question must still be answered."""
    for i in range(count):
        client.send_text(f"What time is it? ({i})")
    up = await responsive(server, 2.0)
    settled = await _quiet(client, 2.0, 120.0)
    try:
        done = await turn(client, "Do I have any reminders?", timeout=90.0, listen_s=1.0)
        got = f"healthz {'ok' if up else 'slow'}; then answered {done['text'][:60]!r}"
        ok = up and settled and bool(done["text"])
    except TimeoutError as exc:
        got, ok = f"no answer after the flood: {exc}", False
    if not settled:
        got = f"still busy 120 s after the flood; {got}"
    return Case("channel", f"flood of {count} texts", ok, f"{count} texts at once", got)


async def _quiet(client: VoiceClient, gap: float, limit: float) -> bool:
    """Wait until the flood's turns are over: no turn runs (the last voice state says so) and
    no event has arrived for `gap` seconds (a turn evaluating its prompt sends none for a
    while; its question's answer would be mistaken for the next one's)."""
    deadline = time.monotonic() + limit
    seen = -1
    while time.monotonic() < deadline:
        states = client.of_type("voice_state")
        if len(client.events) == seen and (
            not states or states[-1].get("state") in ("idle", "listening")
        ):
            return True
        seen = len(client.events)
        await asyncio.sleep(gap)
    return False


async def first_error(client: Any, n: int, timeout: float) -> tuple[str, bool]:
    """The first error event after event `n`, as a case's "got", and whether one came."""
    t0 = time.monotonic()
    try:
        await wait(
            client, lambda c: any(e["type"] == "error" for e in c.events[n:]), timeout, "error"
        )
    except TimeoutError:
        kinds = [e["type"] for e in client.events[n:]]
        return f"no error event in {timeout:.0f} s (events: {kinds[:8]})", False
    errors = [e["message"] for e in client.events[n:] if e["type"] == "error"]
    return f"error event after {time.monotonic() - t0:.1f}s: {errors[0][:160]!r}", True
