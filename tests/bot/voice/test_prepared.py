"""Speech synthesized ahead, on the real Piper voice: a prepared piece plays from the store
(joining a synthesis under way, never starting a second), other words are synthesized as
usual and never get prepared audio, and the phrases said often are kept once said."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np

from bot.voice.aloud import spoken_pieces
from bot.voice.prepared import FIXED_PHRASES, PreparedVoice
from context.state_answers import NOTHING_PENDING
from models.base import TTS, AudioChunk


class CountingTTS(TTS):
    """The real voice, counting what it is asked to synthesize."""

    def __init__(self, inner: TTS) -> None:
        self.inner = inner
        self.sample_rate = inner.sample_rate
        self.asked: list[str] = []

    def synthesize_iter(self, text: str) -> Iterator[AudioChunk]:
        self.asked.append(text)
        return self.inner.synthesize_iter(text)


async def audio(voice: TTS, text: str) -> np.ndarray:
    return np.concatenate([c.pcm async for c in voice.synthesize(text)])


async def test_a_prepared_piece_plays_from_the_store_and_is_synthesized_once(tts: TTS) -> None:
    counting = CountingTTS(tts)
    voice = PreparedVoice(counting)
    text = "You have two tasks waiting for you."

    voice.prepare([text])
    heard = await audio(voice, text)  # asked at once: joins the synthesis under way

    assert counting.asked == [text]
    assert voice.stats.hits["speculative"] == 1 and voice.stats.synthesized == 0
    # Piper varies its timing from run to run (up to about 7%): the same words, about as long.
    direct = await audio(tts, text)
    assert abs(heard.size - direct.size) < 0.1 * direct.size
    # Said once, a speculative piece is gone: the next time is synthesized afresh.
    await audio(voice, text)
    assert counting.asked == [text, text]


async def test_words_not_prepared_never_get_prepared_audio(tts: TTS) -> None:
    counting = CountingTTS(tts)
    voice = PreparedVoice(counting, capacity=2)
    voice.prepare(["Your dentist is at three.", "Nothing is blocked."])
    await voice.wait()

    other = "Your dentist is at four."
    heard = await audio(voice, other)

    assert voice.stats.hits["speculative"] == 0 and voice.stats.synthesized == 1
    # The voice was asked for these words, and what played is about as long as they are
    # (Piper's timing varies from run to run: 7% apart was seen in a full run).
    assert counting.asked[-1] == other
    direct = await audio(tts, other)
    assert abs(heard.size - direct.size) < 0.1 * direct.size
    # Bounded: preparing more drops the oldest speculative pieces.
    voice.prepare(["One more.", "And another."])
    await voice.wait()
    assert not voice.ready("Your dentist is at three.") and voice.ready("And another.")


async def test_a_fixed_phrase_is_kept_once_said_and_ready_at_start(tts: TTS) -> None:
    counting = CountingTTS(tts)
    voice = PreparedVoice(counting)
    assert NOTHING_PENDING in FIXED_PHRASES
    assert spoken_pieces(NOTHING_PENDING) == [NOTHING_PENDING]  # one piece, as it is said

    await audio(voice, NOTHING_PENDING)
    await audio(voice, NOTHING_PENDING)
    assert counting.asked == [NOTHING_PENDING]
    assert voice.stats.hits["fixed"] == 1

    started = PreparedVoice(counting)
    started.prepare(FIXED_PHRASES, kind="fixed")
    assert not started.fixed_ready()
    await started.wait()
    assert started.fixed_ready() and all(started.ready(p) for p in FIXED_PHRASES)
    # Fixed phrases stay, however many speculative pieces come after.
    started.prepare([f"Piece {i}." for i in range(20)])
    await asyncio.sleep(0)
    assert all(started.ready(p) for p in FIXED_PHRASES)
    await started.wait()
