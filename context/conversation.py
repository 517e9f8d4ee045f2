"""The model-visible conversation as typed data: a fixed prefix and an ordered list of items.

The prompt is kept strictly append-only, because llama.cpp (and the recurrent layers of the
GPU model) reuse evaluated tokens only when a new prompt exactly extends the previous one:
- The prefix (system prompt, schemas of the tool groups loaded at session start, memory
  briefing, notes) is rendered once per session and never changes between turns.
- Per-turn volatile context (a Work Index snapshot, retrieved evidence) is its own item,
  appended right before that turn's user message, and then stays exactly as rendered.
- Assistant items keep the text exactly as generated, tool-call markup included.
- A tool group loaded mid-session arrives as a pinned item of the tools lane (its schemas as
  text) appended after the load call's result, not as an edit to the prefix; compaction keeps
  it, so the group stays usable after older tool results are cleared or summarized.
Compaction is the one deliberate exception: `clear()` and `replace()` edit the items at one cut
point and record it in `dirty_from`, so whoever pays for the re-prefill knows where it starts.
Every item's `id` is its event id in the store, so anything removed from view stays retrievable
with `get_context`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from context.envelope import Omission, RecoverCall
from context.lanes import Lane
from models.base import ToolCall

ItemKind = Literal[
    "user", "assistant", "tool_call", "tool_result", "summary", "state", "evidence", "note", "tools"
]
"""`tool_call` is an assistant message that made tool calls; `summary` is a checkpoint or an
omission marker standing in for older turns; `state` and `evidence` are per-turn context;
`tools` holds the schemas of a tool group loaded mid-session (the tools lane)."""

INTERRUPTED_MARK = " [interrupted: the user spoke over this]"

# Special-token spellings in outside text (web pages, user paste) would be parsed as real
# control tokens by the tokenizer; a word joiner keeps them as plain text.
_SPECIAL = re.compile(r"<\|([A-Za-z0-9_]+)\|>")
# Qwen's tool and thinking tags are tokens of their own in its vocabulary: a page holding
# "</tool_response>" would otherwise close the block its text was put in.
_TAGS = re.compile(r"<(/?)(tool_call|tool_response|think|function|parameter)\b")


def neutralize(text: str) -> str:
    """Outside text made safe to render: `<|im_start|>` and Qwen's tags become plain
    characters (a word joiner after `<`), so they tokenize as text, never as markers."""
    if "<" not in text:
        return text
    text = _SPECIAL.sub("<\u2060|\\1|\u2060>", text)
    return _TAGS.sub("<\u2060\\1\\2", text)


def cleared_placeholder(item_id: str, tokens: int = 0, *, what: str = "tool result") -> str:
    """What the model sees of an item taken out of its context: the id and the call that brings
    it back. Short on purpose: a long session carries a hundred of these."""
    size = f" ({tokens} tokens)" if tokens else ""
    return f'[{what} {item_id}{size} cleared; get_context(ids=["{item_id}"])]'


@dataclass(eq=False)
class Item:
    """One model-visible message. Identity matters (`eq=False`): two equal texts are two items.

    `content` is the full text as admitted (a preview for oversized results; the whole text is
    in the event log under `id`). What the model sees is `visible`: the placeholder when
    `cleared`, the delivered text plus a mark when `interrupted`.
    """

    id: str
    kind: ItemKind
    role: str
    content: str
    turn: int = 0
    lane: Lane = "history"
    tool_calls: list[ToolCall] = field(default_factory=list)
    # False when `content` lacks the call markup (a replayed trace): the template renders the
    # typed calls instead. Live turns keep the generated text, markup included.
    calls_in_content: bool = True
    call_id: str = ""
    name: str = ""
    interrupted: bool = False
    cleared: bool = False
    placeholder: str = ""
    # Protected from trimming: approvals, corrections, checkpoints.
    pinned: bool = False
    # Stable references this item stands for (state rows, evidence ids, summarized event ids).
    source_ids: list[str] = field(default_factory=list)
    reason: str = ""
    # Tokens of the whole result before it was previewed (0: admitted whole).
    original_tokens: int = 0
    created_at: float = field(default_factory=time.time)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def visible(self) -> str:
        if self.cleared:
            return self.placeholder or cleared_placeholder(self.id)
        if self.interrupted:
            return self.content + INTERRUPTED_MARK
        return self.content

    def message(self) -> dict[str, Any]:
        """The chat message for the renderer (OpenAI-shaped; the template does the rest)."""
        msg: dict[str, Any] = {"role": self.role, "content": self.visible}
        if self.role == "tool":
            msg["tool_call_id"] = self.call_id
            msg["name"] = self.name
        elif self.tool_calls and not self.calls_in_content and not self.cleared:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return msg

    def render_key(self) -> tuple[Any, ...]:
        """Everything that changes this item's rendered text (the ledger's cache key)."""
        calls: tuple[tuple[str, str, str], ...] = ()
        if self.tool_calls and not self.calls_in_content and not self.cleared:
            calls = tuple(
                (c.id, c.name, repr(sorted(c.arguments.items()))) for c in self.tool_calls
            )
        return (self.role, self.visible, self.call_id, self.name, calls)


@dataclass
class Prefix:
    """The fixed head of every prompt: one system message plus the loaded tool schemas."""

    system_prompt: str
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_groups: list[str] = field(default_factory=list)
    briefing: str = ""
    notes: str = ""
    # Records the briefing and notes were built from: per-turn recall skips them.
    source_ids: tuple[str, ...] = ()

    def system_content(self, *, briefing: bool = True, notes: bool = True) -> str:
        parts = [self.system_prompt.strip()]
        if briefing and self.briefing.strip():
            parts.append("## What you remember from earlier sessions\n" + self.briefing.strip())
        if notes and self.notes.strip():
            parts.append("## Your notes\n" + self.notes.strip())
        return "\n\n".join(parts)

    def message(self) -> dict[str, Any]:
        return {"role": "system", "content": self.system_content()}


@dataclass
class Conversation:
    """The prefix and the ordered items the model sees; the event log keeps everything else."""

    session_id: str
    prefix: Prefix
    items: list[Item] = field(default_factory=list)
    turn: int = 0
    # Index of the earliest item edited since the last model call (None: pure appends).
    dirty_from: int | None = None
    # Bumped by every rewrite, so caches keyed on positions know to recompute.
    generation: int = 0
    omitted: list[Omission] = field(default_factory=list)

    # --- reading ------------------------------------------------------------------------

    def messages(self) -> list[dict[str, Any]]:
        """System message first, then every item in order (the renderer's input)."""
        return [self.prefix.message(), *(item.message() for item in self.items)]

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def index_of(self, item_id: str) -> int:
        for i, item in enumerate(self.items):
            if item.id == item_id:
                return i
        raise KeyError(item_id)

    def get(self, item_id: str) -> Item | None:
        for item in self.items:
            if item.id == item_id:
                return item
        return None

    def turn_items(self, turn: int) -> list[Item]:
        return [item for item in self.items if item.turn == turn]

    def tool_results(self, *, include_cleared: bool = False) -> list[Item]:
        return [
            item
            for item in self.items
            if item.kind == "tool_result" and (include_cleared or not item.cleared)
        ]

    def last(self, kind: str) -> Item | None:
        for item in reversed(self.items):
            if item.kind == kind:
                return item
        return None

    # --- appending (the normal path) ----------------------------------------------------

    def new_turn(self) -> int:
        self.turn += 1
        return self.turn

    def append(self, item: Item) -> Item:
        self.items.append(item)
        return item

    # --- rewriting (compaction and overflow trimming only) -----------------------------

    def _touch(self, index: int) -> None:
        self.dirty_from = index if self.dirty_from is None else min(self.dirty_from, index)
        self.generation += 1

    def edited(self, item: Item) -> None:
        """Record an in-place edit of `item` (e.g. an answer cut to what was heard)."""
        self._touch(self.items.index(item))

    def clear(self, items: Sequence[Item], placeholder: str | None = None) -> int:
        """Replace items' text with a placeholder (tier 1); returns how many changed."""
        changed = 0
        for item in items:
            if item.cleared:
                continue
            item.cleared = True
            item.placeholder = placeholder or cleared_placeholder(item.id, item.original_tokens)
            self._touch(self.items.index(item))
            self.omitted.append(
                Omission(
                    lane=item.lane,
                    reason=f"{item.kind} {item.id} cleared to save space",
                    source_ids=[item.id],
                    recover_with=RecoverCall(name="get_context", arguments={"ids": [item.id]}),
                )
            )
            changed += 1
        return changed

    def replace(
        self,
        start: int,
        end: int,
        replacement: Sequence[Item],
        reason: str,
        *,
        source_ids: Sequence[str] | None = None,
        recover_with: RecoverCall | None = None,
    ) -> list[Item]:
        """Replace items[start:end] (tier 2's oldest turns) with `replacement`; returns removed.

        The removed items stay in the event log; an omission names them (`source_ids`,
        default: every removed item) and how to get them back (`recover_with`, default:
        get_context by id).
        """
        removed = self.items[start:end]
        self.items[start:end] = list(replacement)
        self._touch(start)
        ids = list(source_ids) if source_ids is not None else [i.id for i in removed]
        if ids:
            how = recover_with or RecoverCall(name="get_context", arguments={"ids": ids[:20]})
            self.omitted.append(
                Omission(lane="history", reason=reason, source_ids=ids, recover_with=how)
            )
        return removed

    def withdraw_turn(self, turn: int, reason: str) -> list[Item]:
        """Take a failed turn's items out of view; returns them (the event log keeps them).

        A message the chat template refuses would otherwise fail every later render too.
        """
        start = next((i for i, item in enumerate(self.items) if item.turn == turn), None)
        if start is None:
            return []
        return self.replace(start, len(self.items), [], reason)

    def mark_sent(self) -> None:
        """The current items were sent to the model: later edits start a new cut point."""
        self.dirty_from = None
