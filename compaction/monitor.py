"""The monitor's decision: which tier, if any, a given fill level calls for, with hysteresis.

Pure and synchronous. Tier 1 is chosen only when its plan gets usage back below the tier-1
threshold (otherwise it would fire again on the next turn and pay a re-prefill for nothing);
tier 2 is queued at the tier-2 threshold when tier 1 cannot do that. Neither tier fires on two
consecutive turns in the normal path; only a call that would not fit the window overrides that.
Below both thresholds, `history_due` queues tier 2 for the history lane alone: once lanes are
held, a raw history past its budget is folded behind the checkpoint in idle time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from config.settings import CompactionSettings


class Action(Enum):
    NONE = "none"
    TIER1 = "tier1"
    QUEUE_TIER2 = "queue_tier2"


@dataclass
class MonitorHistory:
    """What the monitor remembers between turns."""

    last_tier1_turn: int | None = None
    last_tier2_turn: int | None = None
    # (turn, fraction, where) for every reading: after turns and before model calls.
    readings: list[tuple[int, float, str]] = field(default_factory=list)

    def read(self, turn: int, fraction: float, where: str) -> None:
        self.readings.append((turn, fraction, where))
        if len(self.readings) > 2000:
            del self.readings[:1000]


def due_tier(fraction: float, cfg: CompactionSettings) -> int:
    """0, 1 or 2: the highest tier whose threshold `fraction` has reached."""
    if fraction >= cfg.tier2_threshold:
        return 2
    if fraction >= cfg.tier1_threshold:
        return 1
    return 0


def _fired_recently(last: int | None, turn: int) -> bool:
    return last is not None and turn - last <= 1


def decide(
    fraction: float,
    turn: int,
    monitored: MonitorHistory,
    cfg: CompactionSettings,
    *,
    tier1_fraction_after: float | None,
) -> Action:
    """The action after a turn at `fraction`.

    `tier1_fraction_after` is where tier 1's plan would leave usage (None: nothing to clear).
    """
    tier = due_tier(fraction, cfg)
    if tier == 0:
        return Action.NONE
    tier1_helps = (
        tier1_fraction_after is not None
        and tier1_fraction_after < cfg.tier1_threshold
        and not _fired_recently(monitored.last_tier1_turn, turn)
    )
    if tier1_helps:
        return Action.TIER1
    if tier == 2 and not _fired_recently(monitored.last_tier2_turn, turn):
        return Action.QUEUE_TIER2
    return Action.NONE


def history_due(
    used: int,
    history: int,
    turn: int,
    monitored: MonitorHistory,
    hold_above: int,
    history_budget: int,
) -> bool:
    """Whether the raw history (`history` tokens, checkpoints and pinned items aside) is to be
    folded in idle time: lanes are held (`used` past `hold_above`), it is over its budget, and
    tier 2 did not run on the last turn."""
    return (
        used >= hold_above
        and history > history_budget
        and not _fired_recently(monitored.last_tier2_turn, turn)
    )
