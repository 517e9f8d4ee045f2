"""What the model path works with, in two narrow typed parts.

`PromptParts` is what builds and sends the prompt: the conversation, its ledger and assembler,
the model that reads the prompt, and compaction's hooks that keep it in the window. `Memory` is
what reads memory for one session: the store, and the embedder, loaded on first use and asked
for only by what needs it. The model turn (`bot.turn.model_turn`), its tool rounds
(`bot.turn.tool_rounds`) and the work done ahead of a turn (`bot.turn.speculation`) take these,
with the turn's control and the allowed tools, as arguments; none of them writes into them,
and what a turn produces comes back to the session as events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from context.recall import recall

if TYPE_CHECKING:
    from compaction.hooks import CompactionHooks
    from config import Settings
    from context.assembler import Assembler
    from context.conversation import Conversation
    from context.inputs import Evidence
    from context.ledger import Ledger
    from memory.store import Store
    from models.base import LLM, Embedder


@dataclass(frozen=True)
class PromptParts:
    """What builds a model call's prompt and sends it (see the module docstring)."""

    conv: Conversation
    ledger: Ledger
    assembler: Assembler
    llm: LLM
    hooks: CompactionHooks


@dataclass(frozen=True)
class Memory:
    """What one session reads memory through (see the module docstring)."""

    store: Store
    # Loads the embedder on first use; None where there is none.
    embedder: Callable[[], Embedder | None]
    session_id: str

    def recall(self, text: str, settings: Settings) -> list[Evidence]:
        """The notes and episodes for `text`, best first (`context.recall`; blocking: it may
        load the embedder and search, so callers run it in a thread)."""
        return recall(self.store, text, settings, self.embedder, session_id=self.session_id)
