"""Play a recorded trace through the real ledger, assembler and compaction hooks.

No text is generated: assistant messages come from the trace. Everything else is the code a
live session runs: items are admitted by the assembler, logged in the store's event log as
the session loop logs them, measured by the ledger with the model's own tokenizer and
template, and the hooks run at the same points: `before_call` before each assistant record
(one model call), `after_turn` then `on_idle` after each turn, `on_disconnect` at the end.
`TracePlayer` owns all of that; `context.replay.Replayer` (seed 003's per-turn table) and
`compaction.sim.Simulator` (cache accounting for the bench) measure what they need through
its small overridable methods. Trace format (JSON lines):
    {"type": "session", "window": 16384}              optional first line
    {"type": "user", "text": "..."}
    {"type": "assistant", "text": "...",
     "tool_calls": [{"id": "c1", "name": "...", "arguments": {}}]}
    {"type": "tool_result", "id": "c1", "name": "web_search", "content": "..."}
    {"type": "disconnect"}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from compaction.events import CompactionEvent
from compaction.hooks import CompactionHooks, HookContext
from context.assembler import Assembler, Request
from context.conversation import Conversation, Item
from context.ledger import Ledger
from models.base import ToolCall

if TYPE_CHECKING:
    from config import Settings
    from models.base import LLM

H = TypeVar("H", bound=CompactionHooks)


class TraceError(ValueError):
    """A trace line that cannot be replayed; the message names the line."""


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


class TracePlayer(Generic[H]):
    """One session over a trace; subclasses measure through the `_...` methods below."""

    front_end: ClassVar[str] = "replay"  # the session's `front_end` in the store

    def __init__(
        self,
        settings: Settings,
        *,
        engine: Any,
        store: Any,
        system_prompt: str,
        tools: list[dict[str, Any]],
        tool_groups: list[str],
        hooks_factory: Callable[[HookContext], H],
        llm: LLM | None = None,
        idle: bool = True,
    ) -> None:
        self.settings = settings
        # False: the caller runs the hooks' `on_idle` itself (to interleave a user turn).
        self.idle = idle
        ctx = settings.context
        # The live session's reserve: at small windows it is less than `reserve_output`.
        self.ledger = Ledger(engine, window=ctx.window, reserve_output=ctx.reserved_output)
        self.assembler = Assembler(settings, self.ledger)
        self.store = store
        self.session_id: str = store.start_session({"front_end": self.front_end})
        prefix = self.assembler.build_prefix(system_prompt, tools, tool_groups)
        self.conv = Conversation(session_id=self.session_id, prefix=prefix)
        self.hooks: H = hooks_factory(
            HookContext(settings, self.session_id, self.ledger, store=store, llm=llm)
        )
        # The turn in flight: set by a user record, None once the turn has ended.
        self.request: Request | None = None

    # --- what subclasses measure --------------------------------------------------------

    def _start_turn(self) -> None:
        """A user record is about to be admitted as turn `conv.turn + 1`."""

    def _on_event(self, event: CompactionEvent) -> None:
        """A compaction event, already logged (`request` is None for disconnect's)."""

    def _call(self) -> None:
        """The model call itself, after `before_call`: fit the prompt, count it."""

    def _after_answer(self, calls: list[ToolCall]) -> None:
        """The assistant record is in the conversation."""

    def _end_turn(self, request: Request) -> None:
        """The turn's `after_turn` and idle work are done."""

    # --- the player -----------------------------------------------------------------------

    def _log(self, kind: str, content: Any, **kw: Any) -> str:
        """One event in the store's log, as the session loop writes it."""
        meta = {"turn": self.conv.turn, **kw.pop("meta", {})}
        turn_id = self.request.turn_id if self.request else ""
        return str(
            self.store.append_event(
                self.session_id, kind, content, turn_id=turn_id, meta=meta, **kw
            )
        )

    def _keep(self, events: Iterable[CompactionEvent]) -> None:
        for event in events:
            self._log("compaction", event.to_json())
            self._on_event(event)

    async def _model_call(self) -> None:
        """A model call would happen here: the hooks first, then the subclass's `_call`."""
        needed = self.ledger.usage(self.conv).total + self.ledger.reserve
        self._keep(await self.hooks.before_call(self.conv, self.ledger, needed))
        self._call()
        self.conv.mark_sent()

    async def end_turn(self) -> None:
        """The current turn is over: after_turn, then idle work (once per turn)."""
        request = self.request
        if request is None:
            return
        self._keep(await self.hooks.after_turn(self.conv, self.ledger))
        if self.idle:
            self._keep(await self.hooks.on_idle(self.conv, self.ledger))
        self._end_turn(request)
        self.request = None

    async def disconnect(self) -> None:
        await self.end_turn()
        self._keep(await self.hooks.on_disconnect(self.conv, self.ledger))

    async def feed(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "user":
            await self.end_turn()
            self.hooks.on_user_activity()
            text = str(record.get("text", ""))
            turn = self.conv.turn + 1
            self.request = Request(text=text, turn_id=f"{self.session_id}-t{turn}", id="")
            self._start_turn()
            self.request.id = self._log("user", text, role="user", meta={"turn": turn})
            self.assembler.admit_turn(self.conv, self.request)
        elif kind == "assistant":
            if self.conv.turn == 0:
                raise TraceError("the trace has an assistant record before any user record")
            await self._model_call()
            text = str(record.get("text", ""))
            calls = [
                ToolCall(str(c["name"]), dict(c.get("arguments", {})), str(c.get("id", "")))
                for c in record.get("tool_calls") or []
            ]
            # Logged as the session loop logs it: the message with its calls, then one event
            # per call.
            listed = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
            meta = {"tool_calls": listed} if calls else {}
            item_id = self._log("assistant", text, role="assistant", meta=meta)
            for c in calls:
                args = json.dumps(c.arguments, ensure_ascii=False)
                self._log("tool_call", args, role="assistant", name=c.name, call_id=c.id)
            item = Item(item_id, "assistant", "assistant", text, turn=self.conv.turn)
            if calls:
                # The trace's text lacks the call markup: the template renders the typed calls.
                item.kind, item.tool_calls, item.calls_in_content = "tool_call", calls, False
            self.conv.append(item)
            self._after_answer(calls)
        elif kind == "tool_result":
            content = str(record.get("content", ""))
            name, call_id = str(record.get("name", "")), str(record.get("id", ""))
            result_id = self._log("tool_result", content, role="tool", name=name, call_id=call_id)
            self.assembler.admit_tool_result(
                self.conv, id=result_id, call_id=call_id, name=name, content=content
            )
        elif kind == "disconnect":
            await self.disconnect()

    async def play(self, records: Iterable[dict[str, Any]], *, disconnect: bool) -> None:
        """Feed every record (a session header is read by the caller), then end the session."""
        for record in records:
            if record.get("type") != "session":
                await self.feed(record)
        if disconnect:
            await self.disconnect()
        else:
            await self.end_turn()
