"""Whisper with Annie's vocabulary prompt: close calls go to her words; noise stays silent.

The damage is the one seen through a browser's noise suppressor: a hiss on the onset of
"pending", which tiny.en on its own hears as "spending", "standing" or "sending". Those
transcripts miss the state path and send a status question to the model. The recording is
fixed (see tests/recordings.py), so every run hears the same audio.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from bench.hearing import hiss_burst, word_onsets
from config import Settings, load_settings
from context.state_rules import match
from models import load_stt
from models.base import STT
from models.pcm import resample
from tests.recordings import read_recording

GRID = [
    (shift, dur, level)
    for shift in (0.0, 0.04, 0.08)
    for dur in (0.03, 0.06, 0.09)
    for level in (0.02, 0.05)
]


@pytest.fixture(scope="module")
def bare_stt(model_settings: Settings) -> STT:
    """The same Whisper model with the vocabulary prompt turned off."""
    environ = {"ANNIE_HOME": str(model_settings.home_path), "HF_HUB_OFFLINE": "1"}
    return load_stt(load_settings(environ=environ, models={"stt_prompt": ""}))


async def heard_as_pending(stt: STT, clips: list[np.ndarray]) -> int:
    """Clips heard with the word "pending" itself. (The state path now also forgives
    "tasks spending", so routing alone no longer shows what the recognizer heard.)"""
    hits = 0
    for clip in clips:
        text = (await stt.transcribe(clip)).text
        found = match(text)
        hits += found is not None and re.search(r"\bpending\b", text.lower()) is not None
    return hits


async def test_the_vocabulary_prompt_keeps_pending_from_becoming_spending(
    stt: STT, bare_stt: STT, model_settings: Settings
) -> None:
    assert model_settings.models.stt_prompt, "the shipped config carries a vocabulary prompt"
    pcm, rate = read_recording("pending_fragile.wav")
    clean = resample(pcm, rate, 16000)
    for engine in (stt, bare_stt):
        assert (await engine.transcribe(clean)).text == "Are there any tasks pending on me?"
    onsets = word_onsets(bare_stt, clean)
    assert len(onsets) == 7
    pending = onsets[4]
    clips = [
        hiss_burst(clean, pending + shift, dur, level, np.random.default_rng(i))
        for i, (shift, dur, level) in enumerate(GRID)
    ]
    with_prompt = await heard_as_pending(stt, clips)
    without = await heard_as_pending(bare_stt, clips)
    # Measured: 17 of 18 with the prompt, 1-2 without.
    assert with_prompt >= 14, f"{with_prompt} of {len(clips)} heard as a pending question"
    assert without <= 6, f"{without} of {len(clips)} without the prompt: the damage is too mild"


async def test_faint_noise_is_heard_as_nothing_not_as_the_prompt(stt: STT) -> None:
    # A sentence-shaped prompt came back as "Tasks pending on me." on -60 dBFS noise.
    for i in (0, 18):
        rng = np.random.default_rng(100 + i)
        noise = rng.normal(0.0, 10 ** (-(30 + i) / 20), 16000 + 800 * i).astype(np.float32)
        assert (await stt.transcribe(noise)).text == "", f"noise clip {i}"
