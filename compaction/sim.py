"""Play a trace through the real ledger, assembler and compactor, with cache accounting.

This is the harness behind `bench compaction` and the long-session tests: a
`context.trace_player.TracePlayer` with the `Compactor` as its hooks, so records, logging and
the hook call points are those of `replay`. Each model call is the assembler's `fit`; a
`CacheModel` of the llama.cpp slot counts what each call evaluates with prefix reuse (and
idle-time re-prefill) next to a runtime that evaluates the whole prompt every time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from compaction.compactor import Compactor
from compaction.events import CompactionEvent
from compaction.prefix import CacheModel, Segment
from config import Settings
from context.assembler import Request
from context.conversation import Conversation
from context.ledger import Ledger
from context.trace_player import TracePlayer
from models.base import LLM, CallStats, ToolCall


@dataclass
class TurnStats:
    turn: int
    used: int = 0
    fraction: float = 0.0
    peak: int = 0
    calls: int = 0
    evaluated: int = 0  # prompt tokens the user's calls evaluated, with prefix reuse
    naive: int = 0  # the same calls with no prefix reuse: every prompt in full
    reprefill: int = 0  # compaction re-prefill (cut to end), paid in idle time
    reprefill_naive: int = 0  # the whole prompt after every compaction edit
    overflow: bool = False
    events: list[CompactionEvent] = field(default_factory=list)


@dataclass
class SimResult:
    window: int
    turns: list[TurnStats]
    compactor: Compactor
    conv: Conversation
    ledger: Ledger
    session_id: str
    trimmed: int = 0

    @property
    def events(self) -> list[CompactionEvent]:
        return [e for t in self.turns for e in t.events]

    def count(self, tier: int) -> int:
        return sum(1 for e in self.events if e.tier == tier)

    @property
    def peak(self) -> int:
        return max((t.peak for t in self.turns), default=0)

    @property
    def overflows(self) -> int:
        return sum(1 for t in self.turns if t.overflow)

    def prompt(self) -> str:
        return self.ledger.prompt(self.conv)


def segments(conv: Conversation, ledger: Ledger, *, generation: bool) -> list[Segment]:
    """The prompt as cache segments: the fixed head, each item, the generation prompt."""
    head = ledger.prefix_cost(conv.prefix)
    out = [Segment("prefix:" + head.text, head.total)]
    for item in conv.items:
        text, n = ledger.item_segment(item)
        out.append(Segment(f"{item.id}:{text}", n))
    if generation:
        out.append(Segment("gen", ledger.generation_tokens))
    return out


class Simulator(TracePlayer[Compactor]):
    """One session over a trace; `run` plays it and returns the per-turn figures."""

    front_end = "sim"

    def __init__(
        self,
        settings: Settings,
        codec: Any,
        store: Any,
        *,
        system_prompt: str,
        tools: list[dict[str, Any]] | None = None,
        llm: LLM | None = None,
        idle: bool = True,
    ) -> None:
        super().__init__(
            settings,
            engine=codec,
            store=store,
            system_prompt=system_prompt,
            tools=tools or [],
            tool_groups=[],
            hooks_factory=Compactor,
            llm=llm,
            idle=idle,
        )
        self.compactor = self.hooks
        self.cache = CacheModel()
        self.turns: list[TurnStats] = []
        self.trimmed = 0
        # Called with each compaction event and the prompt right after it.
        self.after_compaction: list[Callable[[CompactionEvent, str], None]] = []

    def _start_turn(self) -> None:
        self.turns.append(TurnStats(self.conv.turn + 1))

    def _on_event(self, event: CompactionEvent) -> None:
        stats = self.turns[-1]
        stats.events.append(event)
        stats.reprefill += event.reprefill_tokens
        if event.tier in (1, 2):
            stats.reprefill_naive += event.tokens_after
        prompt = self.ledger.prompt(self.conv)
        for check in self.after_compaction:
            check(event, prompt)

    def _call(self) -> None:
        """The assembler's fit, then what the slot would evaluate with prefix reuse."""
        stats = self.turns[-1]
        usage, trimmed = self.assembler.fit(self.conv)
        self.trimmed += len(trimmed)
        stats.overflow = stats.overflow or usage.total + self.ledger.reserve > self.ledger.window
        stats.peak = max(stats.peak, usage.total)
        new = self.cache.would_evaluate(segments(self.conv, self.ledger, generation=True))
        stats.evaluated += new
        stats.naive += usage.total
        stats.calls += 1
        self.ledger.record_call(
            CallStats(
                prompt_tokens=usage.total, reused_tokens=usage.total - new, evaluated_tokens=new
            ),
            turn=self.conv.turn,
            label="simulated",
        )

    def _after_answer(self, calls: list[ToolCall]) -> None:
        # The slot now holds the prompt plus the generated tokens, which render as the item.
        self.cache.held = tuple(segments(self.conv, self.ledger, generation=False))

    def _end_turn(self, request: Request) -> None:
        stats = self.turns[-1]
        if stats.events:
            # Idle-time re-prefill: the next user turn finds the compacted prompt cached.
            self.cache.evaluate(segments(self.conv, self.ledger, generation=False))
        usage = self.ledger.usage(self.conv)
        stats.used, stats.fraction = usage.total, usage.fraction
        stats.peak = max(stats.peak, usage.total)

    async def disconnect(self) -> None:
        await self.end_turn()
        if not self.turns:
            self.turns.append(TurnStats(0))  # tier 3's event needs a turn to count in
        await super().disconnect()

    async def run(self, records: Iterable[dict[str, Any]], *, disconnect: bool = True) -> SimResult:
        await self.play(records, disconnect=disconnect)
        return SimResult(
            window=self.ledger.window,
            turns=self.turns,
            compactor=self.compactor,
            conv=self.conv,
            ledger=self.ledger,
            session_id=self.session_id,
            trimmed=self.trimmed,
        )


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
