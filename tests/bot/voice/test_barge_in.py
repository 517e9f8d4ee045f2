"""Barge-in over real aiortc peers: the user talks over Annie and she stops at once.

The answer comes from `ScriptedLLM` (a long reply at a chosen speed), so the interruption
lands mid-answer every time; the real model's spoken path is covered in test_voice_e2e.
"""

from __future__ import annotations

import numpy as np
import pytest

from bot.server.app import Engines
from config import Settings
from memory.store import Store
from models.base import TTS, Tokenizer
from models.fakes import ScriptedLLM
from models.pcm import resample
from testkit.pause_fixtures import FIXTURES
from testkit.peer import VoiceClient, speak_48k
from testkit.turn_fixtures import read_wav
from tests.bot.voice.conftest import serve

LONG_REPLY = (
    "The sea covers most of the planet, and it has shaped every coast you have ever seen. "
    "Long ago sailors crossed it with nothing but the stars to guide them. "
    "Tides rise and fall twice a day because the moon pulls on the water. "
    "Deep below the surface there are mountains taller than any on land. "
    "Whales sing to each other across hundreds of miles of open water. "
    "Every wave you watch may have started in a storm on the other side of the world."
)
SECOND_REPLY = "Okay, I stopped."


def voice_burst(ms: int = 100) -> np.ndarray:
    """A cough-like burst: the first `ms` of a recorded word, as a microphone sends it (48 kHz
    int16). Recorded, not synthesized: Piper samples afresh on every call, and a burst this
    short sits close enough to the barge-in thresholds that a different rendition could cross
    one (the same clip at every alignment to the VAD's frames pauses and plays on)."""
    word = resample(read_wav(FIXTURES / "03_can_you_tell_me_v0.wav"), 16000, 48000)
    pcm = (word * 32767).astype(np.int16)
    loud = np.flatnonzero(np.abs(pcm) > 0.05 * 32768)
    return pcm[loud[0] : loud[0] + 48 * ms]


@pytest.mark.parametrize(
    "stall_after_tokens",
    # Two sentences, then the model goes on "thinking" until the barge-in cancels it: the
    # generation is still running when she is interrupted, however slowly she spoke.
    [40, None],
    ids=["while-generating", "after-generation-while-speaking"],
)
async def test_talking_over_annie_stops_her_and_keeps_only_what_was_heard(
    stall_after_tokens: int | None,
    voice_settings: Settings,
    engines: Engines,
    tokenizer: Tokenizer,
    tts: TTS,
    store: Store,
) -> None:
    llm = ScriptedLLM(tokenizer, [LONG_REPLY, SECOND_REPLY], stall_after_tokens=stall_after_tokens)
    interruption = await speak_48k(tts, "Stop, please wait a moment.")
    async with serve(voice_settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        client.send_text("Tell me about the sea.")

        # Let Annie speak for a while (well past the guard interval), then talk over her.
        await client.wait_for(lambda c: len(c.voiced_since(0)) >= 60, 90, "1.2 s of answer")
        turn_id = client.of_type("voice_state")[0]["turn_id"]
        if stall_after_tokens is None:
            assert any(e["turn_id"] == turn_id for e in client.of_type("assistant_done"))
        client.mic.play(interruption)
        await client.wait_for(
            lambda c: any(e["state"] == "interrupted" for e in c.of_type("voice_state")),
            30,
            "the barge-in",
        )
        voice = server.voices[0]
        barge = voice.stats.barge_ins[0]
        assert barge.turn_id == turn_id
        assert client.mic.clip_started[1] < barge.at

        # The answer stops: nothing voiced arrives after the cut (the reply to the
        # interruption cannot start before the user has finished speaking).
        done = await client.wait_for(
            lambda c: [
                e
                for e in c.of_type("assistant_done")
                if e["turn_id"] == turn_id and e["interrupted"]
            ],
            30,
            "the interrupted turn",
        )
        # Counted, not timed: frames already in flight may arrive late on a busy machine, but
        # an answer that kept playing would send 50 voiced frames a second.
        late = [f for f in client.voiced_since(barge.at) if f.at < barge.at + 1.0]
        assert len(late) <= 8, f"{len(late)} voiced frames after the barge-in"

        heard = done[-1]["text"]
        assert heard == barge.delivered_text
        assert heard and len(heard) < len(LONG_REPLY)
        assert LONG_REPLY.split()[: len(heard.split())] == heard.split()

        # History keeps only what was heard, marked interrupted; the log keeps everything.
        session = server.runtime.sessions[0]
        answer = session.conv.last("assistant")
        assert answer is not None and answer.interrupted
        assert answer.content.strip() == heard.strip()
        assert "[interrupted" in answer.visible
        logged = store.events.find(session.id, kinds=["assistant"], turn_id=turn_id)
        assert logged[-1].meta["interrupted"] and logged[-1].content.strip() == heard.strip()
        dones = [e for e in client.of_type("assistant_done") if e["turn_id"] == turn_id]
        if stall_after_tokens is None:
            # Generation had finished: the full answer stays in the log, then the amendment.
            assert [e.content for e in logged[:-1]] == [LONG_REPLY]
            assert [d["interrupted"] for d in dones] == [False, True]
        else:
            # Cut mid-generation: the session itself ended the turn as interrupted.
            assert len(logged) == 1 and [d["interrupted"] for d in dones] == [True]

        # The interruption itself becomes the next turn.
        await client.wait_for(
            lambda c: any(
                e["text"] == SECOND_REPLY and not e["interrupted"]
                for e in c.of_type("assistant_done")
            ),
            90,
            "the answer to the interruption",
        )
        finals = [e["text"].lower() for e in client.of_type("transcript") if e["final"]]
        assert any("stop" in t for t in finals)
        await client.close()


async def test_a_short_word_in_her_first_second_stops_her_and_is_heard(
    voice_settings: Settings,
    engines: Engines,
    tokenizer: Tokenizer,
    tts: TTS,
    store: Store,
) -> None:
    """Before the echo check has heard enough of her to judge (about a second), a stop waits
    and she stays paused; a word that ends in that time still stops her and is the next
    turn, not dropped as her echo."""
    llm = ScriptedLLM(tokenizer, [LONG_REPLY, SECOND_REPLY])
    interruption = await speak_48k(tts, "Stop.")
    async with serve(voice_settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        client.send_text("Tell me about the sea.")
        await client.wait_for(lambda c: len(c.voiced_since(0)) >= 15, 90, "her first words")
        client.mic.play(interruption)
        voice = server.voices[0]
        await client.wait_for(lambda c: voice.stats.barge_ins, 30, "the barge-in")
        await client.wait_for(
            lambda c: any(e["text"] == SECOND_REPLY for e in c.of_type("assistant_done")),
            90,
            "the answer to the interruption",
        )
        finals = [e["text"].lower() for e in client.of_type("transcript") if e["final"]]
        assert any("stop" in t for t in finals)
        assert not voice.stats.echo_utterances_ignored
        await client.close()


async def test_a_cough_pauses_annie_and_she_plays_on_from_where_she_paused(
    voice_settings: Settings,
    engines: Engines,
    tokenizer: Tokenizer,
    store: Store,
) -> None:
    llm = ScriptedLLM(tokenizer, [LONG_REPLY])
    burst = voice_burst()
    async with serve(voice_settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        client.send_text("Tell me about the sea.")
        await client.wait_for(lambda c: len(c.voiced_since(0)) >= 60, 90, "1.2 s of answer")
        voice = server.voices[0]
        client.mic.play(burst)
        await client.wait_for(lambda c: voice.stats.barge_pauses >= 1, 10, "the pause")
        paused_at = voice.output.last_voiced_sent_at
        await client.wait_for(lambda c: voice.stats.false_alarms >= 1, 10, "playing on")
        # Heard in full: not interrupted, and the words after the pause were still sent.
        done = await client.wait_for(lambda c: c.of_type("assistant_done"), 120, "the answer")
        await client.wait_for(lambda c: not voice.output.queued_frames, 120, "the audio")
        assert not done[0]["interrupted"] and done[0]["text"] == LONG_REPLY
        assert not voice.stats.barge_ins
        resumed_at = voice.output.last_voiced_sent_at
        assert paused_at is not None and resumed_at is not None and resumed_at > paused_at
        assert not any(e["state"] == "interrupted" for e in client.of_type("voice_state"))
        await client.close()


async def test_her_own_voice_coming_back_does_not_stop_her_but_the_user_still_does(
    voice_settings: Settings,
    engines: Engines,
    tokenizer: Tokenizer,
    tts: TTS,
    store: Store,
) -> None:
    """A speaker without echo cancelling: the client plays what it receives back into its
    microphone at -20 dB, 60 ms later. Her echo is voice to the VAD, and pauses nothing;
    the user talking over it still stops her."""
    llm = ScriptedLLM(tokenizer, [LONG_REPLY, SECOND_REPLY])
    interruption = await speak_48k(tts, "Stop, please wait a moment.")
    async with serve(voice_settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        client.mic.leak(0.1)
        client.send_text("Tell me about the sea.")
        await client.wait_for(lambda c: len(c.voiced_since(0)) >= 250, 90, "5 s of answer")
        voice = server.voices[0]
        assert voice.stats.echo_frames_ignored > 20  # the VAD heard her: the check decided
        # Not stopped. At most a pause on her first word, before the echo path is learned
        # (she plays on from it); without the check her echo paused her 10-15 times here.
        assert not voice.stats.barge_ins and voice.stats.barge_pauses <= 2
        client.mic.play(interruption)
        await client.wait_for(lambda c: voice.stats.barge_ins, 30, "the barge-in")
        await client.close()
