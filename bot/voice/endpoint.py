"""Turn speech probabilities into utterances: speech start, speech end, or a discarded blip.

Fed one 32 ms frame at a time with its VAD probability, the endpointer keeps a short pre-roll
so the first syllable is not clipped, confirms speech only after `min_speech_ms` of voiced
frames (a cough or a click never becomes a turn), and ends the utterance after `silence_ms`
of silence. Hysteresis: speech starts at `threshold` and keeps going down to
`threshold - 0.15` (Silero's own recommendation), so a soft word in the middle does not split
a sentence.

With `ask_after_ms` set (semantic endpointing), a pause that reaches it is announced as
`SpeechPaused`, again every `recheck_ms` while it lasts up to `recheck_until_ms`: the caller
asks an end-of-turn detector and calls `end_turn` when the speaker has finished. `silence_ms` is
then the longest pause, which ends the turn without the detector's word; speech after an
announced pause is `SpeechResumed`, so anything started for the pause can be dropped.

Pure and clock-free: time is counted in frames, so tests drive it with synthetic probabilities.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum

import numpy as np

from config.settings import VadSettings
from models.base import Pcm

SAMPLE_RATE = 16000
FRAME_SAMPLES = 512
FRAME_MS = FRAME_SAMPLES * 1000 / SAMPLE_RATE  # 32 ms
_HYSTERESIS = 0.15
# Kept after the last voiced frame so a trailing consonant reaches the recognizer.
_TAIL_MS = 160.0


@dataclass(frozen=True)
class EndpointConfig:
    threshold: float = 0.5
    silence_ms: float = 500.0
    min_speech_ms: float = 250.0
    pre_roll_ms: float = 200.0
    max_speech_ms: float = 30000.0
    # Semantic endpointing: when a pause is first announced (0: off, a fixed window) and how
    # often again while it lasts.
    ask_after_ms: float = 0.0
    recheck_ms: float = 100.0
    recheck_until_ms: float = 0.0

    @classmethod
    def from_settings(cls, vad: VadSettings, *, semantic: bool = False) -> EndpointConfig:
        """The fixed window, or with `semantic` the detector's short and long silences."""
        if semantic:
            # The pause's speech must already end where the utterance would (the voiced
            # frames plus the kept tail), so a transcript started then is the final one.
            return cls(
                threshold=vad.threshold,
                silence_ms=float(vad.turn_max_silence_ms),
                min_speech_ms=float(vad.min_speech_ms),
                pre_roll_ms=float(vad.pre_roll_ms),
                ask_after_ms=max(float(vad.turn_short_silence_ms), _TAIL_MS + FRAME_MS),
                recheck_ms=max(FRAME_MS, float(vad.turn_recheck_ms)),
                recheck_until_ms=float(vad.turn_recheck_until_ms),
            )
        return cls(
            threshold=vad.threshold,
            silence_ms=float(vad.silence_ms),
            min_speech_ms=float(vad.min_speech_ms),
            pre_roll_ms=float(vad.pre_roll_ms),
        )


class Phase(Enum):
    SILENCE = "silence"
    CANDIDATE = "candidate"  # voiced frames seen, not yet long enough to be speech
    SPEECH = "speech"


@dataclass(frozen=True)
class SpeechStarted:
    """Speech confirmed; `start_ms` is stream time of its first voiced frame."""

    start_ms: float


@dataclass(frozen=True)
class SpeechEnded:
    """An utterance: 16 kHz mono audio (with pre-roll), and when speech really ended.

    `end_ms` is the end of the last voiced frame; `fired_ms` is when the turn was ended.
    `rule` says what ended it: "silence" (the fixed window), "detector" (the end-of-turn detector
    judged it finished), "silence limit" (the longest pause, semantic mode) or "max length".
    `pause` numbers the pause that ended it within the utterance.
    """

    pcm: Pcm
    start_ms: float
    end_ms: float
    fired_ms: float
    voiced_ms: float
    forced: bool = False
    rule: str = "silence"
    pause: int = 0


@dataclass(frozen=True)
class SpeechDiscarded:
    """Voiced frames that never added up to `min_speech_ms` (a cough, a click, a breath)."""

    voiced_ms: float


@dataclass(frozen=True)
class SpeechPaused:
    """Semantic mode: the current pause has lasted `silence_ms`; ask whether the turn is over.
    `pause` numbers pauses within the utterance (the same number for each recheck), and
    `first` marks the first ask of a pause."""

    pause: int
    silence_ms: float
    first: bool = True


@dataclass(frozen=True)
class SpeechResumed:
    """The speaker went on after announced pause `pause`: its judgement no longer stands."""

    pause: int


EndpointEvent = SpeechStarted | SpeechEnded | SpeechDiscarded | SpeechPaused | SpeechResumed


class Endpointer:
    """Per-stream endpointing state; `push` one frame and its probability at a time."""

    def __init__(self, config: EndpointConfig | None = None) -> None:
        self.config = config or EndpointConfig()
        self._pre_roll: deque[Pcm] = deque(maxlen=max(0, round(self.config.pre_roll_ms / FRAME_MS)))
        self.reset()

    def reset(self) -> None:
        self.phase = Phase.SILENCE
        self._pre_roll.clear()
        self._frames: list[Pcm] = []
        self._now_ms = 0.0
        self._start_ms = 0.0
        self._last_voiced_ms = 0.0
        self._voiced_ms = 0.0
        self._silence_run_ms = 0.0
        self._frames_at_last_voiced = 0
        self.pause = 0
        self._next_ask_ms = self.config.ask_after_ms

    @property
    def now_ms(self) -> float:
        """Stream time: the end of the last frame pushed."""
        return self._now_ms

    @property
    def voiced_ms(self) -> float:
        """Voiced time in the current candidate or utterance (0 in silence)."""
        return self._voiced_ms if self.phase is not Phase.SILENCE else 0.0

    @property
    def silence_run_ms(self) -> float:
        """Unvoiced time since the last voiced frame of the current utterance."""
        return self._silence_run_ms if self.phase is not Phase.SILENCE else 0.0

    @property
    def in_speech(self) -> bool:
        return self.phase is Phase.SPEECH

    def audio_so_far(self) -> Pcm:
        """The current utterance's audio up to now, silence included (partial transcripts,
        and the end-of-turn detector, which hears the pause too)."""
        if not self._frames:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(self._frames)

    def speech_so_far(self) -> Pcm:
        """The audio the utterance would end with if it ended now: up to the last voiced
        frame plus the kept tail (what a speculative transcript is made of)."""
        frames = self._frames[: self._frames_at_last_voiced + round(_TAIL_MS / FRAME_MS)]
        if not frames:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(frames).astype(np.float32, copy=False)

    def end_turn(self, rule: str = "detector") -> SpeechEnded | None:
        """End the utterance now (the end-of-turn detector said it is finished); None unless an
        utterance is in a pause."""
        if self.phase is not Phase.SPEECH or self._silence_run_ms <= 0:
            return None
        ended = self._finish(forced=False, rule=rule)
        return ended if isinstance(ended, SpeechEnded) else None

    def push(self, frame: Pcm, probability: float) -> list[EndpointEvent]:
        cfg = self.config
        frame_start = self._now_ms
        self._now_ms += FRAME_MS
        events: list[EndpointEvent] = []
        if self.phase is Phase.SILENCE:
            if probability >= cfg.threshold:
                self.phase = Phase.CANDIDATE
                self._frames = [*self._pre_roll, frame]
                self._pre_roll.clear()
                self._start_ms = frame_start
                self._voiced_ms = FRAME_MS
                self._silence_run_ms = 0.0
                self._mark_voiced()
                if self._voiced_ms >= cfg.min_speech_ms:
                    self.phase = Phase.SPEECH
                    events.append(SpeechStarted(self._start_ms))
            else:
                self._pre_roll.append(frame)
            return events

        self._frames.append(frame)
        if probability >= cfg.threshold - _HYSTERESIS:
            self._voiced_ms += FRAME_MS
            self._silence_run_ms = 0.0
            self._mark_voiced()
            if self._next_ask_ms > cfg.ask_after_ms:  # a pause was announced, and it is over
                events.append(SpeechResumed(self.pause))
                self.pause += 1
                self._next_ask_ms = cfg.ask_after_ms
            if self.phase is Phase.CANDIDATE and self._voiced_ms >= cfg.min_speech_ms:
                self.phase = Phase.SPEECH
                events.append(SpeechStarted(self._start_ms))
        else:
            self._silence_run_ms += FRAME_MS

        if self._silence_run_ms >= cfg.silence_ms:
            events.append(
                self._finish(forced=False, rule="silence limit" if cfg.ask_after_ms else "silence")
            )
        elif self._now_ms - self._start_ms >= cfg.max_speech_ms:
            events.append(self._finish(forced=True, rule="max length"))
        elif (
            cfg.ask_after_ms > 0
            and self.phase is Phase.SPEECH
            and self._silence_run_ms >= self._next_ask_ms
            and (self._next_ask_ms == cfg.ask_after_ms or self._next_ask_ms <= cfg.recheck_until_ms)
        ):
            first = self._next_ask_ms == cfg.ask_after_ms
            events.append(SpeechPaused(self.pause, self._silence_run_ms, first))
            self._next_ask_ms += cfg.recheck_ms
        return events

    def _mark_voiced(self) -> None:
        self._last_voiced_ms = self._now_ms
        self._frames_at_last_voiced = len(self._frames)

    def _finish(self, *, forced: bool, rule: str) -> EndpointEvent:
        event: EndpointEvent
        if self.phase is Phase.SPEECH:
            keep = self._frames_at_last_voiced + round(_TAIL_MS / FRAME_MS)
            pcm = np.concatenate(self._frames[:keep]).astype(np.float32, copy=False)
            event = SpeechEnded(
                pcm=pcm,
                start_ms=self._start_ms,
                end_ms=self._last_voiced_ms,
                fired_ms=self._now_ms,
                voiced_ms=self._voiced_ms,
                forced=forced,
                rule=rule,
                pause=self.pause,
            )
        else:
            event = SpeechDiscarded(self._voiced_ms)
        self.phase = Phase.SILENCE
        self._frames = []
        self._voiced_ms = 0.0
        self._silence_run_ms = 0.0
        self._frames_at_last_voiced = 0
        self.pause = 0
        self._next_ask_ms = self.config.ask_after_ms
        return event


def trailing_silence_ms(ended: SpeechEnded) -> float:
    """How long after the real end of speech the endpoint fired."""
    return ended.fired_ms - ended.end_ms


# Words an English request almost never ends on: articles, conjunctions, and the prepositions
# and possessives that want a noun after them ("Set a reminder for …", "Tell me what is on …").
# Whisper writes a trailing "..." or "," where speech stops mid-phrase, and "?" where it heard
# a finished question ("What is it for?"), which then stands.
_OPEN_WORDS = frozenset(
    "a an the and or but nor because if whether unless although though than that to for "  # noqa: SIM905
    "about of with from into onto at by in on as like my your our their its um uh er".split()
)
_OPEN_ENDINGS = ("...", "…", ",", "-", "—", ":")


def reads_unfinished(text: str) -> bool:
    """The words say the speaker is mid-sentence: a trailing ellipsis, comma or dash, or a last
    word that wants more after it. An empty transcript says nothing either way."""
    text = text.strip()
    if not text:
        return False
    if text.endswith(_OPEN_ENDINGS):
        return True
    if text.endswith("?"):
        return False
    words = text.rstrip(".!;\"'").split()
    return bool(words) and words[-1].lower().strip("\"'(") in _OPEN_WORDS
