"""The long-session harness: a trace through the real turn, with cache accounting.

`simulator()` is a `bot.turn.replay.TracePlayer` (every turn a live `Session` turn on a `Runtime`
with the real compactor as its hooks) whose scripted session model also writes the tier-2
summaries (`scripted_summary`) and takes the idle-time re-prefill, so its cache is the one
the next turn finds. Cache accounting only observes the ledger's model calls
(`Ledger.record_call`): what each of the user's calls evaluated with prefix reuse beside its
whole prompt (a runtime with no reuse), and what the re-prefill calls evaluated, beside the
compactor's predicted re-prefill.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from bot.turn.replay import ReplayResult, TracePlayer, TurnRecord
from bot.turn.session import Session
from compaction.compactor import Compactor
from compaction.events import CompactionEvent
from compaction.summarize import INSTRUCTIONS
from config import Settings


class ScriptedReplies:
    """A script for `models.fakes.ScriptedLLM`: the model's replies in order (then `filler`);
    summary prompts get a scripted checkpoint (`scripted_summary`) instead."""

    def __init__(self, filler: str) -> None:
        self.replies: list[str] = []
        self.filler = filler

    def __call__(self, prompt: str) -> str:
        if INSTRUCTIONS in prompt:
            return scripted_summary(prompt)
        return self.replies.pop(0) if self.replies else self.filler


def scripted_summary(prompt: str) -> str:
    """A summarizer script for `models.fakes.ScriptedLLM`: valid checkpoint JSON from the prompt.

    It names the first and the latest request it was shown, so a test can tell which turns a
    summary covered; everything protected comes from the rules anyway.
    """
    asked = [line[len("User: ") :] for line in prompt.splitlines() if line.startswith("User: ")]
    first = asked[0][:80] if asked else ""
    last = asked[-1][:80] if asked else ""
    return json.dumps(
        {
            "goal": first,
            "decisions": [],
            "open_questions": [],
            "summary": f"The user made {len(asked)} requests, the latest: {last}",
        }
    )


@dataclass
class TurnStats:
    """One turn's cache figures, read off the ledger's calls and the turn's compactions."""

    turn: int
    calls: int = 0
    evaluated: int = 0  # prompt tokens the user's calls evaluated, with prefix reuse
    naive: int = 0  # the same calls with no prefix reuse: every prompt in full
    reprefill: int = 0  # compaction re-prefill the compactor predicts (cut to end)
    reprefill_evaluated: int = 0  # what the idle-time re-prefill calls evaluated
    reprefill_naive: int = 0  # the whole prompt after every compaction edit


def turn_stats(rec: TurnRecord) -> TurnStats:
    user = [c for c in rec.calls if c.label.startswith("round")]
    again = [c for c in rec.calls if c.label == "reprefill"]
    return TurnStats(
        turn=rec.turn,
        calls=len(user),
        evaluated=sum(c.evaluated_tokens for c in user),
        naive=sum(c.prompt_tokens for c in user),
        reprefill=sum(e.reprefill_tokens for e in rec.events),
        reprefill_evaluated=sum(c.evaluated_tokens for c in again),
        reprefill_naive=sum(e.tokens_after for e in rec.events if e.tier in (1, 2)),
    )


@dataclass
class SimResult(ReplayResult):
    """A replay with each turn's cache figures (`stats`, in the order of `turns`)."""

    stats: list[TurnStats] = field(default_factory=list)

    @property
    def compactor(self) -> Compactor:
        return compactor(self.session)

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def trimmed(self) -> int:
        return sum(t.trimmed for t in self.turns)

    def prompt(self) -> str:
        return self.ledger.prompt(self.conv)


def simulator(records: list[dict[str, Any]], settings: Settings, **options: Any) -> TracePlayer:
    """A `TracePlayer` (same options) whose session model writes summaries by default."""
    options.setdefault("summarizer", scripted_summary)
    options.setdefault("front_end", "sim")
    return TracePlayer(records, settings, **options)


def compactor(session: Session) -> Compactor:
    """The session's hooks, which are the compactor here."""
    hooks = session.hooks
    assert isinstance(hooks, Compactor)
    return hooks


def after_compaction(player: TracePlayer, check: Callable[[CompactionEvent, str], None]) -> None:
    """Call `check(event, prompt)` with each compaction event and the prompt right after it."""

    def observe(event: CompactionEvent, session: Session) -> None:
        check(event, session.ledger.prompt(session.conv))

    player.on_compaction.append(observe)


async def simulate(player: TracePlayer, *, disconnect: bool = True) -> SimResult:
    """Play every turn (then close the session: tier 3) and add the cache figures."""
    result = await player.run(disconnect=disconnect)
    kept = {f.name: getattr(result, f.name) for f in fields(ReplayResult)}
    return SimResult(**kept, stats=[turn_stats(r) for r in result.turns])
