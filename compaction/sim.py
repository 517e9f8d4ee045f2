"""Play a recorded trace through the real ledger, assembler and compactor, with cache accounting.

This is the harness behind `bench compaction` and the long-session tests. Trace records are the
replay format; each assistant record is one model call. Before every call the compactor's
`before_call` runs and the assembler fits the prompt; after every turn `after_turn` and then
`on_idle` run, as the session loop does. A `CacheModel` of the llama.cpp slot counts what each
call evaluates with prefix reuse (and idle-time re-prefill) next to a runtime that evaluates
the whole prompt every time. Every step is written to the store's event log.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.events import CompactionEvent
from compaction.compactor import Compactor
from compaction.prefix import CacheModel, Segment
from config import Settings
from context.assembler import Assembler, Request
from context.conversation import Conversation, Item
from context.hooks import HookContext
from context.ledger import Ledger
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


class Simulator:
    """One session over a trace; `run` plays it and returns the per-turn figures."""

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
        self.settings = settings
        # False: the caller runs `compactor.on_idle` itself (to interleave a user turn).
        self.idle = idle
        window = settings.context.window
        self.ledger = Ledger(codec, window=window, reserve_output=settings.context.reserved_output)
        self.assembler = Assembler(settings, self.ledger)
        self.store = store
        self.session_id: str = store.start_session({"front_end": "sim"})
        prefix = self.assembler.build_prefix(system_prompt, tools or [], [])
        self.conv = Conversation(session_id=self.session_id, prefix=prefix)
        ctx = HookContext(settings, self.session_id, self.ledger, store=store, llm=llm)
        self.compactor = Compactor(ctx)
        self.cache = CacheModel()
        self.turns: list[TurnStats] = []
        self.trimmed = 0
        self._ended = -1
        # Called with each compaction event and the prompt right after it.
        self.after_compaction: list[Callable[[CompactionEvent, str], None]] = []

    def _log(self, kind: str, content: Any, **kw: Any) -> str:
        event_id: str = self.store.append_event(
            self.session_id, kind, content, turn_id=f"t{self.conv.turn}", **kw
        )
        return event_id

    def _events(self, events: list[CompactionEvent]) -> None:
        for event in events:
            self._log("compaction", event.to_json())
            stats = self.turns[-1]
            stats.events.append(event)
            stats.reprefill += event.reprefill_tokens
            if event.tier in (1, 2):
                stats.reprefill_naive += event.tokens_after
            prompt = self.ledger.prompt(self.conv)
            for check in self.after_compaction:
                check(event, prompt)

    async def _call(self) -> None:
        """One model call: compaction first, then the assembler's fit, then the cache."""
        stats = self.turns[-1]
        usage = self.ledger.usage(self.conv)
        self._events(
            await self.compactor.before_call(
                self.conv, self.ledger, usage.total + self.ledger.reserve
            )
        )
        usage, trimmed = self.assembler.fit(self.conv)
        self.trimmed += len(trimmed)
        stats.overflow = stats.overflow or usage.total + self.ledger.reserve > self.ledger.window
        stats.peak = max(stats.peak, usage.total)
        prompt = segments(self.conv, self.ledger, generation=True)
        new = self.cache.would_evaluate(prompt)
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
        self.conv.mark_sent()

    def _after_answer(self) -> None:
        # The slot now holds the prompt plus the generated tokens, which render as the item.
        self.cache.held = tuple(segments(self.conv, self.ledger, generation=False))

    async def end_turn(self) -> None:
        """The current turn is over: after_turn, then idle work (once per turn)."""
        if not self.turns or self._ended == self.conv.turn:
            return
        self._ended = self.conv.turn
        self._events(await self.compactor.after_turn(self.conv, self.ledger))
        if self.idle:
            self._events(await self.compactor.on_idle(self.conv, self.ledger))
        stats = self.turns[-1]
        if stats.events:
            # Idle-time re-prefill: the next user turn finds the compacted prompt cached.
            self.cache.evaluate(segments(self.conv, self.ledger, generation=False))
        usage = self.ledger.usage(self.conv)
        stats.used, stats.fraction = usage.total, usage.fraction
        stats.peak = max(stats.peak, usage.total)

    async def feed(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "user":
            await self.end_turn()
            self.compactor.on_user_activity()
            text = str(record.get("text", ""))
            event_id = self._log("user", text, role="user")
            self.assembler.admit_turn(self.conv, Request(text, f"t{self.conv.turn + 1}", event_id))
            self.turns.append(TurnStats(self.conv.turn))
        elif kind == "assistant":
            if not self.turns:
                raise ValueError("the trace has an assistant record before any user record")
            await self._call()
            text = str(record.get("text", ""))
            calls = [
                ToolCall(c["name"], dict(c.get("arguments", {})), c.get("id", ""))
                for c in record.get("tool_calls", [])
            ]
            if calls:
                # Logged as the session loop logs it: the message, then one event per call.
                meta = {"tool_calls": record["tool_calls"]}
                event_id = self._log("assistant", text, role="assistant", meta=meta)
                for c in calls:
                    args = json.dumps(c.arguments, ensure_ascii=False)
                    self._log("tool_call", args, role="assistant", name=c.name, call_id=c.id)
                item = Item(event_id, "tool_call", "assistant", text, turn=self.conv.turn)
                item.tool_calls, item.calls_in_content = calls, False
            else:
                event_id = self._log("assistant", text, role="assistant")
                item = Item(event_id, "assistant", "assistant", text, turn=self.conv.turn)
            self.conv.append(item)
            self._after_answer()
        elif kind == "tool_result":
            content = str(record.get("content", ""))
            name, call_id = str(record.get("name", "")), str(record.get("id", ""))
            event_id = self._log("tool_result", content, role="tool", name=name, call_id=call_id)
            self.assembler.admit_tool_result(
                self.conv, id=event_id, call_id=call_id, name=name, content=content
            )
        elif kind == "disconnect":
            await self.disconnect()

    async def disconnect(self) -> None:
        await self.end_turn()
        if not self.turns:
            self.turns.append(TurnStats(0))
        self._events(await self.compactor.on_disconnect(self.conv, self.ledger))

    async def run(self, records: Iterable[dict[str, Any]], *, disconnect: bool = True) -> SimResult:
        for record in records:
            if record.get("type") != "session":
                await self.feed(record)
        if disconnect:
            await self.disconnect()
        else:
            await self.end_turn()
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
