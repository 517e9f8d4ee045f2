"""Per-turn latency: where the time between the user's last word and Annie's first sound went.

The clock starts at the end of the user's speech (the moment the endpoint fired, minus the
silence window that had to pass to be sure) or, for typed text, when the text arrived. It
stops at the first audio frame handed to WebRTC. In between: the silence window the endpoint
waited out, recognition, the state path or the model's first token, and synthesis of the
first chunk. All figures are milliseconds. The clock is the one owner of a voice turn's
timing: the session loop's own stages join it, and it alone sends the turn's `LatencyEvent`
(at the first sound, and complete at the end) and stores the turn's metrics.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Protocol

from bot.turn.events import Event, LatencyEvent, StateAnswer, TextDelta, TurnDone
from bot.voice.audio_out import UtteranceTiming

log = logging.getLogger(__name__)


class MetricsSink(Protocol):
    def record(self, session_id: str, turn_id: str, stages: dict[str, float], path: str) -> int: ...


# The parts of the wait, in the order they happen (a turn has either state or llm_first_token).
PARTS = ("endpoint", "stt", "state", "llm_first_token", "first_clause", "tts_first_chunk")


@dataclass
class TurnClock:
    turn_id: str
    source: str  # "voice" or "text"
    origin: float  # monotonic: end of speech, or arrival of the typed text
    started: float = 0.0  # monotonic: the session loop was handed the text
    first_answer: float | None = None
    first_frame: float | None = None
    path: str = ""
    interrupted: bool = False
    # Whether the answer was prepared during the user's pause: "hit", "miss" or "".
    prepared: str = ""
    stages: dict[str, float] = field(default_factory=dict)
    # The session loop's own timings of the turn (state_ms, recall_ms, first_token_ms, ...).
    session_stages: dict[str, float] = field(default_factory=dict)

    def observe(self, event: Event) -> None:
        """The session's events mark when the answer began, and by which path."""
        now = time.monotonic()
        if isinstance(event, TextDelta) and self.first_answer is None:
            self.first_answer = now
            self.path = "model"
            self.stages["llm_first_token"] = (now - self.started) * 1000.0
        elif isinstance(event, StateAnswer) and self.first_answer is None:
            self.first_answer = now
            self.path = "state"
            self.stages["state"] = float(event.latency_ms)
        elif isinstance(event, TurnDone) and event.turn_id == self.turn_id:
            self.path = event.path or self.path

    def store(self, metrics: MetricsSink, session_id: str) -> None:
        """Store the turn's stages beside the session's row for it (a failure is logged)."""
        try:
            metrics.record(session_id, self.turn_id, self.stored_stages(), self.stored_path)
        except Exception:
            log.exception("could not store turn metrics")

    def fill_from_utterance(self, timing: UtteranceTiming) -> None:
        if timing.first_piece_at is not None and self.first_answer is not None:
            wait = max(0.0, timing.first_piece_at - self.first_answer)
            self.stages["first_clause"] = wait * 1e3
        if timing.first_piece_at is not None and timing.first_audio_at is not None:
            self.stages["tts_first_chunk"] = (timing.first_audio_at - timing.first_piece_at) * 1e3
        if timing.first_frame_at is not None and self.first_frame is None:
            self.first_frame = timing.first_frame_at
            self.stages[self.total_name] = (timing.first_frame_at - self.origin) * 1e3

    @property
    def total_name(self) -> str:
        return "voice_to_voice" if self.source == "voice" else "text_to_voice"

    @property
    def total_ms(self) -> float | None:
        return self.stages.get(self.total_name)

    def public_stages(self) -> dict[str, float]:
        """The stages in the order they happen, then the total, then the session loop's own
        timings (named *_ms); rounded to 0.1 ms."""
        order = [*PARTS, self.total_name]
        shown = {name: round(self.stages[name], 1) for name in order if name in self.stages}
        return shown | {name: round(ms, 1) for name, ms in self.session_stages.items()}

    def event(self) -> LatencyEvent:
        """The turn's breakdown for the page (`public_stages`), with the clock's marks."""
        return LatencyEvent(
            self.turn_id,
            self.public_stages(),
            self.prepared,
            speech_end_at=self.origin,
            first_frame_at=self.first_frame or 0.0,
        )

    def stored_stages(self) -> dict[str, float]:
        """The parts only, plus `other` (pacing, resampling, queueing) when the total is
        known, so that they add up to the total (the store sums a row's stages)."""
        parts = {name: round(self.stages[name], 1) for name in PARTS if name in self.stages}
        total = self.total_ms
        if total is not None:
            parts["other"] = round(max(0.0, total - sum(parts.values())), 1)
        return parts

    @property
    def stored_path(self) -> str:
        return f"{self.source}/{self.path or 'none'}"
