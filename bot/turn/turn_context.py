"""What a turn works with, passed explicitly, and what a session needs from around it.

`TurnContext` is one model turn's inputs: the conversation, its ledger and assembler, the
model, the store, the tools, compaction's hooks, and how the front end ends the turn early
(`TurnControl`). The session builds one per turn; the model path and its tool rounds see
nothing else of the session. `ModelHost` is what a session asks of the runtime that serves it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from bot.tools.registry import ActiveTools
    from bot.turn.record import Recorder
    from compaction.events import CompactionEvent
    from compaction.hooks import CompactionHooks
    from config import Settings
    from context.assembler import Assembler, Assembly
    from context.conversation import Conversation
    from context.inputs import Evidence
    from context.ledger import Ledger
    from models.base import LLM, CallStats, Embedder


class ModelHost(Protocol):
    """What a session asks of the runtime that serves it: a share of the model's time."""

    def yield_model(self, session: Any) -> None:
        """The session's user started to speak or type: background model work stops."""

    async def keep_head(self, stop: threading.Event | None = None) -> CallStats | None:
        """Evaluate and keep the head every session shares (None: kept already)."""

    def ended(self, session: Any) -> None:
        """The session closed: the host lets go of it."""


@dataclass
class TurnControl:
    """How a front end ends the turn in progress early.

    `cancel` is a barge-in: generation and any running tool stop, and the conversation keeps
    only what the user heard (`delivered`; None means everything streamed so far). `stop` is
    a budget the front end reached: the text up to the cut (`kept`) is the finished answer."""

    event: asyncio.Event = field(default_factory=asyncio.Event)
    delivered: str | None = None
    stopped: tuple[str, str] | None = None  # (kept text, why)

    def cancel(self, delivered: str | None = None) -> None:
        self.delivered = delivered
        self.stopped = None  # a barge-in wins over a budget stop
        self.event.set()

    def stop(self, kept: str, reason: str = "budget") -> None:
        self.stopped = (kept, reason)
        self.event.set()

    @property
    def cancelled(self) -> bool:
        return self.event.is_set()


@dataclass
class TurnContext:
    """One turn's explicit inputs (see the module docstring)."""

    session_id: str
    settings: Settings
    conv: Conversation
    ledger: Ledger
    assembler: Assembler
    tools: ActiveTools
    record: Recorder
    llm: LLM
    # A memory Store.
    store: Any
    # The embedder, loaded on first use; asked for only by what needs it.
    embedder: Callable[[], Embedder | None]
    hooks: CompactionHooks
    control: TurnControl
    # Logs a compaction this turn caused and returns it (the session keeps the list).
    compacted: Callable[[CompactionEvent, str], CompactionEvent]
    # Approval-gated tools the user allowed for this session.
    allowed: frozenset[str] = frozenset()
    # The latest model call's assembly, for `Session.manifest()` and the context view.
    assembly: Assembly | None = None
    # The notes recalled for these very words while the user paused (`bot.turn.speculation`):
    # the turn admits them instead of searching again.
    recalled: list[Evidence] | None = None

    @property
    def cancel(self) -> asyncio.Event:
        return self.control.event
