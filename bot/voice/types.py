"""The pieces the voice loop is made of: the conversation as it sees it, what it records.

`Line` is the conversation as the voice connection sees it: one inbox (`send`, with the
commands of `bot.turn.inbox`) and one outbox of events; the voice holds nothing else of it.
`AnswerInFlight` is one answer from its start to its last audible frame: the conversation's
events for it, what audio out reported of its speech (the frames of
`bot.voice.audio_out`), whether it was interrupted; `Answering` is the frame that tells hearing
whether an answer is in progress and since when it is audible (hearing tells the user's voice
from Annie's by it). `VoiceStats` keeps every turn's clock and every barge-in
for tests and the benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.turn.events import Event, TurnDone
from bot.turn.inbox import Command
from bot.voice.audio_out import UtteranceTiming
from bot.voice.timing import TurnClock


class Line(Protocol):
    """The conversation a voice connection drives (`bot.turn.session.Session`)."""

    @property
    def outbox(self) -> asyncio.Queue[Event]:
        """Everything the conversation says: each turn's events, closed by `AnswerClosed`,
        and what comes between turns."""

    def send(self, command: Command) -> None:
        """The one way in: a turn waits its turn, a control acts now."""

    async def close(self) -> Any:
        """The connection is over: the conversation persists what it holds (tier 3)."""


class Channel(Protocol):
    readyState: str

    def send(self, data: str) -> None: ...


@dataclass
class BargeIn:
    turn_id: str
    at: float
    delivered_text: str
    frames_dropped: int


@dataclass
class AnswerInFlight:
    """The answer being worked out and spoken on this connection (or a reminder's
    announcement), from its start until its last audible frame."""

    clock: TurnClock
    task: asyncio.Task[None] | None = None
    interrupted: bool = False
    # When and why it was interrupted; what the user heard comes back from audio out.
    interrupted_at: float = 0.0
    interrupt_reason: str = ""
    delivered: str = ""
    delivered_known: asyncio.Event = field(default_factory=asyncio.Event)  # `Delivered` came
    # Audio out's reports: its timing, the first audible frame's time, the pieces it was
    # given, and whether its speech is over (`Played`).
    timing: UtteranceTiming = field(default_factory=UtteranceTiming)
    audible_since: float | None = None
    pieces: int = 0
    played: asyncio.Event = field(default_factory=asyncio.Event)
    done: TurnDone | None = None  # the session's TurnDone, once it came
    # Set at the turn's `EndOfAnswer`: every piece of it is on its way to audio out.
    closed: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True)
class Answering:
    """To hearing: whether an answer is in progress (`turn_id`, "" for none) and since when
    it is audible (monotonic; None before its first frame, once it ended or was cut)."""

    turn_id: str = ""
    audible_since: float | None = None

    def playback_ms(self, now: float) -> float | None:
        """How long the answer has been audible at `now`, or None."""
        if self.audible_since is None:
            return None
        return (now - self.audible_since) * 1000.0


@dataclass
class VoiceStats:
    turns: list[TurnClock] = field(default_factory=list)
    barge_ins: list[BargeIn] = field(default_factory=list)
    echo_utterances_ignored: int = 0
    # Barge-in: pauses at a likely voice, and those that were false alarms (played on).
    barge_pauses: int = 0
    false_alarms: int = 0
    # Microphone frames with voice while Annie spoke that were her echo (`bot.voice.echo`).
    echo_frames_ignored: int = 0
    # Turns by the rule that ended them ("silence", "detector", "silence limit", "max length").
    ended_by: dict[str, int] = field(default_factory=dict)
    detector_runs: int = 0
    # Pauses the detector called finished whose transcript read mid-sentence (held open).
    held_by_words: int = 0
    speculative_started: int = 0
    speculative_used: int = 0
    speculative_discarded: int = 0


def new_turn_id() -> str:
    return "turn-" + uuid.uuid4().hex[:12]


async def wait_or_cancel(task: asyncio.Task[Any], timeout: float) -> None:
    if task is asyncio.current_task():
        return
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
