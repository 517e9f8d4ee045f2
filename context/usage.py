"""The ledger's reports: the fixed head's cost, usage of the window, and per-call cache use."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PrefixCost:
    """Tokens of the fixed head of the prompt, by component: the fixed overhead every call pays."""

    system_prompt: int
    tool_schemas: int
    memory_briefing: int
    notes: int
    text: str

    @property
    def total(self) -> int:
        return self.system_prompt + self.tool_schemas + self.memory_briefing + self.notes

    def as_dict(self) -> dict[str, int]:
        return {
            "system_prompt": self.system_prompt,
            "tool_schemas": self.tool_schemas,
            "memory_briefing": self.memory_briefing,
            "notes": self.notes,
        }


@dataclass
class Usage:
    """The prompt's exact size against the window, broken down three ways."""

    window: int
    # Tokens kept free for the answer (the configured reserve, capped at an eighth of the window).
    output_reserve_tokens: int
    total: int
    fixed: PrefixCost
    by_component: dict[str, int]
    by_lane: dict[str, int]
    by_turn: dict[int, int]
    by_item: dict[str, int]
    exact: bool
    mode: str

    @property
    def fraction(self) -> float:
        return self.total / self.window if self.window else 0.0

    @property
    def limit(self) -> int:
        """The most prompt tokens allowed: the window minus the output reserve."""
        return self.window - self.output_reserve_tokens

    @property
    def free(self) -> int:
        return self.limit - self.total

    @property
    def fits(self) -> bool:
        return self.total <= self.limit


@dataclass(frozen=True)
class CallRecord:
    """One model call: prompt tokens reused from the cache versus newly evaluated."""

    turn: int
    label: str
    prompt_tokens: int
    reused_tokens: int
    evaluated_tokens: int
    generated_tokens: int
    full_reprefill: bool
    prefill_s: float
    at: float = field(default_factory=time.time)
    # False when the engine gave no cache figures (a served model's engine may not): reused
    # and evaluated are then unknown, and are shown as such, never as 0.
    cache_reported: bool = True
    # Stopped before the end (a barge-in, or a warm-up the user's speech interrupted).
    cancelled: bool = False
