"""What a front end may tell a conversation: the commands of its one inbound channel.

A front end (the voice connection, the terminal chat) drives a `Session` by sending these
through `Session.send` and reading what the session says from `Session.outbox`; it holds no
callback into the session and the session holds none into it. Two kinds:

- **Turns** (`UserMessage`, `SayReminders`) wait their turn: the session takes them one at a time,
  in order, and ends each one's events with `AnswerClosed`.
- **Controls** jump the queue and act at once, even in the middle of a turn: a barge-in
  (`Interrupt`), the front end's budget reached (`Enough`), a cut after the answer was
  complete (`Amend`), the answer's first sound out (`Sounding`), the user starting to speak
  (`UserActive`), and a pause the session may prepare for (`Paused`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UserMessage:
    """The user's words, spoken or typed: answer them as a turn.

    `tool_choice` names a tool the answer must call first. `voiced`: the front end says the
    answer aloud and sends `Sounding` once its first sound is out; idle-time model work waits
    for that, since it would take the cores the first sentence needs."""

    text: str
    turn_id: str
    tool_choice: str | None = None
    voiced: bool = False


@dataclass(frozen=True)
class SayReminders:
    """A gap in the conversation: say the reminders that fell due, as the turn `turn_id`."""

    turn_id: str


@dataclass(frozen=True)
class Interrupt:
    """Barge-in on the turn `turn_id`: stop generating now; `delivered` is what the user heard
    of its answer (None: everything streamed so far). A turn still waiting is cut before it
    begins."""

    turn_id: str
    delivered: str | None = None


@dataclass(frozen=True)
class Enough:
    """The front end has all it will use of the answer of `turn_id`: `kept` (the text up to
    its cut) is the answer; `reason` says why (the spoken budget, a repetition)."""

    turn_id: str
    kept: str
    reason: str = "budget"


@dataclass(frozen=True)
class Amend:
    """The user cut in after the answer of `turn_id` was complete: keep what they heard (the
    session says so with an interrupted `TurnDone` on the answer's `path`)."""

    turn_id: str
    delivered: str
    path: str


@dataclass(frozen=True)
class Sounding:
    """The answer's first sound is out, or it ended with none: idle-time work may start."""


@dataclass(frozen=True)
class UserActive:
    """The user started to speak or type: background model work stops for them."""


@dataclass(frozen=True)
class Paused:
    """The user paused after `text` and may be done: get ready to answer it, recording nothing
    (the session answers with `Prepared`)."""

    text: str


Turn = UserMessage | SayReminders
Control = Interrupt | Enough | Amend | Sounding | UserActive | Paused
Command = Turn | Control
