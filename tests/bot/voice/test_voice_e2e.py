"""Two real aiortc peers in one process: spoken question in, events and answer audio out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.server.app import Engines
from config import Settings, load_settings
from memory.store import Store
from models.base import LLM, TTS
from testkit.peer import VoiceClient, speak_48k
from tests.bot.voice.conftest import QUESTION, model_rounds, serve


def finals(client: VoiceClient) -> list[str]:
    return [e["text"] for e in client.of_type("transcript") if e["final"]]


def done_for(client: VoiceClient, turn_id: str) -> dict[str, object] | None:
    return next((e for e in client.of_type("assistant_done") if e["turn_id"] == turn_id), None)


async def test_spoken_status_question_is_answered_by_the_state_path_with_audio(
    voice_settings: Settings, engines: Engines, llm: LLM, tts: TTS, store: Store
) -> None:
    store.tasks.add("Send the quarterly invoice", pending="user")
    store.tasks.add("Water the plants", pending="none")
    async with serve(voice_settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        session_id = await client.connect()
        question = await speak_48k(tts, QUESTION)
        client.mic.play(question)

        heard = await client.wait_for(finals, 60, "a final transcript")
        assert "tasks pending" in heard[0].lower()
        answer = await client.wait_for(lambda c: c.of_type("state_answer"), 30, "a state answer")
        turn_id = answer[0]["turn_id"]
        assert "invoice" in answer[0]["text"].lower()
        assert "plants" not in answer[0]["text"].lower()  # pending means pending != "none"

        # Annie's answer arrives as audio: at least half a second of voiced 20 ms frames.
        spoken_after = client.mic.clip_ended[1]
        await client.wait_for(lambda c: len(c.voiced_since(spoken_after)) >= 25, 30, "audio")
        done = await client.wait_for(lambda c: done_for(c, turn_id), 30, "the turn's end")
        assert done["path"] == "state" and not done["interrupted"]
        assert not client.of_type("assistant_delta")
        assert model_rounds(server) == [], "the state path must not call the model"

        latency = await client.wait_for(
            lambda c: [e for e in c.of_type("latency") if "voice_to_voice" in e["stages"]],
            30,
            "voice latency",
        )
        stages = latency[0]["stages"]
        assert {"endpoint", "stt", "state", "tts_first_chunk"} <= set(stages)
        assert stages["voice_to_voice"] > stages["stt"] > 0
        meters = client.of_type("context")
        assert meters and meters[-1]["used"] > 0 and meters[-1]["window"] == 4096
        assert (meters[-1]["tier1"], meters[-1]["tier2"]) == (0.65, 0.80)

        # The turn's voice timings are stored next to the session's own row for the turn.
        await client.wait_for(lambda c: server.voices[0].stats.turns, 30, "the turn to finish")
        rows = [r for r in store.metrics.find(session_id) if r.path == "voice/state"]
        assert len(rows) == 1 and rows[0].turn_id == turn_id
        assert abs(rows[0].total_ms - stages["voice_to_voice"]) < 1.0

        # Typed text goes through the same loop: the real model answers, and is spoken.
        # The warm-up stopped when the user spoke (the cores were Whisper's); the idle time
        # after the state answer finishes it.
        await server.runtime.sessions[0].wait_idle()
        client.send_text("Say hello in one short sentence.")
        deltas = await client.wait_for(lambda c: c.of_type("assistant_delta"), 180, "model text")
        model_turn = deltas[0]["turn_id"]
        done = await client.wait_for(lambda c: done_for(c, model_turn), 180, "the model turn")
        assert done["path"] == "model"
        # The fixed head was evaluated before the turn: the turn only adds its own.
        first = model_rounds(server)[0]
        head = server.runtime.sessions[0].ledger.prefix_cost(server.runtime.sessions[0].conv.prefix)
        assert first.reused_tokens >= head.total > 1000, (first, head.total)
        if done["text"].strip():
            text_latency = await client.wait_for(
                lambda c: [
                    e
                    for e in c.of_type("latency")
                    if e["turn_id"] == model_turn and "text_to_voice" in e["stages"]
                ],
                60,
                "text-to-voice latency",
            )
            assert "llm_first_token" in text_latency[0]["stages"]

        # Closing the page closes the session: it is persisted (tier 3) and marked ended.
        session = server.runtime.sessions[0]
        await client.close()
        await asyncio.wait_for(server.voices[0].closed.wait(), 30)
        assert session.closed
        assert not server.runtime.sessions
        ended = store.sessions.get(session_id)
        assert ended is not None and ended.ended_at

        # Reconnecting opens a new session that names the one it resumes.
        again = VoiceClient(server.url)
        new_id = await again.connect(resume=session_id)
        assert new_id != session_id
        resumed = store.sessions.get(new_id)
        assert resumed is not None and resumed.meta["resumed_from"] == session_id
        again.send_text(QUESTION)
        await again.wait_for(lambda c: c.of_type("state_answer"), 30, "an answer after resuming")
        await again.close()


async def test_a_voice_session_on_the_qwen35_model_warms_up_and_answers(
    annie_home: Path, engines: Engines, qwen35_llm: LLM
) -> None:
    """The generated Qwen3.5 model behind the real server: the warm-up at connect renders the
    head without a user turn (its template refuses one), and a typed turn reuses it."""
    # About one token per character on the generated tokenizer: a window to fit the head.
    settings = load_settings(context={"window": 16384, "reserve_output": 48})
    with Store.open(settings) as store:
        async with serve(settings, engines, qwen35_llm, store) as server:
            client = VoiceClient(server.url)
            await client.connect()
            session = server.runtime.sessions[0]

            def labels() -> list[str]:
                return [c.label for c in session.ledger.calls]

            await client.wait_for(lambda _: "warm-up" in labels(), 60, "the warm-up")
            # The head every session shares first (a fresh server's first session keeps it),
            # then this session's own briefing on top of it.
            assert labels() == ["shared head", "warm-up"]
            shared, warm = session.ledger.calls
            head = session.ledger.prefix_cost(session.conv.prefix).total
            assert warm.prompt_tokens == head and warm.reused_tokens >= shared.prompt_tokens
            client.send_text("Say hello.")
            done = await client.wait_for(
                lambda c: [e for e in c.of_type("assistant_done") if e["path"] == "model"],
                120,
                "the model turn",
            )
            assert not done[0]["interrupted"]
            assert model_rounds(server)[0].reused_tokens >= head
            # Random weights may babble a `<tool_call>` tag (an unreadable-call error the model
            # is told about); what must not happen is a model or template failure.
            failures = [e for e in client.of_type("error") if e.get("where") != "tool_call"]
            assert not failures, failures
            total, counted = session.ledger.verify(session.conv)
            assert total == counted
            await client.close()
            await asyncio.wait_for(server.voices[0].closed.wait(), 30)
        assert store.events.find(kinds=["compaction"]), "tier 3 persisted on disconnect"
