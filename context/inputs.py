"""What a turn brings to the assembler: the request, the current state, retrieved evidence."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Request:
    """The user's message for this turn; `id` is its event id in the store."""

    text: str
    turn_id: str
    id: str
    surface: str = "main"
    # The envelope's scope where known: the task this conversation is working on, and its
    # approval still waiting for a yes.
    task_id: str | None = None
    approval_id: str | None = None


@dataclass
class StateSnapshot:
    """The rendered Work Index (mandatory current state) and the rows it came from."""

    text: str
    source_ids: list[str] = field(default_factory=list)
    observed_at: float = field(default_factory=time.time)
    id: str = ""
    # When what it shows stops holding (the earliest expiry of an approval it lists).
    expires_at: float | None = None


@dataclass
class Evidence:
    """One retrieved item (a note, an older message) with its retrieval score."""

    id: str
    text: str
    source_type: str = "memory"
    score: float = 0.0
    observed_at: float = 0.0
    query: str = ""
    # From the record: "private" notes never enter a prompt a tool can send out.
    sensitivity: str = "normal"
    expires_at: float | None = None
    # False when recall found only notes near the question, none sure to say what was asked
    # (`context.certainty`): the lane then says so, and the model must not answer from them
    # as if they did.
    certain: bool = True
    # "note", or what was said: "episode" (a turn of a conversation) or "summary" (a
    # session's); an episode's session and who spoke ("user", "annie" or a name).
    kind: str = "note"
    session_id: str = ""
    speaker: str = ""
    # Every stored row the text shows besides `id`: an episode comes with the turns around it.
    shows: tuple[str, ...] = ()
