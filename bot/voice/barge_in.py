"""When the user's voice should stop Annie: pause at the first likely sign, stop once sure.

Fed one VAD frame (32 ms) at a time with how long Annie has been speaking, the detector says
`PAUSE` as soon as speech is likely (`likely_ms` of voiced frames, two by default), so her
audio goes silent at the client within a frame or two of the user's onset; `STOP` once the
voiced frames add up to `min_speech_ms` (a barge-in: the answer is cut and the user's turn
begins); or `RESUME` when a paused run dies away before that (a cough, a click, a door): the
queued audio plays on from where it paused, nothing lost.

Only frames heard after the first `guard_ms` of playback count, since Annie's own voice can
leak through the microphone before the browser's echo canceller has adapted; voiced frames
may have one unvoiced frame between them.
"""

from __future__ import annotations

from enum import Enum

from bot.voice.endpoint import FRAME_MS
from config.settings import VadSettings


class Barge(Enum):
    NONE = "none"
    PAUSE = "pause"
    RESUME = "resume"
    STOP = "stop"


class BargeInDetector:
    """Per-connection barge-in state; `push` one frame's speech probability at a time."""

    def __init__(
        self,
        threshold: float,
        guard_ms: float,
        min_speech_ms: float,
        likely_ms: float = 2 * FRAME_MS,
        resume_ms: float = 250.0,
    ) -> None:
        self.threshold = threshold
        self.guard_ms = guard_ms
        self.min_speech_ms = min_speech_ms
        self.likely_ms = min(likely_ms, min_speech_ms)
        self.resume_ms = resume_ms
        self.reset()

    @classmethod
    def from_settings(cls, vad: VadSettings) -> BargeInDetector:
        return cls(
            vad.threshold,
            float(vad.barge_in_guard_ms),
            float(vad.barge_in_min_speech_ms),
            float(vad.barge_in_pause_ms),
            float(vad.barge_in_resume_ms),
        )

    def reset(self) -> None:
        self._run_ms = 0.0
        self._gap_frames = 0
        self.paused = False
        self._quiet_ms = 0.0

    def push(self, probability: float, playback_ms: float | None) -> Barge:
        """One frame; `playback_ms` is how long Annie has been speaking (None: silent)."""
        if playback_ms is None or playback_ms < self.guard_ms:
            was_paused = self.paused
            self.reset()
            return Barge.RESUME if was_paused else Barge.NONE
        if probability >= self.threshold:
            self._run_ms += FRAME_MS
            self._gap_frames = 0
            self._quiet_ms = 0.0
        else:
            self._gap_frames += 1
            if self._gap_frames > 1:
                self._run_ms = 0.0
            if self.paused:
                self._quiet_ms += FRAME_MS
        if self._run_ms >= self.min_speech_ms:
            self.reset()
            return Barge.STOP
        if not self.paused and self._run_ms >= self.likely_ms:
            self.paused = True
            self._quiet_ms = 0.0
            return Barge.PAUSE
        if self.paused and self._quiet_ms >= self.resume_ms:
            self.reset()
            return Barge.RESUME
        return Barge.NONE
