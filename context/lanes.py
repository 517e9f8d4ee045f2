"""The context lanes: the one list of them, and the budget each is held to.

Every model-visible token belongs to one lane: the policy (system prompt), the request, the
current state (Work Index snapshots), the recent history, retrieved evidence, tool schemas
and the briefing from earlier sessions. Items, the ledger's usage, the envelope's budget and
the manifest all name lanes from here.
"""

from __future__ import annotations

from typing import Literal, get_args

Lane = Literal["policy", "request", "state", "history", "evidence", "tools", "briefing"]
LANES: tuple[Lane, ...] = get_args(Lane)

# The budget (a key of `context.budgets`) each lane is held to.
LANE_BUDGET: dict[Lane, str] = {
    "policy": "policy",
    "request": "policy",
    "state": "state",
    "history": "history_tail",
    "evidence": "evidence",
    "tools": "tools",
    "briefing": "briefing",
}

# The fixed head's components (`PrefixCost`) and the lane each is counted in.
FIXED_LANE: dict[str, Lane] = {
    "system_prompt": "policy",
    "tool_schemas": "tools",
    "memory_briefing": "briefing",
    "notes": "briefing",
}
