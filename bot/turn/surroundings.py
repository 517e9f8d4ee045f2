"""What a session needs from around it: the runtime that serves it, its parts, and how a turn
is ended early.

`ModelHost` is what a session asks of the runtime that serves it (a share of the model's time).
`Parts` are the conversation's own, made for it when it starts (its settings, history, token
ledger, prompt assembler, tools and compaction hooks); `Shared` is what every session of one
runtime uses alike (the store, the model, the embedder, the answer chain).
`TurnControl` is how a front end ends the turn in progress early (through the session's inbox:
`Interrupt`, `Enough`); the model turn (`bot.turn.model_turn`) takes it as an argument, beside
its inputs (`bot.turn.model_inputs`).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

    from bot.tools.registry import ActiveTools
    from bot.turn.answers import AnswerChain
    from compaction.hooks import CompactionHooks
    from config import Settings
    from context.assembler import Assembler
    from context.conversation import Conversation
    from context.ledger import Ledger
    from memory.store import Store
    from models.base import LLM, CallStats, Embedder


class ModelHost(Protocol):
    """What a session asks of the runtime that serves it: a share of the model's time."""

    def yield_model(self, session: Any) -> None:
        """The session's user started to speak or type: background model work stops."""

    async def keep_head(self, stop: threading.Event | None = None) -> CallStats | None:
        """Evaluate and keep the head every session shares (None: kept already)."""

    def ended(self, session: Any) -> None:
        """The session closed: the host lets go of it."""


@dataclass(frozen=True)
class Parts:
    """One conversation's own parts, made for it by the runtime when it starts."""

    settings: Settings
    conv: Conversation
    ledger: Ledger
    assembler: Assembler
    tools: ActiveTools
    hooks: CompactionHooks


@dataclass(frozen=True)
class Shared:
    """What every session of one runtime uses alike. `embedder` is read when needed: the
    runtime loads it after the first session may have started."""

    store: Store
    llm: LLM
    embedder: Callable[[], Embedder | None]
    chain: AnswerChain


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
