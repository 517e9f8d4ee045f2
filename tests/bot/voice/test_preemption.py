"""Answers prepared in the user's pause, over a real WebRTC peer: Whisper, Silero, Smart Turn
and Piper, the real server, an aiortc client speaking Piper's recordings.

The detector is set never to call a pause finished, so each turn ends on the longest pause
(or, for the status answer, when the test says the pause is over): the speculative transcript
is in before that, and the answer is prepared while the user is still silent. A status
question's answer is then played from audio synthesized in the pause; when the user goes on
speaking and the words change, what was prepared is dropped and never heard, and the next
pause prepares for the whole words.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bot.server.app import Engines
from config import Settings, load_settings
from context.state_answers import NOTHING_PENDING
from memory.store import Store
from models import EndOfTurnDetector, load_end_of_turn_detector
from models.base import LLM, STT, TTS, VAD, Pcm, Tokenizer
from models.end_of_turn import SmartTurnDetector, find_smart_turn
from models.fakes import ScriptedLLM
from models.llama_log import quiet_stderr
from models.llm import LlamaLLM
from testkit.peer import VoiceClient, speak_48k
from tests.bot.voice.conftest import RunningServer, serve

QUESTION = "Are there any tasks pending on me"
GOES_ON = "Write me a short poem about the sea."
POEM = "The sea is wide and blue."


def pausing(longest_ms: int, **context: int) -> Settings:
    """Turns that end only on the longest pause (the detector never says finished)."""
    return load_settings(
        context={"window": 4096, **context},
        vad={
            "turn_threshold": 1.0,
            "turn_recheck_threshold": 1.0,
            "turn_max_silence_ms": longest_ms,
        },
    )


@pytest.fixture(scope="module")
def detector() -> EndOfTurnDetector:
    """Smart Turn with a bar no pause reaches: turns end on the longest pause."""
    return load_end_of_turn_detector(pausing(3000))


@pytest.fixture
def engines(stt: STT, tts: TTS, vad: VAD, detector: EndOfTurnDetector) -> Iterator[Engines]:
    yield Engines(stt=stt, tts=tts, vad=vad, end_of_turn=detector)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * 48000), dtype=np.int16)


async def latency(client: VoiceClient) -> dict[str, Any]:
    done = await client.wait_for(
        lambda c: [e for e in c.of_type("latency") if "voice_to_voice" in e["stages"]],
        90,
        "the turn's latency",
    )
    return dict(done[0])


async def prepared(server: RunningServer, client: VoiceClient) -> None:
    voice = server.voices[0]
    await client.wait_for(
        lambda c: voice.ahead.words is not None and voice.tts.stats.prepared["speculative"],
        30,
        "the answer prepared in the pause",
    )


class ToldDetector(SmartTurnDetector):
    """Smart Turn whose "finished" comes when the test says the pause is over, so that the
    turn ends after the answer was prepared however slow this machine is. A fake for timing
    only: the real verdicts are tested in tests/models/test_end_of_turn.py and, through the
    server, in test_semantic_turns.py."""

    def __init__(self) -> None:
        super().__init__(find_smart_turn())
        self.over = asyncio.Event()

    async def judge(self, pcm: Pcm) -> float:
        await self.over.wait()
        return 1.0


async def test_a_status_answer_prepared_in_the_pause_is_played_at_the_turns_end(
    stt: STT, tts: TTS, vad: VAD, tokenizer: Tokenizer, store: Store
) -> None:
    llm = ScriptedLLM(tokenizer, lambda prompt: POEM)
    told = ToldDetector()
    engines = Engines(stt=stt, tts=tts, vad=vad, end_of_turn=told)
    settings = load_settings(context={"window": 4096}, vad={"turn_max_silence_ms": 60000})
    async with serve(settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        client.mic.play(await speak_48k(tts, QUESTION))
        await prepared(server, client)
        await server.voices[0].tts.wait()  # its audio too
        assert not client.of_type("assistant_done"), "prepared, not said, before the turn ends"
        told.over.set()

        event = await latency(client)

        voice = server.voices[0]
        assert event["prepared"] == "hit"
        said = [e["text"] for e in client.of_type("state_answer")]
        assert said == [NOTHING_PENDING]
        # Its audio was synthesized in the pause: done before the turn asked for it.
        assert voice.tts.stats.hits["speculative"] == 1 and voice.tts.stats.ready_hits == 1
        assert voice.ahead.hits == 1 and voice.ahead.misses == 0
        assert server.runtime.sessions[0].ahead.stats.used == 1
        assert llm.prompts == []  # the model was never asked
        await client.close()


async def test_words_that_go_on_drop_what_was_prepared_and_it_is_never_heard(
    engines: Engines, tts: TTS, tokenizer: Tokenizer, store: Store
) -> None:
    llm = ScriptedLLM(tokenizer, lambda prompt: POEM)
    async with serve(pausing(5000), engines, llm, store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        client.mic.play(await speak_48k(tts, QUESTION))
        await prepared(server, client)  # the status answer is ready; the user goes on
        client.mic.play(np.concatenate([await speak_48k(tts, GOES_ON), silence(6.0)]))

        event = await latency(client)

        voice = server.voices[0]
        done = client.of_type("assistant_done")
        assert [d["text"] for d in done] == [POEM]
        assert not client.of_type("state_answer")
        # The status answer prepared in the first pause never played; the second pause
        # prepared the model's prompt for the whole words, and the turn used it.
        assert voice.tts.stats.prepared["speculative"] >= 1
        assert voice.tts.stats.hits["speculative"] == 0
        assert voice.ahead.misses == 1 and voice.ahead.hits == 1 and event["prepared"] == "hit"
        session = server.runtime.sessions[0]
        assert session.ahead.stats.state == 1 and session.ahead.stats.model == 1
        assert session.ahead.stats.dropped == 1 and session.ahead.stats.used == 1
        assert llm.prompts and "poem" in llm.prompts[0].lower()
        final = [e["text"] for e in client.of_type("transcript") if e["final"]]
        assert len(final) == 1 and "poem" in str(final[0]).lower()
        await client.close()


@pytest.fixture(scope="module")
def reference(qwen35_path: Path) -> Iterator[Any]:
    """The generated hybrid model on a context of its own, for fresh evaluations."""
    import llama_cpp

    with quiet_stderr():
        model = llama_cpp.Llama(str(qwen35_path), n_ctx=16384, n_batch=512, verbose=False)
    yield model
    model.close()


async def test_a_hybrid_models_prompt_prepared_for_other_words_leaves_no_trace(
    annie_home: Path, engines: Engines, tts: TTS, qwen35_llm: LLM, reference: Any
) -> None:
    import llama_cpp

    # About one token per character on the generated tokenizer: a window to fit the head.
    settings = pausing(5000, window=16384, reserve_output=48)
    assert isinstance(qwen35_llm, LlamaLLM)
    with Store.open(settings) as store:
        async with serve(settings, engines, qwen35_llm, store) as server:
            client = VoiceClient(server.url)
            await client.connect()
            session = server.runtime.sessions[0]
            client.mic.play(await speak_48k(tts, "Tell me about the sea"))
            await client.wait_for(
                lambda _: session.ahead.stats.prefilled_tokens > 0, 60, "a prompt prepared"
            )
            client.mic.play(np.concatenate([await speak_48k(tts, GOES_ON), silence(6.0)]))
            await client.wait_for(lambda c: c.of_type("assistant_done"), 120, "the answer")

            # The first pause's prompt was dropped; the model now holds exactly what a fresh
            # evaluation of its tokens gives, with nothing of the dropped words in it.
            assert session.ahead.stats.dropped >= 1
            tokens, logits = await qwen35_llm.next_logits()
            reference.reset()
            reference.eval(tokens)
            ptr = llama_cpp.llama_get_logits_ith(reference.ctx, -1)
            fresh = np.ctypeslib.as_array(ptr, shape=(reference.n_vocab(),)).astype(np.float32)
            np.testing.assert_allclose(logits, fresh, rtol=1e-3, atol=1e-3)
            held = qwen35_llm.detokenize(tokens)
            final = [e["text"] for e in client.of_type("transcript") if e["final"]]
            assert len(final) == 1 and "poem" in str(final[0]).lower()
            # The whole words once, as the turn said them; the first pause's words never alone:
            # only as often as the recognizer put them in the whole (it may hear "the sea" of
            # the joined words otherwise).
            assert held.count(str(final[0])) == 1
            first = "Tell me about the sea"
            assert held.count(first) == str(final[0]).count(first), final
            await client.close()
