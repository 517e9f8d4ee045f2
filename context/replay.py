"""Replay a recorded session through the real ledger, assembler and compaction hooks.

No text is generated: assistant messages come from the trace. Everything else is the same
code a live session runs: items are admitted by the assembler, logged in a store, measured
by the ledger with the model's own tokenizer and template, and the compaction hooks run at
the same points (before each model call, after each turn, in idle time between turns, and
on disconnect). The result is one row per turn, in the shape of seed 003's 10-turn table.
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
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.events import CompactionEvent
from context.assembler import Assembler, Request
from context.conversation import Conversation, Item
from context.hooks import CompactionHooks, HookContext, HooksFactory
from context.ledger import Ledger
from models.base import ToolCall

if TYPE_CHECKING:
    from config import Settings
    from models.base import LLM


class TraceError(ValueError):
    """A trace line that cannot be replayed; the message names the line."""


@dataclass
class TurnRow:
    turn: int
    used: int
    fraction: float
    by_component: dict[str, int]
    events: list[dict[str, Any]]
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


def read_trace(path: Path) -> list[dict[str, Any]]:
    """Parse a JSONL trace; raises TraceError naming the bad line."""
    records: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TraceError(f"cannot read the trace {path}: {exc}") from exc
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{path}:{n}: not JSON: {exc.msg}") from exc
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


def _label(text: str, calls: list[str]) -> str:
    short = " ".join(text.split())
    short = short if len(short) <= 24 else short[:23] + "…"
    return f'"{short}"' + (f" + {', '.join(calls)}" if calls else " + response")


class Replayer:
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
        self.settings = settings
        ctx = settings.context
        self.ledger = Ledger(engine, window=ctx.window, reserve_output=ctx.reserve_output)
        self.assembler = Assembler(settings, self.ledger)
        self.store = store
        self.session_id: str = store.start_session({"front_end": "replay"})
        prefix = self.assembler.build_prefix(system_prompt, tools, tool_groups)
        self.conv = Conversation(session_id=self.session_id, prefix=prefix)
        self.hooks: CompactionHooks = hooks_factory(
            HookContext(settings, self.session_id, self.ledger, store=store, llm=llm)
        )
        self.rows: list[TurnRow] = []
        self._events: list[CompactionEvent] = []
        self._request: Request | None = None
        self._calls: list[str] = []
        self._peak = 0
        self._overflow = False
        self._before = 0
        self._call_ids: dict[str, str] = {}

    def _log(self, kind: str, content: Any, **kw: Any) -> str:
        meta = {"turn": self.conv.turn, **kw.pop("meta", {})}
        turn_id = self._request.turn_id if self._request else ""
        return str(
            self.store.append_event(
                self.session_id, kind, content, turn_id=turn_id, meta=meta, **kw
            )
        )

    def _keep(self, events: Iterable[CompactionEvent]) -> None:
        for ev in events:
            self._events.append(ev)
            self._log("compaction", ev.to_json())

    async def _call(self) -> None:
        """A model call would happen here: hooks first, then the assembler's guarantee."""
        needed = self.ledger.usage(self.conv).total + self.ledger.reserve
        self._keep(await self.hooks.before_call(self.conv, self.ledger, needed))
        asm = self.assembler.assemble(self.conv, self._request)
        self._overflow = self._overflow or asm.overflow
        self._peak = max(self._peak, asm.usage.total)
        self.conv.mark_sent()

    async def _finish_turn(self) -> None:
        if self._request is None:
            return
        self._keep(await self.hooks.after_turn(self.conv, self.ledger))
        self._keep(await self.hooks.on_idle(self.conv, self.ledger))
        usage = self.ledger.usage(self.conv)
        self.rows.append(
            TurnRow(
                turn=self.conv.turn,
                used=usage.total,
                fraction=usage.fraction,
                by_component=dict(usage.by_component),
                events=[e.to_json() for e in self._events],
                content=_label(self._request.text, self._calls),
                added=usage.total - self._before,
                peak_call=self._peak,
                overflow=self._overflow,
            )
        )
        self._request, self._events, self._calls = None, [], []
        self._peak, self._overflow = 0, False

    async def feed(self, rec: dict[str, Any]) -> None:
        kind = rec["type"]
        if kind == "user":
            await self._finish_turn()
            self.hooks.on_user_activity()
            self._before = self.ledger.usage(self.conv).total
            text = str(rec.get("text", ""))
            turn_id = f"{self.session_id}-t{self.conv.turn + 1}"
            self._request = Request(text=text, turn_id=turn_id, id="")
            self._request.id = self._log(
                "user", text, role="user", meta={"turn": self.conv.turn + 1}
            )
            self.assembler.admit_turn(self.conv, self._request)
        elif kind == "assistant":
            if self._request is None:
                raise TraceError("an assistant line before any user line")
            await self._call()
            calls = [
                ToolCall(str(c["name"]), dict(c.get("arguments", {})), str(c.get("id", "")))
                for c in rec.get("tool_calls", []) or []
            ]
            text = str(rec.get("text", ""))
            item_id = self._log("assistant", text, role="assistant")
            item = Item(
                item_id,
                "tool_call" if calls else "assistant",
                "assistant",
                text,
                turn=self.conv.turn,
            )
            item.tool_calls, item.calls_in_content = calls, False
            self.conv.append(item)
            for c in calls:
                self._calls.append(c.name)
                self._log(
                    "tool_call",
                    json.dumps(c.arguments),
                    role="assistant",
                    name=c.name,
                    call_id=c.id,
                )
        elif kind == "tool_result":
            content = str(rec.get("content", ""))
            name, call_id = str(rec.get("name", "")), str(rec.get("id", ""))
            result_id = self._log("tool_result", content, role="tool", name=name, call_id=call_id)
            self.assembler.admit_tool_result(
                self.conv, id=result_id, call_id=call_id, name=name, content=content
            )
        elif kind == "disconnect":
            await self._finish_turn()
            self._keep(await self.hooks.on_disconnect(self.conv, self.ledger))

    async def run(self, records: Iterable[dict[str, Any]]) -> ReplayResult:
        fixed = self.ledger.prefix_cost(self.conv.prefix).as_dict()
        disconnect: list[dict[str, Any]] = []
        for rec in records:
            if rec["type"] == "session":
                continue
            await self.feed(rec)
            if rec["type"] == "disconnect":
                disconnect += [e.to_json() for e in self._events]
                self._events = []
        await self._finish_turn()
        return ReplayResult(
            window=self.ledger.window,
            fixed=fixed,
            turns=self.rows,
            conv=self.conv,
            ledger=self.ledger,
            final_prompt=self.ledger.prompt(self.conv),
            disconnect_events=disconnect,
        )
