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

A stop is final, so it waits until her echo could have been told apart: the caller says
whether the frame was `judged` (the echo check has learned the echo's path, or has heard
enough of her answer at every delay an echo could have). A run long enough to stop before
then keeps her paused and the stop pending: it is made at the first judged frame, or when
the utterance ends (`take_pending`), and dropped when a frame shows the run was her echo.
Her audio is silent from the first likely frame either way; only the commitment waits.
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
        # A run long enough to stop, heard before the echo could be judged.
        self.pending = False

    def take_pending(self) -> bool:
        """Whether a stop was pending (then it is made now: the caller stops her)."""
        pending = self.pending
        if pending:
            self.reset()
        return pending

    def push(
        self,
        probability: float,
        playback_ms: float | None,
        *,
        judged: bool = True,
        echo: bool = False,
    ) -> Barge:
        """One frame; `playback_ms` is how long Annie has been speaking (None: silent).
        `echo`: the frame's voice was hers (then `probability` should be 0); `judged`: the
        echo check could tell her echo from the user by this frame."""
        if playback_ms is None or playback_ms < self.guard_ms:
            was_paused = self.paused
            self.reset()
            return Barge.RESUME if was_paused else Barge.NONE
        if echo and self.pending:
            self.pending = False  # the run was her own voice coming back
            self._run_ms = 0.0
        if self.pending and judged:
            self.reset()
            return Barge.STOP
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
            if judged:
                self.reset()
                return Barge.STOP
            self.pending = True
        if not self.paused and self._run_ms >= self.likely_ms:
            self.paused = True
            self._quiet_ms = 0.0
            return Barge.PAUSE
        if self.paused and not self.pending and self._quiet_ms >= self.resume_ms:
            self.reset()
            return Barge.RESUME
        return Barge.NONE
