"""Recorded microphone input for the hearing tests: Piper renditions of the status question.

Piper samples its prosody afresh on every call, so a question synthesized at test time is
heard a little differently each run, and some renditions are far more fragile than others.
These two are fixed (22,050 Hz mono 16-bit, from `tests/fixtures/`):

- `pending_question.wav`: a typical rendition. Whisper tiny.en hears it right, clean, with or
  without the vocabulary prompt. The browser test speaks it into Chromium's fake microphone.
- `pending_fragile.wav`: a rendition that tiny.en, unaided, hears as "tasks spending" or
  "tasks standing" whenever a hiss lands on the onset of "pending" (1-2 of 18 damaged clips
  heard as the status question), and heard right with the prompt (17 of 18).
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt

FIXTURES = Path(__file__).parent / "fixtures"


def read_recording(name: str) -> tuple[npt.NDArray[np.float32], int]:
    """A fixture WAV as float32 PCM in [-1, 1] and its sample rate."""
    with wave.open(str(FIXTURES / name), "rb") as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2, name
        frames = w.readframes(w.getnframes())
        rate = w.getframerate()
    return np.frombuffer(frames, "<i2").astype(np.float32) / 32768.0, rate
