"""What a conversation says, written once: the event log row and its conversation item together.

The event log is the full-fidelity record; the conversation is what the model sees. Every
message Annie or the user adds to a conversation goes through `Recorder.say`, so the two
never disagree about ids, turns or kinds, and `Recorder.log` appends the rows that have no
item of their own (manifests, errors, compaction reports).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from context.conversation import Conversation, Item, ItemKind
from models.base import ToolCall

# Appends one row to the store's event log: (session, kind, content, turn_id=, meta=, ...) -> id.
AppendEvent = Callable[..., str]


@dataclass
class Recorder:
    """One conversation's writer: `append` is the store's `events.append`."""

    session_id: str
    conv: Conversation
    append: AppendEvent

    def log(self, kind: str, content: Any, turn_id: str = "", **kw: Any) -> str:
        """Append one event to this conversation's log (its turn in `meta`); returns its id."""
        meta = dict(kw.pop("meta", {}) or {})
        meta.setdefault("turn", self.conv.turn)
        return self.append(self.session_id, kind, content, turn_id=turn_id, meta=meta, **kw)

    def say(
        self,
        kind: str,
        text: str,
        turn_id: str,
        *,
        reason: str,
        item_text: str | None = None,
        item_kind: ItemKind = "assistant",
        meta: dict[str, Any] | None = None,
        tool_calls: list[ToolCall] | None = None,
        interrupted: bool = False,
        path: str = "",
    ) -> Item:
        """Log Annie's words as `kind` and keep them in the conversation.

        `item_text` is what the model sees when it differs from the logged text (the raw
        output with its call markup, or only what the user heard of an interrupted answer)."""
        event_id = self.log(kind, text, turn_id, role="assistant", meta=meta or {})
        item = Item(
            event_id,
            item_kind,
            "assistant",
            text if item_text is None else item_text,
            turn=self.conv.turn,
            tool_calls=list(tool_calls or []),
            interrupted=interrupted,
        )
        item.reason = reason
        if path:
            item.meta["path"] = path
        return self.conv.append(item)
