"""Spoken answers stay spoken, through the real server: a budget, no runaway, no code read out.

The voice is the real Piper engine behind a recorder that notes each piece it is asked to
say; the client measures what it hears. The real SmolLM2 shows that a rambling answer is
stopped (heard audio bounded, generation ended, the answer kept whole and not interrupted);
`ScriptedLLM` scripts a repeating answer, a fenced-code answer and a long typed one.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.server.app import Engines
from bot.voice.aloud import NOTICES, REST_ON_PAGE
from bot.voice.timing import TurnClock
from bot.voice.types import new_turn_id
from config import Settings, load_settings
from memory.store import Store
from models.base import LLM, STT, TTS, VAD, AudioChunk, Tokenizer
from models.fakes import ScriptedLLM
from testkit.peer import VOICED_RMS, VoiceClient
from tests.bot.voice.conftest import RunningServer, model_rounds, serve

# Small budgets keep the tests short; the mechanism is the same at the defaults.
SPOKEN_WORDS, SPOKEN_SENTENCES, WRITTEN_WORDS = 25, 2, 120
FRAME_S = 0.02


class RecordingTTS(TTS):
    """The real voice, noting each piece of text it is asked to say."""

    def __init__(self, inner: TTS) -> None:
        self.inner = inner
        self.sample_rate = inner.sample_rate
        self.said: list[str] = []

    def synthesize_iter(self, text: str) -> Iterator[AudioChunk]:
        return self.inner.synthesize_iter(text)

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        self.said.append(text)
        async for chunk in self.inner.synthesize(text):
            yield chunk


@pytest.fixture
def speech_settings(annie_home: Path) -> Settings:
    return load_settings(
        context={"window": 4096},
        speech={
            "spoken_words": SPOKEN_WORDS,
            "spoken_sentences": SPOKEN_SENTENCES,
            "written_words": WRITTEN_WORDS,
        },
    )


@pytest.fixture
def recorder(tts: TTS) -> RecordingTTS:
    return RecordingTTS(tts)


@pytest.fixture
def voice_engines(stt: STT, recorder: RecordingTTS, vad: VAD) -> Engines:
    return Engines(stt=stt, tts=recorder, vad=vad)


@pytest.fixture
def speech_store(speech_settings: Settings) -> Iterator[Store]:
    with Store.open(speech_settings) as s:
        yield s


async def seconds_per_word(tts: TTS) -> float:
    """Piper's pace, measured on a plain sentence."""
    text = "The quick brown fox jumps over the lazy dog while the farmer watches from the gate."
    samples = sum([len(c.pcm) async for c in tts.synthesize(text)])
    return samples / tts.sample_rate / len(text.split())


def heard_s(client: VoiceClient, since: float) -> float:
    return sum(FRAME_S for f in client.heard if f.at >= since and f.rms >= VOICED_RMS)


def deltas(client: VoiceClient, turn_id: str) -> str:
    return "".join(e["text"] for e in client.of_type("assistant_delta") if e["turn_id"] == turn_id)


async def finished(client: VoiceClient, turn_id: str, timeout: float = 60) -> dict[str, Any]:
    """The turn's answer, once it has also been spoken to its end (the voice goes idle)."""
    done = await client.wait_for(
        lambda c: [e for e in c.of_type("assistant_done") if e["turn_id"] == turn_id],
        timeout,
        "the answer",
    )
    await client.wait_for(
        lambda c: any(
            e["state"] == "idle" and e["turn_id"] == turn_id for e in c.of_type("voice_state")
        ),
        timeout,
        "the end of its speech",
    )
    assert len(done) == 1 and not done[0]["interrupted"]
    return dict(done[0])


async def typed(client: VoiceClient, text: str) -> str:
    """Type `text`; returns the turn's id (from its first voice state)."""
    before = len(client.of_type("voice_state"))
    client.send_text(text)
    states = await client.wait_for(
        lambda c: c.of_type("voice_state")[before:], 30, "the turn to start"
    )
    return str(states[0]["turn_id"])


async def spoken(server: RunningServer, text: str) -> str:
    """`text` as a turn from the microphone (the recognizer's part is tested elsewhere)."""
    clock = TurnClock(turn_id=new_turn_id(), source="voice", origin=time.monotonic())
    await server.voices[0].start_turn(text, clock)
    return clock.turn_id


def logged_answer(server: RunningServer, store: Store, turn_id: str) -> Any:
    session = server.runtime.sessions[0]
    rows = store.events.find(session.id, kinds=["assistant"], turn_id=turn_id)
    assert len(rows) == 1
    item = session.conv.last("assistant")
    assert item is not None and not item.interrupted
    return rows[0]


@pytest.mark.parametrize(
    "prompt",
    [
        "Tell me a very long story about a dragon, with every detail.",
        "Write a JavaScript function to remember the booking reference QX-7731.",
    ],
    ids=["story", "javascript"],
)
async def test_a_rambling_real_model_is_stopped_at_the_spoken_budget(
    prompt: str,
    speech_settings: Settings,
    voice_engines: Engines,
    recorder: RecordingTTS,
    llm: LLM,
    speech_store: Store,
) -> None:
    pace = await seconds_per_word(recorder.inner)
    async with serve(speech_settings, voice_engines, llm, speech_store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        since = time.monotonic()
        turn_id = await spoken(server, prompt)
        done = await finished(client, turn_id, timeout=90)

        # What was said stays within the budget: its sentences, then at most a notice.
        notices = set(NOTICES.values())
        said = [p for p in recorder.said if p not in notices]
        assert recorder.said, "something was said"
        assert sum(len(p.split()) for p in said) <= SPOKEN_WORDS + 30  # one sentence past
        ends = sum(p.rstrip("\"')").endswith((".", "!", "?")) for p in said)
        assert ends <= SPOKEN_SENTENCES
        allowed = (SPOKEN_WORDS + 30 + 10) * pace * 1.5
        assert heard_s(client, since) <= allowed, (heard_s(client, since), allowed, said)

        # Generation really stopped: the answer kept is short, whole and not interrupted.
        row = logged_answer(server, speech_store, turn_id)
        answer = row.content
        assert done["text"] == answer
        assert len(answer.split()) <= SPOKEN_WORDS + 30
        rounds = model_rounds(server)
        assert len(rounds) == 1
        # The model was stopped (far fewer tokens than its allowance of 512), or, sampling
        # differently this time, ended on its own inside the budget: either way no more
        # than the budget was generated.
        if "cut" in row.meta:
            assert row.meta["cut"] in ("budget", "repetition")
            assert rounds[0].generated_tokens < 200
        else:
            assert rounds[0].generated_tokens < 3 * (SPOKEN_WORDS + 30), row.content
        assert deltas(client, turn_id).startswith(answer)
        if "```" in answer:  # the code went to the page, and the voice said so
            assert NOTICES["fence"] in recorder.said


async def test_a_repeating_answer_is_cut_and_kept_up_to_the_repeat(
    speech_settings: Settings,
    voice_engines: Engines,
    recorder: RecordingTTS,
    tokenizer: Tokenizer,
    speech_store: Store,
) -> None:
    first = "I can help with that."
    loop = "The reference is QX-7731 and I will keep it safe."
    reply = f"{first} {loop} " + f"{loop} " * 40
    llm = ScriptedLLM(tokenizer, lambda prompt: reply, token_delay_s=0.01)
    async with serve(speech_settings, voice_engines, llm, speech_store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        turn_id = await typed(client, "Remember the booking reference QX-7731.")
        done = await finished(client, turn_id)

        assert recorder.said == [first, loop]
        row = logged_answer(server, speech_store, turn_id)
        assert row.content == done["text"] == f"{first} {loop}"
        assert row.meta["cut"] == "repetition"
        # Generation stopped within a few tokens of the repeat, long before the script's end.
        assert llm.last_stats.cancelled
        assert llm.last_stats.generated_tokens < len(tokenizer.tokenize(reply)) // 4
        page = deltas(client, turn_id)
        assert page.startswith(f"{first} {loop}") and len(page) < len(reply) // 4


async def test_code_goes_to_the_page_and_the_voice_says_so(
    speech_settings: Settings,
    voice_engines: Engines,
    recorder: RecordingTTS,
    tokenizer: Tokenizer,
    speech_store: Store,
) -> None:
    reply = (
        "Sure! Here is a function:\n\n```javascript\nfunction remember(ref) {\n"
        "  localStorage.setItem('booking', ref);\n  return ref;\n}\n```\n\n"
        "See https://developer.mozilla.org/docs/Web/API/Window/localStorage for more."
    )
    llm = ScriptedLLM(tokenizer, lambda prompt: reply)
    async with serve(speech_settings, voice_engines, llm, speech_store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        turn_id = await typed(client, "Write a JavaScript function to remember QX-7731.")
        done = await finished(client, turn_id)

        assert recorder.said == [
            "Sure!",
            "Here is a function:",
            NOTICES["fence"],
            "See the link on the page for more.",
        ]
        # The page has every character: the deltas and the finished answer.
        assert deltas(client, turn_id) == reply
        assert done["text"] == reply
        assert "cut" not in logged_answer(server, speech_store, turn_id).meta


async def test_typed_text_gets_the_written_budget_and_speaks_only_the_spoken_one(
    speech_settings: Settings,
    voice_engines: Engines,
    recorder: RecordingTTS,
    tokenizer: Tokenizer,
    speech_store: Store,
) -> None:
    sentences = [f"Fact number {i} is that dragons like warm caves." for i in range(40)]
    reply = " ".join(sentences)  # 360 words: past the written budget of 120
    llm = ScriptedLLM(tokenizer, lambda prompt: reply)
    pace = await seconds_per_word(recorder.inner)
    async with serve(speech_settings, voice_engines, llm, speech_store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        since = time.monotonic()
        turn_id = await typed(client, "Tell me everything about dragons.")
        done = await finished(client, turn_id)

        # Spoken: the spoken budget (two sentences here), then a pointer to the page.
        assert recorder.said == [*sentences[:SPOKEN_SENTENCES], REST_ON_PAGE]
        assert heard_s(client, since) <= (2 * 9 + 5 + 5) * pace * 1.5
        # Written: generation went on to the written budget, and stopped at a sentence end.
        row = logged_answer(server, speech_store, turn_id)
        assert row.meta["cut"] == "budget"
        kept = row.content
        assert done["text"] == kept and kept.endswith(".")
        assert WRITTEN_WORDS <= len(kept.split()) < WRITTEN_WORDS + 9
        assert kept == " ".join(sentences[: len(kept.split()) // 9])
        assert deltas(client, turn_id).startswith(kept)
