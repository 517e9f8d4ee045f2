"""A closed connection leaves nothing behind: no voice session, no audio input, no threads;
and an answered offer whose peer never connects does not hold its session slot for long.

Each connection owns native resources (the input resampler's filter graph runs two FFmpeg
threads); anything that keeps a closed connection reachable keeps those too, and a long run
of reconnects then grows threads and memory without bound.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.server.app import SHARED, Engines
from bot.voice.session import VoiceSession
from config import Settings, load_settings
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from testkit.peer import VoiceClient
from testkit.reliability_raw import Offerer, Reply, request
from tests.bot.voice.conftest import serve


def threads() -> int:
    """This process's threads, less the event loop's executor workers: that pool grows up to
    its bound as work overlaps (here, with whatever earlier tests left queued), never past it."""
    pooled = sum(t.name.startswith("asyncio_") for t in threading.enumerate())
    return len(os.listdir("/proc/self/task")) - pooled


async def test_closed_connections_are_freed_with_their_threads(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    llm = ScriptedLLM(tokenizer, lambda prompt: "Okay.")
    async with serve(voice_settings, engines, llm, store) as server:
        refs: list[weakref.ref[VoiceSession]] = []
        server.app[SHARED].on_voice_session.append(lambda v: refs.append(weakref.ref(v)))
        counts = []
        for _ in range(5):
            client = VoiceClient(server.url)
            await client.connect()
            client.send_text("hello")
            await client.wait_for(lambda c: c.of_type("assistant_done"), 60, "the answer")
            # Idle-time work (embedding what the last session said) loads what it needs the
            # same connection every run: whatever it starts once is not a leak.
            await client.wait_for(lambda c: len(c.of_type("latency")) >= 2, 60, "the turn")
            for session in server.runtime.sessions:
                await asyncio.wait_for(session.wait_idle(), 60)
            await client.close()
            await client.wait_for(lambda c: server.app[SHARED].connections == {}, 30, "the close")
            await asyncio.sleep(0.5)
            server.voices.clear()  # the test harness's own list of them
            gc.collect()
            counts.append(threads())
        assert len(refs) == 5
        assert [r() for r in refs] == [None] * 5, "a closed connection is still reachable"
        # The first connection may start pools that stay (the executor's workers); after
        # it, connecting and leaving again adds nothing.
        assert counts[-1] <= counts[1], counts


async def until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {timeout:g} s"
        await asyncio.sleep(0.05)


async def post_offer(url: str, sdp: str) -> Reply:
    body = json.dumps({"type": "offer", "sdp": sdp}).encode()
    port = int(url.rsplit(":", 1)[1])
    return await request(port, "POST", "/api/offer", body, {"Content-Type": "application/json"})


async def test_an_answered_offer_that_never_connects_frees_its_slot_at_the_deadline(
    annie_home: Path, engines: Engines, tokenizer: Tokenizer, caplog: pytest.LogCaptureFixture
) -> None:
    # Long enough for a page on this machine to connect (a fraction of a second on loopback);
    # aiortc alone would hold the silent peer's slot until its ICE checks gave up (~a minute).
    settings = load_settings(
        context={"window": 4096}, server={"max_sessions": 2, "connect_timeout_s": 5.0}
    )
    caplog.set_level(logging.INFO, logger="bot.server.connections")
    llm = ScriptedLLM(tokenizer, lambda prompt: "Okay.")
    with Store.open(settings) as store:
        async with serve(settings, engines, llm, store) as server:
            connections = server.app[SHARED].connections
            page = VoiceClient(server.url)
            await page.connect()
            # A real peer that takes its answer and never sets it, so ICE never starts on its
            # side: the server's half of the connection never reaches "connected".
            async with Offerer() as silent:
                reply = await post_offer(server.url, await silent.offer())
                assert reply.status == 200, reply.short()
                stalled = json.loads(reply.body)["session_id"]
                assert set(connections) == {page.session_id, stalled}
                async with Offerer() as third:
                    refused = await post_offer(server.url, await third.offer())
                assert refused.status == 503, refused.short()
                await until(lambda: stalled not in connections, 45.0, "close of the silent peer")
            said = [r.getMessage() for r in caplog.records if "did not connect" in r.getMessage()]
            assert len(said) == 1 and said[0].startswith(
                f"session {stalled}: the peer did not connect within 5 s"
            ), said
            # The page connected before its own deadline passed, so that deadline was called off.
            assert set(connections) == {page.session_id}
            assert connections[page.session_id].pc.connectionState == "connected"
            # The freed slot takes the next page.
            again = VoiceClient(server.url)
            await again.connect()
            again.send_text("hello")
            await again.wait_for(lambda c: c.of_type("assistant_done"), 60, "the answer")
            await again.close()
            await page.close()
