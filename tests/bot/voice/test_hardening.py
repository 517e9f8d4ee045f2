"""The server against a hostile web page and hostile HTTP: real requests on a real socket.

Forged `Host` (DNS rebinding) and `Origin` (cross-site) get 403; the token never reaches the
access log; every response carries the Content Security Policy; an unexpected exception is a
generic 500 without a traceback; wrong methods, content types, oversized, mutated and slow
requests get a 4xx with a reason; idle connections are closed; and after all of it the
server still answers `/healthz` and a real peer still connects.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from dataclasses import dataclass

import pytest
from aiohttp import web
from aiortc import RTCConfiguration, RTCPeerConnection

from bot.server.access_log import IDLE_TIMEOUT_S, redact
from bot.server.app import Engines, create_app
from bot.server.guard import BODY_TIMEOUT_S, token_matches
from bot.turn.session import Session
from config import Settings, load_settings
from memory.store import Store
from models.base import LLM
from testkit.peer import VoiceClient
from tests.bot.voice.conftest import free_port, serve


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str

    @property
    def reason(self) -> str:
        return str(json.loads(self.body)["reason"])


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


async def call(
    port: int,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> Answer:
    """One request written by hand, so any header can be forged (aiohttp would fix Host)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = {"Host": f"127.0.0.1:{port}", "Connection": "close", **(headers or {})}
    if body and "Content-Length" not in head:
        head["Content-Length"] = str(len(body))
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in head.items()), "", ""]
    writer.write("\r\n".join(lines).encode() + body)
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 15)
    writer.close()
    return parse(raw)


def parse(raw: bytes) -> Answer:
    head, _, body = raw.partition(b"\r\n\r\n")
    first, *rest = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in rest:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Answer(int(first.split()[1]), headers, body.decode("utf-8", "replace"))


async def healthy(port: int) -> bool:
    answer = await call(port, "GET", "/healthz")
    return answer.status == 200 and json.loads(answer.body)["ok"] is True


async def test_forged_host_and_origin_are_refused_and_the_own_address_is_not(
    annie_home: object, engines: Engines, llm: LLM, store: Store
) -> None:
    proxied = "annie.example.com:443"  # an https proxy in front forwards to this server
    settings = load_settings(
        context={"window": 4096}, server={"allowed_hosts": ["annie.lan", proxied]}
    )
    async with serve(settings, engines, llm, store) as server:
        port = port_of(server.url)
        # DNS rebinding: the attacker's name at our address and port.
        forged = (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", "", "[")
        for host in (*forged, "annie.example.com:8443", "0.0.0.0", f"annie.lan.evil:{port}"):
            for method, path in (("GET", "/"), ("GET", "/healthz"), ("POST", "/api/offer")):
                answer = await call(port, method, path, {"Host": host})
                assert answer.status == 403, (host, path, answer)
                assert "Host" in answer.reason and "allowed_hosts" in answer.reason
        # The address served, its loopback spellings, and a configured name.
        served = (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"127.0.0.2:{port}")
        for host in (*served, "annie.lan", "ANNIE.lan:1234", "annie.example.com"):
            assert (await call(port, "GET", "/healthz", {"Host": host})).status == 200, host

        # Cross-site: a page elsewhere posting to the offer, or fetching what Annie knows.
        offer = {"Content-Type": "application/json"}
        for origin in (
            "http://evil.example",
            "null",
            "https://annie.example.com:8443",
            "https://evil.example",
            f"https://127.0.0.1:{port}",
            f"http://127.0.0.1:{port + 1}",
            f"http://localhost:{port}/x",
        ):
            answer = await call(port, "POST", "/api/offer", {**offer, "Origin": origin}, b"{}")
            assert answer.status == 403 and "cross-origin" in answer.reason, (origin, answer)
        for origin in (
            f"http://127.0.0.1:{port}",
            f"http://localhost:{port}",
            f"http://annie.lan:{port}",
            "https://annie.lan",
            "https://annie.example.com",
        ):
            # Past the guard: the offer's own check answers (an empty object is not an offer).
            answer = await call(port, "POST", "/api/offer", {**offer, "Origin": origin}, b"{}")
            assert answer.status == 400 and '"type"' in answer.reason, (origin, answer)
        # Where a browser sends no Origin (an <img>, a <script>), Sec-Fetch-Site tells.
        for site in ("cross-site", "same-site"):
            answer = await call(port, "GET", "/api/knowledge", {"Sec-Fetch-Site": site})
            assert answer.status == 403 and site in answer.reason
        link = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
        assert (await call(port, "GET", "/", link)).status == 200  # a link to the page
        assert await call(port, "GET", "/api/knowledge", {"Sec-Fetch-Site": "same-origin"})
        assert await healthy(port)


async def test_the_token_is_compared_in_constant_time_and_never_logged(
    annie_home: object, engines: Engines, llm: LLM, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    assert token_matches("s3cret", "s3cret") and not token_matches("s3cre", "s3cret")
    assert redact("GET /?a=1&token=s3cret&b=2") == "GET /?a=1&token=[redacted]&b=2"
    settings = load_settings(context={"window": 4096}, server={"token": "s3cret"})
    caplog.set_level(logging.INFO)
    async with serve(settings, engines, llm, store) as server:
        port = port_of(server.url)
        assert (await call(port, "GET", "/?token=s3cret")).status == 200
        assert (await call(port, "GET", "/api/knowledge?token=s3cret")).status == 200
        answer = await call(port, "GET", "/api/knowledge?token=wrong")
        assert answer.status == 401
    assert "token=[redacted]" in caplog.text and "/api/knowledge?token=[redacted]" in caplog.text
    assert "s3cret" not in caplog.text and "wrong" not in caplog.text


def test_the_page_takes_the_token_out_of_its_address() -> None:
    """Static check of app.js (the browser test `test_browser_token` runs it for real)."""
    from bot.server.app import WEB_DIR

    app = (WEB_DIR / "app.js").read_text()
    assert "history.replaceState" in app and 'searchParams.delete("token")' in app
    assert 'headers["X-Annie-Token"] = token' in app


async def test_every_response_carries_the_policy_and_no_inline_code_is_needed(
    voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    from bot.server.app import WEB_DIR

    async with serve(voice_settings, engines, llm, store) as server:
        port = port_of(server.url)
        for path in ("/", "/static/app.js", "/healthz", "/nowhere", "/static/../config.py"):
            answer = await call(port, "GET", path)
            csp = answer.headers["content-security-policy"]
            for part in (
                "default-src 'self'",
                "script-src 'self'",
                "connect-src 'self'",
                "frame-ancestors 'none'",
                "object-src 'none'",
            ):
                assert part in csp, (path, csp)
            assert "unsafe" not in csp
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert answer.headers["referrer-policy"] == "no-referrer"
        missing = await call(port, "GET", "/nowhere")
        assert missing.status == 404 and "/nowhere" in missing.reason
    # The policy forbids inline script, style and handlers: the page must have none.
    html = (WEB_DIR / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert not re.search(r"\son\w+\s*=|\sstyle\s*=|<style", html)


async def test_an_unexpected_exception_is_a_500_without_its_traceback(
    voice_settings: Settings, engines: Engines, caplog: pytest.LogCaptureFixture
) -> None:
    async def opener(resume: str | None) -> tuple[str, Session]:
        raise RuntimeError("secret detail at /home/someone/annie.db")

    async def boom(request: web.Request) -> web.Response:
        raise KeyError("another secret")

    app = create_app(voice_settings, engines, opener)
    app.router.add_get("/boom", boom)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        answer = await call(port, "GET", "/boom")
        assert answer.status == 500 and answer.reason == "internal error; see the server log"
        client = VoiceClient(f"http://127.0.0.1:{port}")
        with pytest.raises(RuntimeError, match="HTTP 500") as refused:
            await client.connect()
        await client.close()
        for text in (answer.body, str(refused.value)):
            assert "Traceback" not in text and "secret" not in text and "File " not in text
        assert await healthy(port)
    finally:
        await runner.cleanup()
    assert "another secret" in caplog.text and "secret detail" in caplog.text  # logged


async def audio_offer() -> str:
    """An offer shaped like the page's: one sendrecv audio section and a data channel."""
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver("audio", direction="sendrecv")
    pc.createDataChannel("events")
    await pc.setLocalDescription(await pc.createOffer())
    sdp = str(pc.localDescription.sdp)
    await pc.close()
    return sdp


def mutated_offers(sdp: str) -> dict[str, str]:
    """The browser-shaped offer, broken the ways a fuzzer would."""
    lines = sdp.split("\r\n")
    audio = next(i for i, line in enumerate(lines) if line.startswith("m=audio"))
    only_unknown = [
        line for line in lines if not line.startswith(("a=rtpmap", "a=fmtp", "a=rtcp-fb"))
    ]
    only_unknown[audio] = "m=audio 9 UDP/TLS/RTP/SAVPF 99"
    only_unknown.insert(audio + 1, "a=rtpmap:99 AMR-WB/16000")
    return {
        "truncated": sdp[: len(sdp) // 3],
        "unsupported codecs only": "\r\n".join(only_unknown),
        "garbage lines": sdp.replace("a=", "a=\x00\xff", 5),
    }


async def test_hostile_http_gets_a_4xx_with_a_reason_and_the_server_stays_up(
    voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    json_type = {"Content-Type": "application/json"}
    async with serve(voice_settings, engines, llm, store) as server:
        port = port_of(server.url)
        # Wrong methods.
        for method, path, allowed in (
            ("GET", "/api/offer", "POST"),
            ("PUT", "/healthz", "GET"),
            ("DELETE", "/", "GET"),
        ):
            answer = await call(port, method, path)
            assert answer.status == 405 and allowed in answer.reason, answer
            assert allowed in answer.headers["allow"]
        # Missing and odd content types: a cross-site form can only send those.
        for ctype in (None, "text/plain", "application/x-www-form-urlencoded", "multipart/x"):
            headers = {"Content-Type": ctype} if ctype else {}
            answer = await call(port, "POST", "/api/offer", headers, b'{"type": "offer"}')
            assert answer.status == 415 and "application/json" in answer.reason, answer
        # Over the cap, by header (refused unread) and by body.
        huge = {**json_type, "Content-Length": str(50 * 1024 * 1024)}
        answer = await call(port, "POST", "/api/offer", huge, b"{}")
        assert answer.status == 413 and "too large" in answer.reason
        # SDP mutations, and one over the cap.
        real = await audio_offer()
        for what, sdp in mutated_offers(real).items():
            body = json.dumps({"type": "offer", "sdp": sdp}).encode()
            answer = await call(port, "POST", "/api/offer", json_type, body)
            assert answer.status == 400 and answer.reason, (what, answer)
            if what == "unsupported codecs only":
                assert "codec" in answer.reason
        bloated = real + "a=x-padding:" + "z" * 100_000 + "\r\n"
        body = json.dumps({"type": "offer", "sdp": bloated}).encode()
        answer = await call(port, "POST", "/api/offer", json_type, body)
        assert answer.status == 413
        assert await healthy(port)
        client = VoiceClient(server.url)
        assert await client.connect()
        await client.close()


async def test_slow_bodies_are_cut_off_and_idle_connections_do_not_starve_the_server(
    voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    async with serve(voice_settings, engines, llm, store) as server:
        port = port_of(server.url)
        opened = time.monotonic()
        # Half-open: 40 connections that never send a byte, 10 that stop mid-header.
        idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(50)]
        for _, writer in idle[40:]:
            writer.write(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-".encode())
        t0 = time.monotonic()
        assert await healthy(port)
        assert time.monotonic() - t0 < 2.0

        # A body that dribbles in one byte every half second.
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        head = (
            f"POST /api/offer HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
        )
        writer.write(head.encode())
        t0 = time.monotonic()
        status_line = asyncio.ensure_future(reader.readuntil(b"\r\n\r\n"))
        while not status_line.done() and time.monotonic() - t0 < BODY_TIMEOUT_S + 5:
            writer.write(b"{")
            await asyncio.wait({status_line}, timeout=0.5)
        took = time.monotonic() - t0
        assert status_line.done(), "the slow body was never cut off"
        assert b" 408 " in status_line.result() and took < BODY_TIMEOUT_S + 2
        rest = await asyncio.wait_for(reader.read(), 5)  # and the connection is closed
        assert b"did not arrive" in rest
        writer.close()
        assert await healthy(port)

        # The idle connections are closed by the server once the idle limit passes.
        await asyncio.sleep(max(0.0, opened + IDLE_TIMEOUT_S + 1.5 - time.monotonic()))
        for reader, writer in idle:
            assert await asyncio.wait_for(reader.read(), 2) == b""  # EOF: closed
            writer.close()
        assert await healthy(port)
