"""The seam between the conversation loop and compaction, with a do-nothing default.

The session loop calls these hooks at fixed points; `compaction.create_hooks` implements
them (three tiers), and `NoCompaction` is what runs when compaction is switched off. A
hook edits the conversation only through `Conversation.clear` / `Conversation.replace`, which
record the cut point, and returns a `CompactionEvent` for every compaction it did; the caller
logs each event, shows it on every front end and counts it in replay's summary.
Call order, per user turn:
1. `on_user_activity()` as soon as a user turn starts (or the user starts speaking): idle work
   that needs the model must stop so the turn gets it.
2. `before_call(conv, ledger, needed_tokens)` before every model call of the turn, with the
   prompt tokens plus the reserved output. Compact synchronously only if the call would not
   fit otherwise; the assembler's overflow trim is the last resort after this.
3. `after_turn(conv, ledger)` once the turn's answer is complete: tier 1 runs right here (no
   model call); tier 2 is only queued.
4. `on_idle(conv, ledger)` when no turn is in flight: queued tier-2 work and the idle-time
   re-prefill. The loop runs it as a background task and cancels it via `on_user_activity`;
   replay awaits it between turns.
5. `on_disconnect(conv, ledger)` once, when the connection closes or on clean shutdown:
   tier 3 (persist checkpoint, summary and recent tail for the next session's briefing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from compaction.events import CompactionEvent
from context.conversation import Conversation
from context.ledger import Ledger

if TYPE_CHECKING:
    from config import Settings
    from models.base import LLM


@dataclass
class HookInputs:
    """What a compaction implementation may use for one session."""

    settings: Settings
    session_id: str
    ledger: Ledger
    # memory.store.Store, or None for a pure accounting run (bench).
    store: Any = None
    # The shared model for tier-2 summaries and idle re-prefill; None where there is none.
    llm: LLM | None = None
    # Tool name -> the protected kind its calls record (`compaction.protected.ProtectedKind`),
    # from the tool registry's metadata.
    protects: Mapping[str, str] = field(default_factory=dict)


class CompactionHooks(Protocol):
    """Implemented by `compaction`; one instance per session (it may queue work)."""

    async def before_call(
        self, conv: Conversation, ledger: Ledger, needed_tokens: int
    ) -> list[CompactionEvent]:
        """Right before a model call that needs `needed_tokens` (prompt + reserved output).

        Only compact here if `needed_tokens` exceeds the window: this is the one place a user
        waits for compaction.
        """
        ...

    async def after_turn(self, conv: Conversation, ledger: Ledger) -> list[CompactionEvent]:
        """After a turn's answer: run tier 1 now if due (no model call); queue tier 2."""
        ...

    async def on_idle(self, conv: Conversation, ledger: Ledger) -> list[CompactionEvent]:
        """No turn in flight: run queued tier-2 work and the idle re-prefill.

        Must tolerate `asyncio.CancelledError` at any await (a user turn needs the model)
        and leave the conversation unchanged unless the work completed.
        """
        ...

    def on_user_activity(self) -> None:
        """A user turn needs the model: cancel in-flight idle work (retry it later)."""
        ...

    async def on_disconnect(self, conv: Conversation, ledger: Ledger) -> list[CompactionEvent]:
        """The session ends: tier 3 (persist for the next session's loader)."""
        ...


class NoCompaction:
    """The default: never compacts. The assembler's overflow trim still bounds the prompt."""

    async def before_call(
        self, conv: Conversation, ledger: Ledger, needed_tokens: int
    ) -> list[CompactionEvent]:
        return []

    async def after_turn(self, conv: Conversation, ledger: Ledger) -> list[CompactionEvent]:
        return []

    async def on_idle(self, conv: Conversation, ledger: Ledger) -> list[CompactionEvent]:
        return []

    def on_user_activity(self) -> None:
        return None

    async def on_disconnect(self, conv: Conversation, ledger: Ledger) -> list[CompactionEvent]:
        return []


HooksFactory = Callable[[HookInputs], CompactionHooks]


def no_compaction(ctx: HookInputs) -> CompactionHooks:
    return NoCompaction()
