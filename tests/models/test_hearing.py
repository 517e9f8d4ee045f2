"""Whisper with Annie's vocabulary prompt: close calls go to her words; noise stays silent.

The damage is the one seen through a browser's noise suppressor: a hiss on the onset of
"pending", which tiny.en on its own hears as "spending", "standing" or "sending". Those
transcripts miss the state path and send a status question to the model.
"""

from __future__ import annotations

import numpy as np

from bot.bench.hearing import hiss_burst, speak_16k, word_onsets
from config import Settings
from context.state_rules import match
from models.base import STT, TTS

QUESTION = "Are there any tasks pending on me?"
GRID = [
    (shift, dur, level)
    for shift in (0.0, 0.08)
    for dur in (0.03, 0.06, 0.09)
    for level in (0.02, 0.05)
]


async def heard_as_pending(stt: STT, clips: list[np.ndarray]) -> int:
    hits = 0
    for clip in clips:
        found = match((await stt.transcribe(clip)).text)
        hits += found is not None and found.intent == "pending"
    return hits


async def test_the_vocabulary_prompt_keeps_pending_from_becoming_spending(
    stt: STT, tts: TTS, model_settings: Settings
) -> None:
    assert model_settings.models.stt_prompt, "the shipped config carries a vocabulary prompt"
    clean = speak_16k(tts, QUESTION)
    onsets = word_onsets(stt, clean)
    assert len(onsets) == 7
    pending = onsets[4]
    clips = [
        hiss_burst(clean, pending + shift, dur, level, np.random.default_rng(i))
        for i, (shift, dur, level) in enumerate(GRID)
    ]
    # Without the prompt this ranges from 3 to 10 of 12 (Whisper's temperature fallback
    # samples); `bench hearing` compares the two side by side.
    heard = await heard_as_pending(stt, clips)
    assert heard >= 9, f"{heard} of {len(clips)} heard as a pending question"


async def test_faint_noise_is_heard_as_nothing_not_as_the_prompt(stt: STT) -> None:
    # A sentence-shaped prompt came back as "Tasks pending on me." on -60 dBFS noise.
    for i in (0, 18):
        rng = np.random.default_rng(100 + i)
        noise = rng.normal(0.0, 10 ** (-(30 + i) / 20), 16000 + 800 * i).astype(np.float32)
        assert (await stt.transcribe(noise)).text == "", f"noise clip {i}"
