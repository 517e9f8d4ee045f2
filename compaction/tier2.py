"""Tier 2: move the oldest turns behind one structured checkpoint, keeping a verbatim tail.

Planning and applying are separate and synchronous: the plan names the items to summarize,
the model call happens in between (in idle time, cancellable), and applying checks that the
conversation still has those items where the plan found them before it edits anything, so a
cancelled or outdated run leaves the conversation exactly as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from compaction.attempts import iso_time
from compaction.checkpoint import Checkpoint, render
from compaction.protected import LogEntry
from context.conversation import Conversation, Item
from context.ledger import Ledger

SUMMARY_TITLE = "Checkpoint of earlier conversation"


@dataclass
class Tier2Plan:
    """Items [0, cut) leave the context; pinned ones among them are kept after the summary.

    `ids` lists the turns' items in the cut (earlier checkpoints inside it are not counted).
    """

    cut: int
    ids: list[str] = field(default_factory=list)
    tokens: int = 0
    generation: int = 0

    @property
    def empty(self) -> bool:
        return not self.ids


EVENT_KINDS = ("user", "assistant", "tool_call", "tool_result")


def event_ids(items: Sequence[Item]) -> list[str]:
    """Ids of the items that are events in the log (state and evidence items are not)."""
    return [item.id for item in items if item.kind in EVENT_KINDS]


def entries_from_items(items: Sequence[Item]) -> list[LogEntry]:
    """Conversation items as log entries (full content, even where the view is cleared)."""
    out: list[LogEntry] = []
    for item in items:
        if item.kind in ("state", "evidence", "note", "tools"):
            continue
        at = iso_time(item.created_at)
        if item.kind == "tool_call" or item.tool_calls:
            if item.content.strip() and not item.calls_in_content:
                out.append(LogEntry(item.id, "assistant", item.content, at=at))
            for call in item.tool_calls:
                args = dict(call.arguments)
                out.append(LogEntry(item.id, "tool_call", "", call.name, args, call.id, at=at))
            continue
        ok = bool(item.meta.get("ok", True))
        out.append(LogEntry(item.id, item.kind, item.content, item.name, {}, item.call_id, ok, at))
    return out


def plan_tier2(conv: Conversation, ledger: Ledger, *, tail_budget: int) -> Tier2Plan:
    """Keep the newest whole turns that fit `tail_budget` (always the last turn); cut the rest.

    The cut falls on a turn boundary, so a tool call is never separated from its result.
    """
    items = conv.items
    # Runs of consecutive items of one turn, by position (a kept state snapshot may carry an
    # older turn number than its neighbours).
    runs: list[tuple[int, int]] = []
    for i, item in enumerate(items):
        if item.kind == "summary":
            continue
        if runs and items[runs[-1][1] - 1].turn == item.turn and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    if not runs:
        return Tier2Plan(cut=0, generation=conv.generation)
    tail_tokens = 0
    cut = runs[-1][0]
    for k, (start, end) in enumerate(reversed(runs)):
        cost = sum(ledger.item_tokens(i) for i in items[start:end])
        if k > 0 and tail_tokens + cost > tail_budget:
            break
        tail_tokens += cost
        cut = start
    head = items[:cut]
    if len(kept_items(conv, cut)) == sum(1 for i in head if i.kind != "summary"):
        return Tier2Plan(cut=0, generation=conv.generation)  # nothing would leave the context
    return Tier2Plan(
        cut=cut,
        ids=[item.id for item in head if item.kind != "summary"],
        tokens=sum(ledger.item_tokens(i) for i in head),
        generation=conv.generation,
    )


def still_valid(conv: Conversation, plan: Tier2Plan) -> bool:
    """True when items [0, cut) are still the planned ones (appends after them are fine)."""
    if plan.cut > len(conv.items):
        return False
    head = conv.items[: plan.cut]
    return [item.id for item in head if item.kind != "summary"] == plan.ids


def summary_item(item_id: str, cp: Checkpoint, covered: Sequence[Item]) -> Item:
    """The pinned item that stands for the summarized turns in the context."""
    return Item(
        id=item_id,
        kind="summary",
        role="user",
        content=render(cp, title=SUMMARY_TITLE),
        turn=0,
        lane="history",
        pinned=True,
        source_ids=[i.id for i in covered],
        reason="tier-2 checkpoint of older turns",
        meta={"checkpoint": True},
    )


def apply_tier2(conv: Conversation, plan: Tier2Plan, new_items: Sequence[Item]) -> list[Item]:
    """Replace the planned head with the summary (and kept pinned items); returns removed."""
    kept = kept_items(conv, plan.cut)
    return conv.replace(0, plan.cut, [*new_items, *kept], "tier-2: summarized into a checkpoint")


def kept_items(conv: Conversation, cut: int) -> list[Item]:
    """The items before `cut` that stay after a summary of them (earlier summaries excepted).

    The current state is mandatory: the assembler re-admits it only when it changes, so the
    latest snapshot stays even when its turn is summarized. Pinned items stay too.
    """
    latest_state = conv.last("state")
    head = conv.items[:cut]
    return [i for i in head if (i.pinned and i.kind != "summary") or i is latest_state]
