"""Overflow: trim in a fixed order until the prompt plus the output reserve fits.

First each lane over its budget gives up its own excess (`context.holding`, the `hold` given),
so a lane within its budget loses nothing to another's growth. Then, across lanes, reloadable
tool output goes first (older turns before the current one), then duplicate
evidence and superseded state snapshots, then whole old turns behind a single marker. The
request, the policy, pinned items (approvals, corrections, checkpoints) and the current state
are never dropped; if they alone do not fit, that is a clear error, not a silent overflow.
"""

from __future__ import annotations

from collections.abc import Callable

from context.conversation import Conversation, Item, cleared_placeholder
from context.envelope import RecoverCall
from context.ledger import Ledger
from context.usage import Usage


class ContextOverflowError(RuntimeError):
    """The protected minimum (policy, request, current state, pinned items) exceeds the window."""


def fit(
    conv: Conversation, ledger: Ledger, hold: Callable[[], list[Item]] | None = None
) -> tuple[Usage, list[str]]:
    """Trim in the order above until prompt + output reserve fits; returns the trimmed ids."""
    usage = ledger.usage(conv)
    if usage.fits:
        return usage, []
    trimmed: list[str] = [i.id for i in hold()] if hold is not None else []
    usage = ledger.usage(conv)
    if usage.fits:
        return usage, trimmed
    over = usage.total - usage.limit

    def clear(candidates: list[Item], why: str) -> None:
        nonlocal over
        for item in candidates:
            if over <= 0:
                return
            before = ledger.item_tokens(item)
            conv.clear([item], cleared_placeholder(item.id, what=f"{item.kind} (left out: {why})"))
            over -= before - ledger.item_tokens(item)
            trimmed.append(item.id)

    current = conv.turn
    results = [i for i in conv.items if i.kind == "tool_result" and not i.cleared and not i.pinned]
    clear([i for i in results if i.turn < current], "reloadable tool output")
    latest_state = conv.last("state")
    dup = [
        i
        for i in conv.items
        if not i.cleared
        and not i.pinned
        and (i.kind == "evidence" or (i.kind == "state" and i is not latest_state))
        and i.turn < current
    ]
    clear(dup, "duplicate or superseded context")
    # Counted afresh: a placeholder can cost more than the short result it replaced.
    over = ledger.usage(conv).total - usage.limit
    if over > 0:
        over -= _drop_oldest(conv, ledger, over, current, trimmed)
    clear([i for i in results if i.turn == current], "reloadable tool output")
    usage = ledger.usage(conv)
    if not usage.fits:
        raise ContextOverflowError(
            f"the protected context ({usage.total:,} tokens: policy, request, current state "
            f"and pinned items) does not fit a {usage.window:,}-token window with "
            f"{usage.output_reserve_tokens:,} reserved for the answer; raise context.window "
            "or shorten config/system_prompt.md"
        )
    return usage, trimmed


def _drop_oldest(
    conv: Conversation, ledger: Ledger, over: int, current: int, trimmed: list[str]
) -> int:
    """Remove whole old turns (pinned items stay) behind one marker; returns tokens freed.

    An earlier overflow marker inside the range is folded into the new one, so markers
    never pile up.
    """

    def removable(item: Item) -> bool:
        marker = bool(item.meta.get("omission_marker"))
        return not item.pinned and (item.kind != "summary" or marker)

    start = next((k for k, i in enumerate(conv.items) if i.turn < current and removable(i)), None)
    if start is None:
        return 0
    freed = 0
    end = start
    keep: list[Item] = []
    removed: list[Item] = []
    # The marker that stands for the removed turns costs tokens too: free that much more.
    margin = ledger.item_tokens(_marker(current, current))
    while end < len(conv.items) and freed - margin < over:
        item = conv.items[end]
        if item.turn >= current:
            break
        if removable(item):
            removed.append(item)
            freed += ledger.item_tokens(item)
        else:
            keep.append(item)
        end += 1
    # Finish the last turn so no tool call is left without its result.
    while end < len(conv.items) and removed and conv.items[end].turn == removed[-1].turn:
        item = conv.items[end]
        (removed if removable(item) else keep).append(item)
        freed += ledger.item_tokens(item) if removable(item) else 0
        end += 1
    if not removed:
        return 0
    first = min(int(i.meta.get("first", i.turn)) for i in removed)
    last = max(int(i.meta.get("last", i.turn)) for i in removed)
    marker = _marker(first, last)
    gone = [i for i in removed if not i.meta.get("omission_marker")]
    conv.replace(
        start,
        end,
        [marker, *keep],
        f"turns {first}-{last} left out to fit the window",
        source_ids=[i.id for i in gone],
        recover_with=RecoverCall(
            name="get_context", arguments={"type": "turns", "ids": [str(first), str(last)]}
        ),
    )
    trimmed.extend(i.id for i in gone)
    return freed - ledger.item_tokens(marker)


def _marker(first: int, last: int) -> Item:
    """The one item that stands for turns `first`..`last` left out, with how to get them."""
    marker = Item(
        f"omitted-t{first}-t{last}",
        "summary",
        "user",
        f"[Turns {first}-{last} of this conversation were left out to fit the context window; "
        f'get_context(type="turns", ids=["{first}", "{last}"]) retrieves them]',
        turn=first,
        reason="marker for turns left out on overflow",
    )
    marker.meta.update(omission_marker=True, first=first, last=last)
    return marker
