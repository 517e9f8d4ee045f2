"""Reminders said over a real WebRTC connection (an aiortc peer against the real server, with
real speech recognition, voice activity detection and speech synthesis): only at a gap when
the user is talking or Annie is answering, and first thing when a page opens after one fell
due with no page open. (On time with the page open: the browser test.)"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

from bot.reminders.gaps import REMINDER_GAP_S
from bot.server.app import Engines
from config import Settings, load_settings
from memory.rows import from_iso, utc_now
from memory.store import Store
from models.base import LLM, TTS
from testkit.peer import VoiceClient, speak_48k
from tests.bot.voice.conftest import QUESTION, model_rounds, serve


def quiet_settings() -> Settings:
    # No warm-up: nothing here needs the model, so it stays idle and the timings are speech's.
    return load_settings(context={"window": 4096, "warm_up": False})


def reminders(client: VoiceClient) -> list[dict[str, Any]]:
    return client.of_type("reminder")


def index_of(client: VoiceClient, predicate: Any) -> int:
    return next(i for i, e in enumerate(client.events) if predicate(e))


async def test_a_reminder_due_with_no_page_open_is_the_first_thing_said(
    annie_home: Any, engines: Engines, llm: LLM, store: Store
) -> None:
    async with serve(quiet_settings(), engines, llm, store) as server:
        rid = store.reminders.add("call the dentist", utc_now() + timedelta(seconds=0.3))
        # The server's scheduler fires it with no page open; it waits in the table. Waited
        # for generously: a busy machine fires it later, never not at all.
        for _ in range(600):
            row = store.reminders.get(rid)
            if row is not None and row.status == "fired":
                break
            await asyncio.sleep(0.05)
        assert row is not None and row.status == "fired"
        assert server.runtime.reminders.fired[0].id == rid

        client = VoiceClient(server.url)
        try:
            await client.connect()
            shown = await client.wait_for(reminders, 20, "the waiting reminder")
            assert shown[0]["away"]
            assert shown[0]["text"].startswith("While you were away: call the dentist (due at ")
            # Nothing but the context meter and the knowledge panel came before it.
            first = [e["type"] for e in client.events[: index_of(client, lambda e: e is shown[0])]]
            assert set(first) <= {"context", "knowledge"}, first
            since = time.monotonic()
            await client.wait_for(lambda c: len(c.voiced_since(since)) >= 25, 20, "its audio")
            row = store.reminders.get(rid)
            assert row is not None and row.announced_in == client.session_id
            assert model_rounds(server) == []
        finally:
            await client.close()


async def test_a_reminder_waits_for_the_user_and_for_annies_answer(
    annie_home: Any, engines: Engines, llm: LLM, tts: TTS, store: Store
) -> None:
    store.tasks.add("Send the quarterly invoice", pending="user")
    async with serve(quiet_settings(), engines, llm, store) as server:
        client = VoiceClient(server.url)
        try:
            await client.connect()
            question = await speak_48k(tts, QUESTION)
            wall = time.time() - time.monotonic()
            clip = client.mic.play(question)
            # Due while the user is still asking (the question takes about two seconds).
            rid = store.reminders.add("stretch your legs", utc_now() + timedelta(seconds=0.8))
            await client.wait_for(reminders, 60, "the reminder")
            since = time.monotonic()
            await client.wait_for(lambda c: len(c.voiced_since(since)) >= 25, 20, "its audio")
            row = store.reminders.get(rid)
            assert row is not None and row.fired_at is not None
            asked_until = client.mic.clip_ended[clip] + wall
            assert from_iso(row.fired_at).timestamp() < asked_until, "due while the user spoke"

            # It came after the answer was complete and fully spoken, never over it...
            answer = client.of_type("state_answer")[0]
            assert "invoice" in answer["text"].lower()
            answered = index_of(
                client,
                lambda e: (
                    e["type"] == "voice_state"
                    and e["state"] == "idle"
                    and e["turn_id"] == answer["turn_id"]
                ),
            )
            said = index_of(client, lambda e: e["type"] == "reminder")
            assert index_of(client, lambda e: e["type"] == "state_answer") < answered < said
            # ...after a gap of quiet, and after the user stopped speaking.
            idle_at = client.events[answered]["at"]
            spoken_at = server.voices[0].reminders_spoken[0][1]
            assert spoken_at - idle_at >= REMINDER_GAP_S * 0.9, (spoken_at, idle_at)
            assert spoken_at > asked_until
            print(
                f"reminder due {from_iso(row.due).timestamp() - asked_until:+.2f} s from the end "
                f"of the question, spoken {spoken_at - from_iso(row.due).timestamp():.2f} s after "
                f"its due time, {spoken_at - idle_at:.2f} s after Annie's answer ended"
            )
        finally:
            await client.close()
