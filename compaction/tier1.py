"""Tier 1: clear old tool results in one batch at one cut point, with no model call.

Every uncleared tool result before the cut is replaced by a placeholder that names its id and
how to get it back (`context.conversation.cleared_placeholder`, e.g. `[tool result ev-12 (1,900
tokens) cleared; get_context(ids=["ev-12"])]`); the tool-call JSON
stays, and so do the newest results. The cut is placed just far enough to bring usage down to
the target, oldest results first, so everything before the first cleared result stays cached.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ItemView:
    """What the planners need to know about one conversation item, in prompt order."""

    id: str
    kind: str
    tokens: int
    cleared: bool = False
    turn: int = 0


@dataclass
class Tier1Plan:
    """Which results to clear, where the edit starts, and what usage it leads to."""

    clear_ids: list[str] = field(default_factory=list)
    first_index: int = -1
    tokens_freed: int = 0
    used_after: int = 0

    @property
    def empty(self) -> bool:
        return not self.clear_ids


def plan_tier1(
    items: Sequence[ItemView],
    *,
    used: int,
    window: int,
    target: float,
    keep_recent: int,
    placeholder_tokens: Callable[[str], int],
) -> Tier1Plan:
    """Pick the oldest uncleared tool results to clear until usage is at or below the target.

    `placeholder_tokens(id)` is the exact cost of the placeholder (with its message overhead
    unchanged, so the saving is content tokens minus placeholder tokens).
    """
    results = [i for i, item in enumerate(items) if item.kind == "tool_result"]
    protected = set(results[-keep_recent:]) if keep_recent > 0 else set()
    goal = int(target * window)
    plan = Tier1Plan(used_after=used)
    for index in results:
        if plan.used_after <= goal:
            break
        item = items[index]
        if index in protected or item.cleared:
            continue
        saving = item.tokens - placeholder_tokens(item.id)
        if saving <= 0:
            continue
        if plan.first_index < 0:
            plan.first_index = index
        plan.clear_ids.append(item.id)
        plan.tokens_freed += saving
        plan.used_after -= saving
    return plan
