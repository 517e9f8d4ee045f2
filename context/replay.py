"""Replay a recorded session and measure it in the shape of seed 003's 10-turn table.

`Replayer` is the `TracePlayer` behind `python -m bot replay`: the same ledger, assembler and
compaction hooks as a live session (see `context.trace_player` for the trace format and the
call points). Each model call is rendered by `Assembler.assemble`, as the session loop does;
the result is one row per turn: tokens used, the share of the window, the breakdown by
component, the compaction events, and the peak and overflow of the turn's calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compaction.events import CompactionEvent
from compaction.hooks import CompactionHooks, HooksFactory
from context.assembler import Request
from context.conversation import Conversation
from context.ledger import Ledger
from context.trace_player import TraceError, TracePlayer, read_trace
from models.base import ToolCall

if TYPE_CHECKING:
    from config import Settings
    from models.base import LLM

__all__ = ["ReplayResult", "Replayer", "TraceError", "TurnRow", "read_trace"]


@dataclass
class TurnRow:
    turn: int
    used: int = 0
    fraction: float = 0.0
    by_component: dict[str, int] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    content: str = ""
    added: int = 0
    peak_call: int = 0
    overflow: bool = False


@dataclass
class ReplayResult:
    window: int
    fixed: dict[str, int]
    turns: list[TurnRow]
    conv: Conversation
    ledger: Ledger
    final_prompt: str
    disconnect_events: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        events = [e for t in self.turns for e in t.events] + self.disconnect_events
        peak = max((max(t.used, t.peak_call) for t in self.turns), default=0)
        return {
            "turns": len(self.turns),
            "peak_used": peak,
            "peak_fraction": round(peak / self.window, 4) if self.window else 0.0,
            "overflows": sum(1 for t in self.turns if t.overflow),
            "tier1": sum(1 for e in events if e.get("tier") == 1),
            "tier2": sum(1 for e in events if e.get("tier") == 2),
            "tier3": sum(1 for e in events if e.get("tier") == 3),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "turns": [
                {
                    "turn": t.turn,
                    "used": t.used,
                    "fraction": round(t.fraction, 4),
                    "by_component": t.by_component,
                    "events": t.events,
                }
                for t in self.turns
            ],
            "summary": self.summary(),
        }


def _label(text: str, calls: list[str]) -> str:
    short = " ".join(text.split())
    short = short if len(short) <= 24 else short[:23] + "…"
    return f'"{short}"' + (f" + {', '.join(calls)}" if calls else " + response")


class Replayer(TracePlayer[CompactionHooks]):
    """Feeds a trace through one conversation; see the module docstring."""

    def __init__(
        self,
        settings: Settings,
        *,
        engine: Any,
        system_prompt: str,
        tools: list[dict[str, Any]],
        tool_groups: list[str],
        store: Any,
        hooks_factory: HooksFactory,
        llm: LLM | None = None,
    ) -> None:
        super().__init__(
            settings,
            engine=engine,
            store=store,
            system_prompt=system_prompt,
            tools=tools,
            tool_groups=tool_groups,
            hooks_factory=hooks_factory,
            llm=llm,
        )
        self.rows: list[TurnRow] = []
        self.disconnect_events: list[dict[str, Any]] = []
        self._calls: list[str] = []
        self._before = 0

    def _start_turn(self) -> None:
        self._before = self.ledger.usage(self.conv).total
        self.rows.append(TurnRow(self.conv.turn + 1))
        self._calls = []

    def _on_event(self, event: CompactionEvent) -> None:
        kept = self.rows[-1].events if self.request else self.disconnect_events
        kept.append(event.to_json())

    def _call(self) -> None:
        asm = self.assembler.assemble(self.conv, self.request)
        row = self.rows[-1]
        row.overflow = row.overflow or asm.overflow
        row.peak_call = max(row.peak_call, asm.usage.total)

    def _after_answer(self, calls: list[ToolCall]) -> None:
        self._calls += [c.name for c in calls]

    def _end_turn(self, request: Request) -> None:
        usage, row = self.ledger.usage(self.conv), self.rows[-1]
        row.used, row.fraction = usage.total, usage.fraction
        row.by_component = dict(usage.by_component)
        row.content = _label(request.text, self._calls)
        row.added = usage.total - self._before

    async def run(self, records: Iterable[dict[str, Any]]) -> ReplayResult:
        fixed = self.ledger.prefix_cost(self.conv.prefix).as_dict()
        await self.play(records, disconnect=False)
        return ReplayResult(
            window=self.ledger.window,
            fixed=fixed,
            turns=self.rows,
            conv=self.conv,
            ledger=self.ledger,
            final_prompt=self.ledger.prompt(self.conv),
            disconnect_events=self.disconnect_events,
        )
