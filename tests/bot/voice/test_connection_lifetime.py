"""A closed connection leaves nothing behind: no voice session, no audio input, no threads.

Each connection owns native resources (the input resampler's filter graph runs two FFmpeg
threads); anything that keeps a closed connection reachable keeps those too, and a long run
of reconnects then grows threads and memory without bound.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import weakref

from bot.server.app import STATE, Engines
from bot.voice.session import VoiceSession
from config import Settings
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from testkit.peer import VoiceClient
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
        server.app[STATE].on_voice_session.append(lambda v: refs.append(weakref.ref(v)))
        counts = []
        for _ in range(5):
            client = VoiceClient(server.url)
            await client.connect()
            client.send_text("hello")
            await client.wait_for(lambda c: c.of_type("assistant_done"), 60, "the answer")
            await client.close()
            await client.wait_for(lambda c: server.app[STATE].connections == {}, 30, "the close")
            await asyncio.sleep(0.5)
            server.voices.clear()  # the test harness's own list of them
            gc.collect()
            counts.append(threads())
        assert len(refs) == 5
        assert [r() for r in refs] == [None] * 5, "a closed connection is still reachable"
        # The first connection may start pools that stay (the executor's workers); after
        # it, connecting and leaving again adds nothing.
        assert counts[-1] <= counts[1], counts
