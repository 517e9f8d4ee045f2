"""The base of every typed event Annie emits, and the compaction event.

Each event serializes to one JSON object with a `type` field. The base lives here, in the
lowest package that emits an event (compaction reports each tier it ran), so `bot.turn.events`
builds the session's own events on it without compaction importing upward.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar


@dataclass
class Event:
    type: ClassVar[str] = "event"
    at: float = field(default_factory=time.time, kw_only=True)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}


@dataclass
class CompactionEvent(Event):
    """One compaction: its tier, the tokens before and after, and what it cost."""

    type: ClassVar[str] = "compaction"
    tier: int
    tokens_before: int
    tokens_after: int
    items_affected: int
    reprefill_tokens: int
    duration_ms: float
    detail: str = ""
