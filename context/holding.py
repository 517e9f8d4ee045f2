"""Holding each lane to its budget: trims within one lane, never across lanes.

Once the prompt passes `context.hold_lanes_above` tokens, a lane over its budget
(`context.lanes`) is trimmed within itself, oldest first, down to half its budget, so the next
trim is some turns away (each trim edits the prompt at one cut point, and the model
re-evaluates from there):
- history: reloadable tool output, the results of earlier turns but the newest `keep_recent`;
  the raw talk itself is folded behind the checkpoint in idle time by compaction, not here;
- evidence: the oldest evidence retrieved for earlier turns;
- state: superseded state snapshots (the current one is mandatory).
The tools lane holds by unloading whole groups (`unload_tools`): which ones is the caller's
choice, since only it knows when each group was last used. Every trim is an omission naming its
lane, why, and the call that brings the item back; the item keeps the reason for the manifest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from context.conversation import Conversation, Item, cleared_placeholder
from context.envelope import Omission, RecoverCall
from context.lanes import LANE_BUDGET, Lane
from context.ledger import Ledger

if TYPE_CHECKING:
    from config.settings import ContextSettings

# A lane over its budget is trimmed down to this fraction of it.
HOLD_TO = 0.5


def raw_tokens(conv: Conversation, ledger: Ledger, lane: Lane) -> int:
    """Tokens of a lane's own items: checkpoints and pinned items (corrections, approvals,
    loaded schemas) are not the raw lane, since no trim of that lane may remove them."""
    return sum(
        ledger.item_tokens(i)
        for i in conv.items
        if i.lane == lane and not i.pinned and i.kind != "summary"
    )


def foldable_tokens(conv: Conversation, ledger: Ledger, keep_recent: int) -> int:
    """The raw history that only a fold reduces: the raw lane less the tool output the next
    admission's hold may clear (every result but the newest `keep_recent`)."""
    results = [i for i in conv.items if i.kind == "tool_result" and not i.cleared]
    reloadable = results[:-keep_recent] if keep_recent > 0 else results
    spare = sum(ledger.item_tokens(i) for i in reloadable if not i.pinned)
    return raw_tokens(conv, ledger, "history") - spare


def holding(conv: Conversation, ledger: Ledger, ctx: ContextSettings) -> bool:
    """Whether the prompt is past `context.hold_lanes_above`, where lanes are held."""
    return ledger.usage(conv).total >= ctx.hold_lanes_above


def hold_lanes(
    conv: Conversation,
    ledger: Ledger,
    ctx: ContextSettings,
    *,
    keep_recent: int,
    always: bool = False,
) -> list[Item]:
    """Trim every lane over its budget within itself (see the module docstring); returns the
    items left out. Nothing is trimmed below `context.hold_lanes_above` unless `always` (a
    prompt that would not fit: each lane gives up its own excess before any global trim)."""
    if not always and not holding(conv, ledger, ctx):
        return []
    out: list[Item] = []
    for lane, (pick, what) in _RULES.items():
        budget = ctx.budget(LANE_BUDGET[lane])
        used = raw_tokens(conv, ledger, lane)
        if used <= budget:
            continue
        goal = int(budget * HOLD_TO)
        why = f"held the {lane} lane to its {budget:,}-token budget: {what}"
        for item in pick(conv, keep_recent):
            if used <= goal:
                break
            before = ledger.item_tokens(item)
            _leave_out(conv, item, why)
            used -= before - ledger.item_tokens(item)
            out.append(item)
    return out


def _old_results(conv: Conversation, keep_recent: int) -> list[Item]:
    results = [i for i in conv.items if i.kind == "tool_result"]
    recent = {id(i) for i in results[-keep_recent:]} if keep_recent > 0 else set()
    return [
        i
        for i in results
        if not i.cleared and not i.pinned and i.turn < conv.turn and id(i) not in recent
    ]


def _old_evidence(conv: Conversation, _keep: int) -> list[Item]:
    return [
        i
        for i in conv.items
        if i.kind == "evidence" and not i.cleared and not i.pinned and i.turn < conv.turn
    ]


def _superseded_states(conv: Conversation, _keep: int) -> list[Item]:
    latest = conv.last("state")
    return [
        i
        for i in conv.items
        if i.kind == "state" and i is not latest and not i.cleared and not i.pinned
    ]


_RULES: dict[Lane, tuple[Callable[[Conversation, int], list[Item]], str]] = {
    "history": (_old_results, "reloadable tool output, oldest first"),
    "evidence": (_old_evidence, "oldest evidence first"),
    "state": (_superseded_states, "superseded state snapshots"),
}


def _leave_out(conv: Conversation, item: Item, why: str) -> None:
    """Clear `item` behind a placeholder and record the omission with `why`."""
    if item.kind == "tool_result":
        text = cleared_placeholder(item.id, item.original_tokens)
        how = RecoverCall(name="get_context", arguments={"ids": [item.id]})
    elif item.kind == "state":
        text = f"[earlier state snapshot (turn {item.turn}) left out: the current state follows]"
        how = RecoverCall(name="get_context", arguments={"type": "tasks"})
    else:
        ids = item.source_ids or [item.id]
        text = cleared_placeholder(ids[0], what=item.kind.replace("_", " "))
        how = RecoverCall(name="get_context", arguments={"ids": ids[:1]})
    _clear(conv, item, text, f"{item.kind} {item.id} left out: {why}", how)


def _clear(conv: Conversation, item: Item, text: str, reason: str, how: RecoverCall) -> None:
    start = len(conv.omitted)
    conv.clear([item], text)
    # The conversation records a generic omission; this one says which lane and why.
    del conv.omitted[start:]
    conv.omitted.append(
        Omission(lane=item.lane, reason=reason, source_ids=[item.id], recover_with=how)
    )
    item.meta["left_out"] = reason


# --- the tools lane ---------------------------------------------------------------------


def tools_tokens(conv: Conversation, ledger: Ledger) -> int:
    """The tools lane: the head's schemas and every group loaded mid-session still shown."""
    lane = sum(ledger.item_tokens(i) for i in conv.items if i.kind == "tools" and not i.cleared)
    return ledger.prefix_cost(conv.prefix).tool_schemas + lane


def unload_tools(conv: Conversation, group: str, why: str) -> bool:
    """Take a mid-session group's schemas out of view (unpinned, so a later fold removes the
    placeholder too); load_tool_group brings them back. False when none were shown."""
    shown = [
        i
        for i in conv.items
        if i.kind == "tools" and not i.cleared and i.meta.get("group", i.id[6:]) == group
    ]
    for item in shown:
        item.pinned = False
        text = (
            f"[schemas of the {group} tools unloaded ({why}); "
            f'load_tool_group(group="{group}") loads them again]'
        )
        how = RecoverCall(name="load_tool_group", arguments={"group": group})
        _clear(conv, item, text, f"tool group '{group}' unloaded: {why}", how)
    return bool(shown)
