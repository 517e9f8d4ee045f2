"""Typed events that the session loop emits to every front end (voice page, chat, replay).

Each event serializes to one JSON object with a `type` field; the voice server sends them
over the data channel unchanged, the terminal chat prints them, replay collects them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from compaction.events import CompactionEvent, Event

__all__ = ["CompactionEvent", "Event"]  # with the session's own events below

# What a failed turn says instead of an answer (`TurnDone.failed`).
MODEL_FAILED = "Sorry, something went wrong on my side. Please try again."


@dataclass
class TranscriptEvent(Event):
    """The user's words: partial while speaking, final at the end of speech."""

    type: ClassVar[str] = "transcript"
    text: str
    final: bool
    # A final transcript's turn ended by: "silence" (the fixed window), "detector" (the turn
    # detector judged the speaker finished), "silence limit" or "max length".
    ended_by: str = ""


@dataclass
class TextDelta(Event):
    """A piece of the assistant's answer as it streams."""

    type: ClassVar[str] = "assistant_delta"
    turn_id: str
    text: str


@dataclass
class TurnDone(Event):
    """The assistant's answer is complete (or was interrupted)."""

    type: ClassVar[str] = "assistant_done"
    turn_id: str
    text: str
    path: str  # "state" or "model"
    interrupted: bool = False
    # The model failed: `text` is the apology to say, not an answer (the error event says why).
    failed: bool = False


@dataclass
class StateAnswer(Event):
    """An answer rendered from typed state, without the model."""

    type: ClassVar[str] = "state_answer"
    turn_id: str
    text: str
    intent: str
    sources: list[str]
    latency_ms: float
    # What the voice says instead of `text`, when set (a long approved result's start).
    spoken: str = ""


@dataclass
class ToolCallEvent(Event):
    type: ClassVar[str] = "tool_call"
    turn_id: str
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class ToolResultEvent(Event):
    type: ClassVar[str] = "tool_result"
    turn_id: str
    call_id: str
    name: str
    ok: bool
    preview: str


@dataclass
class TableEvent(Event):
    """render_table output: shown on the page, never read aloud."""

    type: ClassVar[str] = "table"
    turn_id: str
    title: str
    columns: list[str]
    rows: list[list[str]]


@dataclass
class ApprovalEvent(Event):
    """The approval this conversation's yes would answer, for the page's Approve and Deny
    buttons; an empty `id` means none is waiting (the page hides them)."""

    type: ClassVar[str] = "approval"
    id: str
    tool: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    text: str = ""  # the action in words, with its exact parameters
    expires_at: str = ""


@dataclass
class ContextMeter(Event):
    """Used tokens by component and lane against the window, with the tier marks."""

    type: ClassVar[str] = "context"
    window: int
    used: int
    by_component: dict[str, int]
    by_lane: dict[str, int]
    tier1: float
    tier2: float


@dataclass
class LatencyEvent(Event):
    """Per-turn latency breakdown in milliseconds; absent stages are omitted."""

    type: ClassVar[str] = "latency"
    turn_id: str
    stages: dict[str, float]
    # The answer was prepared while the user paused: "hit" (used), "miss" (dropped), "".
    prepared: str = ""
    # The server's monotonic clock (s) at the end of speech and at the first frame sent: a
    # client on the same machine splits the transport into its two hops with them.
    speech_end_at: float = 0.0
    first_frame_at: float = 0.0


@dataclass
class ErrorEvent(Event):
    type: ClassVar[str] = "error"
    message: str
    where: str = ""


@dataclass
class VoiceActivity(Event):
    """What the voice loop is doing: idle, listening, thinking, speaking or interrupted."""

    type: ClassVar[str] = "voice_state"
    state: str
    turn_id: str = ""


@dataclass
class ReminderEvent(Event):
    """Annie says reminders that fell due (at a gap in the conversation, or as the first thing
    a session says when they fell due while no one was there: `away`)."""

    type: ClassVar[str] = "reminder"
    turn_id: str
    text: str
    away: bool
    reminders: list[dict[str, Any]] = field(default_factory=list)  # id, text, due, kind
    # Said on the device the user last spoke from; shown here without being said.
    elsewhere: bool = False


@dataclass
class Notice(Event):
    """For the front end itself, never shown on a page: what the session tells the front end
    that drives it (`bot.turn.inbox`)."""

    type: ClassVar[str] = "notice"


@dataclass
class RemindersDue(Notice):
    """Reminders fell due: say them at the next gap (`SayReminders`)."""

    type: ClassVar[str] = "reminders_due"


@dataclass
class Prepared(Notice):
    """Ready for a turn of `text` (`Paused`): the state path's spoken answer, "" if none."""

    type: ClassVar[str] = "prepared"
    text: str
    spoken: str


@dataclass
class AnswerClosed(Notice):
    """The last event of the turn `turn_id` (a `Heard` or a `SayReminders`)."""

    type: ClassVar[str] = "answer_closed"
    turn_id: str
