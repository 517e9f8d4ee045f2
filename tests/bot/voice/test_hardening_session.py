"""Hostile data-channel messages, a locked and a full database, and audio that changes format.

Each is answered with an error event (or an HTTP status) that says what was wrong, the
server keeps answering `/healthz`, and no turn that was committed is lost. The databases are
real SQLite files: one locked by a second connection holding a write transaction, one made
"full" with `PRAGMA max_page_count` (SQLite's SQLITE_FULL, as a full disk gives).
"""

from __future__ import annotations

import asyncio
import fractions
import json
import sqlite3
from pathlib import Path
from typing import Any

import av
import numpy as np
from aiortc import MediaStreamTrack
from aiortc.mediastreams import MediaStreamError

from bot.server.app import Engines
from bot.voice.audio_in import AudioInput
from bot.voice.page_channel import MAX_MESSAGE_CHARS, MAX_QUEUED, MAX_TEXT_CHARS
from config import Settings
from memory.store import Store
from models.base import LLM, VAD, Tokenizer
from models.fakes import ScriptedLLM
from testkit.peer import VoiceClient
from tests.bot.voice.conftest import serve
from tests.bot.voice.test_hardening import healthy, port_of

ERRORS = "error"


def quick_llm(tokenizer: Tokenizer) -> ScriptedLLM:
    return ScriptedLLM(tokenizer, lambda prompt: "Noted.")


def errors(client: VoiceClient) -> list[str]:
    return [str(e["message"]) for e in client.of_type(ERRORS)]


async def answered(client: VoiceClient, text: str, timeout: float = 60) -> None:
    """Type `text` and wait for its turn to finish."""
    before = len(client.of_type("assistant_done"))
    client.send_text(text)
    await client.wait_for(
        lambda c: len(c.of_type("assistant_done")) > before, timeout, f"an answer to {text!r}"
    )


async def failed(client: VoiceClient, text: str, needle: str, timeout: float = 30) -> str:
    """Type `text` and wait for an error event containing `needle`; returns it."""
    before = len(errors(client))
    client.send_text(text)
    found = await client.wait_for(
        lambda c: [m for m in errors(c)[before:] if needle in m], timeout, f"an error: {needle}"
    )
    return str(found[0])


def logged_user_texts(path: Path) -> list[str]:
    """What the user said, as committed, read by a fresh connection after a clean check."""
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return [row[0] for row in db.execute("SELECT content FROM events WHERE kind = 'user'")]


async def test_junk_on_the_data_channel_gets_error_events_and_the_server_stays_up(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    async with serve(voice_settings, engines, quick_llm(tokenizer), store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        junk: list[tuple[Any, str]] = [
            ("not json", "not JSON"),
            ("[1, 2]", "JSON object"),
            ("42", "JSON object"),
            ("null", "JSON object"),
            ("{}", "JSON object"),
            ('{"type": 5}', "JSON object"),
            ('{"type": "text", "text": 42}', "non-empty"),
            ('{"type": "text", "text": "   "}', "non-empty"),
            ('{"type": "approval", "decision": "maybe"}', "yes or no"),
            ('{"type": "launch"}', "unknown message type"),
            ("[" * 100_000, "refused"),  # deep nesting, and over the size cap
            (b"\x00\x01\xff", "binary"),
            (json.dumps({"type": "text", "text": "a" * 200_000}), "refused"),
            (json.dumps({"type": "text", "text": "b" * (MAX_TEXT_CHARS + 1)}), "typed text"),
        ]
        for message, needle in junk:
            before = len(errors(client))
            client._channel.send(message)
            await client.wait_for(
                lambda c, b=before: len(errors(c)) > b, 10, f"an error for {str(message)[:30]}"
            )
            assert needle in errors(client)[-1], (str(message)[:40], errors(client)[-1])
        assert any(str(MAX_MESSAGE_CHARS) in m for m in errors(client))
        assert not client.of_type("assistant_done")  # nothing of that started a turn
        assert await healthy(port_of(server.url))
        await answered(client, "hello there")  # and the session still works
        await client.close()


async def test_typed_text_may_require_a_tool_and_an_unknown_one_is_refused(
    voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    # The real small model, which does not call tools unasked: the named tool is called anyway.
    async with serve(voice_settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        client.send({"type": "text", "text": "Water the roses.", "tool": "launch_rockets"})
        await client.wait_for(lambda c: errors(c), 10, "an error for the unknown tool")
        assert "launch_rockets" in errors(client)[-1]
        assert not client.of_type("assistant_done")  # refused, not answered without it
        client.send({"type": "text", "text": "Water the roses.", "tool": "create_task"})
        await client.wait_for(lambda c: c.of_type("assistant_done"), 240, "the answer")
        calls = client.of_type("tool_call")
        assert calls and calls[0]["name"] == "create_task", client.events
        results = client.of_type("tool_result")
        assert results and results[0]["name"] == "create_task", client.events
        # Whatever arguments the small model chose, the call ran and reached the store.
        assert results[0]["ok"] and len(store.tasks.find()) == 1, results[0]
        await client.close()


async def test_a_flood_of_messages_is_bounded_reported_and_the_newest_answered(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    async with serve(voice_settings, engines, quick_llm(tokenizer), store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        page = server.voices[0].page
        most = 0

        def watch(_: dict[str, Any]) -> None:
            nonlocal most
            most = max(most, len(page._queue))

        page.watch(watch)
        for n in range(300):
            client.send_text(f"message {n}")
        await client.wait_for(
            lambda c: [m for m in errors(c) if "faster than" in m], 30, "a flood error"
        )
        assert page.dropped > 0 and most <= MAX_QUEUED
        assert sum("faster than" in m for m in errors(client)) < 10  # per burst, not message
        assert await healthy(port_of(server.url))
        # The oldest were dropped, so the last one typed is the one answered.
        session = server.runtime.sessions[0]
        await client.wait_for(
            lambda c: "message 299" in logged(store, session.id), 60, "the last message"
        )
        # Every message was either handled or dropped; none is waiting somewhere unbounded.
        assert len(logged(store, session.id)) <= 300 - page.dropped
        await client.wait_for(lambda c: not page._queue, 30, "the queue to drain")
        await answered(client, "are you still there")
        await client.close()


def logged(store: Store, session_id: str) -> list[str]:
    return [e.content for e in store.events.find(session_id, kinds=["user"])]


async def test_a_locked_database_is_a_clear_error_and_loses_no_committed_turn(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, annie_home: Path
) -> None:
    path = annie_home / "locked.db"
    # A short busy timeout keeps the test quick; the server's own is five seconds.
    with Store(path, timeout_s=0.3) as store:
        async with serve(voice_settings, engines, quick_llm(tokenizer), store) as server:
            client = VoiceClient(server.url)
            await client.connect()
            await answered(client, "first, before the lock")
            other = sqlite3.connect(path, isolation_level=None)
            other.execute("BEGIN EXCLUSIVE")  # another process holding the write lock
            try:
                message = await failed(client, "second, while locked", "locked")
                assert str(path) in message and "another process" in message
                # A new page cannot open a session now: 503 with the same reason.
                second = VoiceClient(server.url)
                try:
                    await second.connect()
                    raise AssertionError("a session opened on a locked database")
                except RuntimeError as exc:
                    assert "HTTP 503" in str(exc) and "locked" in str(exc) and str(path) in str(exc)
                finally:
                    await second.close()
                assert await healthy(port_of(server.url))
            finally:
                other.execute("ROLLBACK")
                other.close()
            await answered(client, "third, after the lock")
            await client.close()
    said = logged_user_texts(path)
    assert "first, before the lock" in said and "third, after the lock" in said
    assert "second, while locked" not in said


async def test_a_full_disk_is_a_clear_error_and_loses_no_committed_turn(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, annie_home: Path
) -> None:
    path = annie_home / "full.db"
    with Store(path) as store:
        async with serve(voice_settings, engines, quick_llm(tokenizer), store) as server:
            client = VoiceClient(server.url)
            await client.connect()
            await answered(client, "first, with room")
            # The file may not grow by a single page: SQLite answers SQLITE_FULL, exactly
            # as it does when the disk itself is full.
            pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
            store.conn.execute(f"PRAGMA max_page_count = {pages}")
            big = "a long note that needs new pages " * 100
            message = await failed(client, big, "full")
            assert str(path) in message and "Free some space" in message
            assert await healthy(port_of(server.url))
            store.conn.execute("PRAGMA max_page_count = 1073741823")  # space freed
            await answered(client, "third, with room again")
            await client.close()
    said = logged_user_texts(path)
    assert "first, with room" in said and "third, with room again" in said
    assert big.strip() not in said


class ShiftingTrack(MediaStreamTrack):
    """Speech-level noise whose rate and layout change mid-stream, then end."""

    kind = "audio"

    def __init__(self, formats: list[tuple[int, str]], frames_each: int = 25) -> None:
        super().__init__()
        self.plan = [fmt for fmt in formats for _ in range(frames_each)]
        self.pts = 0

    async def recv(self) -> av.AudioFrame:
        if not self.plan:
            raise MediaStreamError
        rate, layout = self.plan.pop(0)
        channels = 2 if layout == "stereo" else 1
        samples = rate // 50
        noise = np.random.default_rng(self.pts).integers(-8000, 8000, samples * channels)
        frame = av.AudioFrame.from_ndarray(
            noise.astype(np.int16).reshape(1, -1), format="s16", layout=layout
        )
        frame.sample_rate = rate
        frame.time_base = fractions.Fraction(1, rate)
        frame.pts = self.pts
        self.pts += samples
        await asyncio.sleep(0)
        return frame


async def test_audio_that_changes_rate_and_channels_mid_stream_keeps_being_heard(
    vad: VAD,
) -> None:
    frames: list[float] = []
    ended = asyncio.Event()
    formats = [(48000, "stereo"), (16000, "mono"), (8000, "mono"), (48000, "mono")]
    track = ShiftingTrack(formats)
    audio = AudioInput(track, vad.new_stream(), lambda pcm, p: frames.append(p), on_end=ended.set)
    audio.start()
    await asyncio.wait_for(ended.wait(), 30)
    await audio.stop()
    # 100 frames of 20 ms is 2 s: about 62 VAD frames of 32 ms, from every format.
    assert audio.stats.frames_received == 100
    assert len(frames) >= 55, len(frames)


def test_a_commit_that_fails_is_rolled_back_so_later_writes_still_commit(
    annie_home: Path,
) -> None:
    """A failed COMMIT (a full disk can fail there too) leaves SQLite's transaction open;
    without a rollback every later write would join it and never be committed. A deferred
    foreign-key violation is the deterministic way to make COMMIT itself fail."""
    path = annie_home / "commit.db"
    with Store(path) as store:
        session = store.sessions.start({})
        try:
            with store.guard(), store.write() as conn:
                conn.execute("PRAGMA defer_foreign_keys = ON")
                conn.execute(
                    "INSERT INTO events (session_n, kind, content, created_at, meta) "
                    "VALUES (999, 'user', 'orphan', '2026-01-01', '{}')"
                )
            raise AssertionError("the commit should have failed")
        except Exception as exc:
            assert "FOREIGN KEY" in str(exc)
        assert not store.conn.in_transaction
        store.events.append(session, "user", "committed after the failure")
    assert logged_user_texts(path) == ["committed after the failure"]
