"""Replay a recorded session through the real turn: a `Session` opened on a `Runtime`.

Nothing here re-implements the turn. Each recorded user line becomes `Session.handle_text`,
so admission (the Work Index snapshot and recalled evidence included), logging, the tool
rounds, the compaction hooks and idle time are the live session's own. Two things stand in
for the world:
- the model is `models.fakes.ScriptedLLM` (the real template, tokenizer and cache planner),
  and its script (`RecordedReplies`) emits each recorded assistant message in turn, writing
  its tool calls in the loaded model's own markup (`models.toolcalls.write_call`);
- the tools are the registry's own (same names, groups, schemas, metadata) with each run
  answered from the recording (`RecordedTool`). The parser gives a call the id a live call
  gets (`call_N`): the XML dialect has nowhere to write an id, so calls are mapped by order,
  the k-th call of a recorded message to the k-th call the runner runs after it, and that
  recorded call's id picks its recorded result.
The replay runtime has no state resolver: every recorded turn goes to the model, because the
recording holds the model's answer for it, even one the state path would answer live. Groups
the recording calls are loaded before the first turn (the recorded model called them
directly); the fixed prompt head stays the product's (core and memory schemas).

Trace format (JSON lines):
    {"type": "session", "window": 16384}              optional first line
    {"type": "user", "text": "..."}
    {"type": "assistant", "text": "...",
     "tool_calls": [{"id": "c1", "name": "...", "arguments": {}}]}
    {"type": "tool_result", "id": "c1", "name": "web_search", "content": "..."}
    {"type": "disconnect"}
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bot.runtime import Runtime
from bot.tools.registry import ToolRegistry, default_registry
from bot.turn.events import Event, ToolCallEvent, TurnDone
from bot.turn.replay_tools import RecordedReplies, RecordedResults, recorded_registry
from bot.turn.session import Session
from compaction import create_hooks
from compaction.events import CompactionEvent
from compaction.hooks import HookInputs, HooksFactory
from config import Settings
from context.conversation import Conversation
from context.ledger import CallRecord, Ledger
from memory.store import Store
from models.base import LLM, Tokenizer
from models.fakes import ScriptedLLM


class TraceError(ValueError):
    """A trace line that cannot be replayed; the message names the line."""


def read_trace(path: Path) -> list[dict[str, Any]]:
    """Parse a JSONL trace; raises TraceError naming the bad line."""
    records: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TraceError(f"cannot read the trace {path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{path}:{n}: not JSON: {exc.msg}") from exc
        except RecursionError as exc:  # the parser recurses per bracket
            raise TraceError(f"{path}:{n}: not JSON: nested too deeply") from exc
        if not isinstance(rec, dict) or rec.get("type") not in _TYPES:
            raise TraceError(f"{path}:{n}: each line needs a type, one of {', '.join(_TYPES)}")
        problem = _field_problem(rec)
        if problem:
            raise TraceError(f"{path}:{n}: {rec['type']} line: {problem}")
        records.append(rec)
    return records


_TYPES = ("session", "user", "assistant", "tool_result", "disconnect")


def _field_problem(rec: dict[str, Any]) -> str:
    """What is wrong with a record's fields (see the module docstring), or ""."""
    kind = rec["type"]
    window = rec.get("window")
    if kind == "session" and window is not None and not (type(window) is int and window > 0):
        return '"window" must be a positive whole number'
    required = {"user": ("text",), "tool_result": ("content",)}.get(kind, ())
    for key in ("text", "content", "id", "name"):
        if key in required and key not in rec:
            return f'"{key}" is missing'
        if key in rec and not isinstance(rec[key], str):
            return f'"{key}" must be a string'
    calls = rec.get("tool_calls")
    if kind == "assistant" and calls is not None:
        if not isinstance(calls, list):
            return '"tool_calls" must be a list'
        for call in calls:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                return 'each tool call needs a "name" string'
            if not isinstance(call.get("arguments", {}), dict):
                return f"the arguments of tool call {call['name']!r} must be an object"
    return ""


@dataclass
class RecordedTurn:
    """One recorded user turn: the user's words and the assistant messages that answered."""

    text: str
    replies: list[dict[str, Any]] = field(default_factory=list)


def split_turns(records: Iterable[dict[str, Any]]) -> tuple[list[RecordedTurn], dict[str, str]]:
    """The user turns of a trace and its tool results by call id (up to a disconnect)."""
    turns: list[RecordedTurn] = []
    results: dict[str, str] = {}
    for rec in records:
        kind = rec.get("type")
        if kind == "user":
            turns.append(RecordedTurn(str(rec.get("text", ""))))
        elif kind == "assistant":
            if not turns:
                raise TraceError("the trace has an assistant record before any user record")
            turns[-1].replies.append(rec)
        elif kind == "tool_result":
            results[str(rec.get("id", ""))] = str(rec.get("content", ""))
        elif kind == "disconnect":
            break
    return turns, results


@dataclass
class TurnRecord:
    """What one replayed turn did, as observed on the session, its ledger and its log."""

    turn: int
    text: str
    tools: list[str] = field(default_factory=list)
    used_before: int = 0
    used: int = 0
    fraction: float = 0.0
    by_component: dict[str, int] = field(default_factory=dict)
    events: list[CompactionEvent] = field(default_factory=list)
    peak_call: int = 0  # the largest prompt any of the turn's model calls sent
    overflow: bool = False  # the assembler had to trim for a call
    trimmed: int = 0
    calls: list[CallRecord] = field(default_factory=list)  # the ledger's, idle work included
    answer: str = ""


Summarizer = LLM | Callable[[str], str] | None


class TracePlayer:
    """One session over a trace. `summarizer`: an LLM writes tier-2 summaries (and is the one
    re-prefilled in idle time); a function of the prompt makes the session's scripted model
    answer summary prompts with it; None leaves summaries to the rules (no re-prefill)."""

    def __init__(
        self,
        records: Iterable[dict[str, Any]],
        settings: Settings,
        *,
        tokenizer: Tokenizer,
        store: Store,
        registry: ToolRegistry | None = None,
        system_prompt: str | None = None,
        summarizer: Summarizer = None,
        hooks_factory: HooksFactory = create_hooks,
        front_end: str = "replay",
    ) -> None:
        records = list(records)
        self.turns, results = split_turns(records)
        self.disconnects = any(r.get("type") == "disconnect" for r in records)
        self.recorded = RecordedResults(results)
        summary = summarizer if callable(summarizer) and not isinstance(summarizer, LLM) else None
        self.script = RecordedReplies(self.recorded, summary)
        self.llm = ScriptedLLM(tokenizer, self.script, n_ctx=settings.context.window)
        self.script.dialect = self.llm.tool_dialect
        names = [
            c["name"] for t in self.turns for r in t.replies for c in r.get("tool_calls") or []
        ]
        tools = recorded_registry(registry or default_registry(), self.recorded, names)
        factory = hooks_factory
        if summary is None:
            other = summarizer if isinstance(summarizer, LLM) else None

            def factory(ctx: HookInputs) -> Any:
                return hooks_factory(replace(ctx, llm=other))

        self.runtime = Runtime(
            settings,
            llm=self.llm,
            store=store,
            tokenizer=tokenizer,
            registry=tools,
            hooks_factory=factory,
            system_prompt=system_prompt,
            # The trace recorded the model's replies: every turn goes to the model.
            answer_stages=(),
        )
        # Called with each compaction event as it happens (tier 3's on close) and the session.
        self.on_compaction: list[Callable[[CompactionEvent, Session], None]] = []
        self.session: Session = self.runtime.open_session(meta={"front_end": front_end})
        for group in dict.fromkeys(g for n in names if (t := tools.get(n)) and (g := t.group)):
            self.session.tools.load(group)
        self.records: list[TurnRecord] = []
        self.disconnect_events: list[CompactionEvent] = []
        self._next = 0

    @property
    def done(self) -> bool:
        return self._next >= len(self.turns)

    async def turn(self, *, idle: bool = True) -> TurnRecord:
        """Play the next recorded turn; with `idle`, wait for its idle-time work too (without,
        the next turn cancels that work the way a user speaking does)."""
        self._emitted()  # idle work of the turn before, ended by this one
        recorded = self.turns[self._next]
        self._next += 1
        session = self.session
        self.script.replies = deque(recorded.replies)
        before = session.usage().total
        n_events, n_calls = len(session.compactions), len(session.ledger.calls)
        rec = TurnRecord(session.conv.turn + 1, recorded.text, used_before=before)
        seen = None
        async for event in session.handle_text(recorded.text):
            asm = session.last_assembly
            if asm is not None and asm is not seen:
                seen = asm
                rec.peak_call = max(rec.peak_call, asm.usage.total)
                rec.overflow = rec.overflow or asm.overflow
                rec.trimmed += len(asm.trimmed)
            _observe(rec, event)
            if isinstance(event, CompactionEvent):
                self._compacted(event)
        if idle:
            await session.wait_idle()
        self._emitted()
        usage = session.usage()
        rec.used, rec.fraction, rec.by_component = (
            usage.total,
            usage.fraction,
            dict(usage.by_component),
        )
        rec.events = session.compactions[n_events:]
        rec.calls = session.ledger.calls[n_calls:]
        self.records.append(rec)
        return rec

    async def play(self, *, disconnect: bool = True) -> list[TurnRecord]:
        """Every remaining turn, then (with `disconnect`) close the session: tier 3."""
        while not self.done:
            await self.turn()
        if disconnect:
            await self.close()
        return self.records

    async def run(self, *, disconnect: bool | None = None) -> ReplayResult:
        """Play the trace on the new session; it is closed (tier 3) if `disconnect`, by default
        if the trace ends with a disconnect record."""
        session = self.session
        fixed = session.ledger.prefix_cost(session.conv.prefix).as_dict()
        await self.play(disconnect=self.disconnects if disconnect is None else disconnect)
        return ReplayResult(
            window=session.ledger.window,
            fixed=fixed,
            turns=self.records,
            session=session,
            final_prompt=session.ledger.prompt(session.conv),
            disconnect_events=self.disconnect_events,
        )

    async def close(self) -> list[CompactionEvent]:
        """End the session (tier 3 through the hooks) and the runtime; the store stays open."""
        if not self.session.closed:
            self._emitted()
            self.disconnect_events = await self.session.close()
            for event in self.disconnect_events:
                self._compacted(event)
        await self.runtime.close()
        return self.disconnect_events

    def _emitted(self) -> None:
        """Events the session said outside a turn (its outbox): idle-time compactions."""
        while not self.session.outbox.empty():
            event = self.session.outbox.get_nowait()
            if isinstance(event, CompactionEvent):
                self._compacted(event)

    def _compacted(self, event: CompactionEvent) -> None:
        for observe in self.on_compaction:
            observe(event, self.session)


def _observe(rec: TurnRecord, event: Event) -> None:
    if isinstance(event, ToolCallEvent):
        rec.tools.append(event.name)
    elif isinstance(event, TurnDone):
        rec.answer = event.text


@dataclass
class ReplayResult:
    """A replayed session: its turns, the fixed head's cost, and the final prompt."""

    window: int
    fixed: dict[str, int]
    turns: list[TurnRecord]
    session: Session
    final_prompt: str
    disconnect_events: list[CompactionEvent] = field(default_factory=list)

    @property
    def conv(self) -> Conversation:
        return self.session.conv

    @property
    def ledger(self) -> Ledger:
        return self.session.ledger

    @property
    def events(self) -> list[CompactionEvent]:
        return [e for t in self.turns for e in t.events] + self.disconnect_events

    def count(self, tier: int) -> int:
        return sum(1 for e in self.events if e.tier == tier)

    @property
    def peak(self) -> int:
        """The largest prompt of any call or between turns."""
        return max((max(t.used, t.peak_call) for t in self.turns), default=0)

    @property
    def overflows(self) -> int:
        """Turns in which the assembler had to trim."""
        return sum(1 for t in self.turns if t.overflow)

    def summary(self) -> dict[str, Any]:
        return {
            "turns": len(self.turns),
            "peak_used": self.peak,
            "peak_fraction": round(self.peak / self.window, 4) if self.window else 0.0,
            "overflows": self.overflows,
            "tier1": self.count(1),
            "tier2": self.count(2),
            "tier3": self.count(3),
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
                    "events": [e.to_json() for e in t.events],
                }
                for t in self.turns
            ],
            "summary": self.summary(),
        }
