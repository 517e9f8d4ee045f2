"""The pieces the voice loop is made of: what it needs from a session, what it records.

`TurnSession` is the part of the conversation session the voice loop drives; `ActiveTurn`
is the turn being answered and spoken; `VoiceStats` keeps every turn's clock and every
barge-in for tests and the benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.turn.events import Event, TurnDone
from bot.voice.audio_out import Utterance
from bot.voice.timing import TurnClock


class TurnSession(Protocol):
    """What the voice loop needs from the conversation session."""

    def handle_text(
        self, text: str, *, turn_id: str, tool_choice: str | None = None
    ) -> AsyncIterator[Event]: ...

    def yield_model(self) -> None:
        """The user started speaking: background model work stops for them."""

    async def prepare(self, text: str) -> str | None:
        """The user paused after `text`: get ready to answer it, recording nothing; the
        state path's spoken answer, or None (`bot.turn.speculation`)."""

    def tool_names(self) -> list[str]:
        """The tools a turn may require by name."""

    def meter(self) -> Event:
        """The context meter as it stands (shown before the first turn)."""

    def cancel(self, delivered_text: str | None = None) -> None:
        """Barge-in while the answer is being generated: stop, keep what was heard."""

    def stop(self, kept_text: str, reason: str = "budget") -> None:
        """The answer reached its budget (or repeats itself): stop generating, keep the text
        up to the cut as the finished answer."""

    def amend_interrupted(self, turn_id: str, delivered_text: str) -> bool:
        """Barge-in after the answer was complete: keep what was heard of it."""

    async def close(self) -> Any: ...

    def attach(self, front_end: Any) -> None:
        """Subscribe a front end: `reminders_due()` when reminders fell due (`announce` says
        them), and idle-time model work waits for its `answer_begun()`."""

    async def announce(self, turn_id: str = "") -> list[Event]: ...


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
class ActiveTurn:
    clock: TurnClock
    utterance: Utterance
    task: asyncio.Task[None] | None = None
    interrupted: bool = False
    delivered: str = ""
    done: TurnDone | None = None  # the session's TurnDone, once it came


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


async def cancel_after(task: asyncio.Task[Any], delay: float) -> None:
    await wait_or_cancel(task, delay)
