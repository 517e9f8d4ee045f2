"""A real voice server on a free local port: real engines, a real Runtime, a real SQLite file."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.runtime import Runtime
from bot.server.app import SHARED, Engines, runtime_app
from bot.voice.session import VoiceSession
from config import Settings, load_settings
from context.ledger import CallRecord
from memory.store import Store
from models.base import LLM, STT, TTS, VAD, Tokenizer
from models.fakes import ScriptedLLM
from models.toolcalls import write_call

QUESTION = "Are there any tasks pending on me?"


@dataclass
class RunningServer:
    url: str
    app: web.Application
    runtime: Runtime
    store: Store
    voices: list[VoiceSession] = field(default_factory=list)


def model_rounds(server: RunningServer) -> list[CallRecord]:
    """The model calls made for turns (the warm-up when a session opens is not one)."""
    return [
        call
        for session in server.runtime.sessions
        for call in session.ledger.calls
        if call.label.startswith("round")
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def voice_settings(annie_home: Path) -> Settings:
    return load_settings(context={"window": 4096})


@pytest.fixture(scope="session")
def engines(stt: STT, tts: TTS, vad: VAD) -> Engines:
    return Engines(stt=stt, tts=tts, vad=vad)


@pytest.fixture
def store(voice_settings: Settings) -> Iterator[Store]:
    with Store.open(voice_settings) as s:
        yield s


@asynccontextmanager
async def serve(
    settings: Settings, engines: Engines, llm: LLM, store: Store, host: str = "127.0.0.1", **kw: Any
) -> AsyncIterator[RunningServer]:
    """Start the app on a free port with a Runtime over `llm`; shut it down cleanly after."""
    runtime = Runtime(settings, llm=llm, store=store, **kw)
    app = runtime_app(settings, engines, runtime)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, host, port)
    await site.start()
    server = RunningServer(f"http://{host}:{port}", app, runtime, store)
    app[SHARED].on_voice_session.append(server.voices.append)
    try:
        yield server
    finally:
        await runner.cleanup()  # closes every connection and its session
        # Not runtime.close(): that would also close the shared, session-scoped model.
        for session in list(runtime.sessions):
            await session.close()
    # Reached when the test passed: whatever it had Annie say, no record id was said aloud
    # (the page may show ids; the voice never reads them).
    voiced = [v.tts.stats.ids_voiced for v in server.voices]
    assert not any(voiced), f"record ids were said aloud, per connection: {voiced}"


DELETED = "I deleted the old gate code."


def asks_to_delete(tokenizer: Tokenizer, note_id: str) -> tuple[ScriptedLLM, list[str]]:
    """A model that calls delete_note on `note_id`, asks the user, and after the yes says
    what came of it (`DELETED`); its script empties as it is played, so a test can check no
    other model round ran."""
    script: list[str] = []
    llm = ScriptedLLM(tokenizer, lambda prompt: script.pop(0))
    script += [
        write_call("delete_note", {"note_id": note_id}, llm.tool_dialect),
        "Shall I delete the old gate code?",
        DELETED,
    ]
    return llm, script
