"""Running the model's tool calls for a turn: log, run (bounded, cancellable), admit.

Each call is logged before it runs and its result after; the result (an error included) is
admitted by the assembler, so the model reads it on the next round. A call to a tool whose
group is not loaded gets an error naming the group to load. Arguments are typed by the tool's
schema first; ones that do not fit are an error result and the tool does not run. An
unreadable call is answered with an example in the model's own dialect. A group loaded by a
call has its schemas appended to the tools lane once the round's results are in. A barge-in
cancels the running tool; a tool that overruns tools.timeout_s is stopped. Nothing here raises
into the turn. The runner sees only a `TurnContext`, never the session: what a tool needs is in
its metadata (`Tool.needs_embedder`, `Tool.produces_table`), not in a list of names here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from bot.events import ErrorEvent, Event, TableEvent, ToolCallEvent, ToolResultEvent
from bot.tools.approval import guarded
from bot.tools.base import ToolContext, ToolOutput
from bot.tools.registry import ActiveTools
from config import Settings
from context.assembler import Assembler
from context.conversation import Conversation, Item
from models.base import Embedder, ToolCall, ToolDialect
from models.toolcalls import ArgumentError, call_example, coerce_arguments


@dataclass
class TurnContext:
    """What one turn's tool rounds use: built by the session for each model turn."""

    session_id: str
    settings: Settings
    conv: Conversation
    assembler: Assembler
    tools: ActiveTools
    # Appends one event to the session's log: (kind, content, turn_id, **fields) -> event id.
    log: Callable[..., str]
    # Set on barge-in: the running tool is stopped.
    cancel: asyncio.Event
    # A memory Store.
    store: Any
    # The embedder, loaded on first use; asked for only by tools that need it.
    embedder: Callable[[], Embedder | None]
    # How the loaded model writes a call, for the example shown after an unreadable one.
    dialect: ToolDialect


class ToolRunner:
    """The tool rounds of one turn."""

    def __init__(self, ctx: TurnContext) -> None:
        self.ctx = ctx

    async def run_calls(
        self,
        turn_id: str,
        raw: str,
        text: str,
        calls: list[ToolCall],
        errors: list[Any],
    ) -> AsyncIterator[Event]:
        """Record the assistant's calls, run them, admit every result (errors included)."""
        s = self.ctx
        loaded_before = list(s.tools.loaded)
        call_json = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
        msg_id = s.log(
            "assistant", text, turn_id, role="assistant", meta={"raw": raw, "tool_calls": call_json}
        )
        item = Item(msg_id, "tool_call", "assistant", raw, turn=s.conv.turn, tool_calls=list(calls))
        item.reason = "the assistant's tool calls"
        s.conv.append(item)
        for call in calls:
            s.log(
                "tool_call",
                json.dumps(call.arguments, ensure_ascii=False),
                turn_id,
                role="assistant",
                name=call.name,
                call_id=call.id,
            )
            yield ToolCallEvent(turn_id, call.id, call.name, call.arguments)
            output = await self.run_tool(call, turn_id)
            result_id = s.log(
                "tool_result",
                output.content,
                turn_id,
                role="tool",
                name=call.name,
                call_id=call.id,
                meta={"ok": output.ok},
            )
            s.assembler.admit_tool_result(
                s.conv,
                id=result_id,
                call_id=call.id,
                name=call.name,
                content=output.content,
                ok=output.ok,
            )
            yield ToolResultEvent(turn_id, call.id, call.name, output.ok, output.content[:240])
            tool = s.tools.callable(call.name)
            if tool is not None and tool.produces_table and output.ok:
                data = output.data
                yield TableEvent(
                    turn_id, str(data.get("title", "")), list(data["columns"]), list(data["rows"])
                )
        for n, err in enumerate(errors, start=1):
            content = (
                f"error: your tool call could not be read ({err.reason}). Write it like this, "
                f"or answer without it:\n{call_example(s.dialect)}"
            )
            call_id = f"bad_{s.conv.turn}_{n}"
            result_id = s.log(
                "tool_result",
                content,
                turn_id,
                role="tool",
                call_id=call_id,
                meta={"ok": False, "raw": err.raw},
            )
            s.assembler.admit_tool_result(
                s.conv, id=result_id, call_id=call_id, name="", content=content, ok=False
            )
            yield ErrorEvent(f"unreadable tool call: {err.reason}", where="tool_call")
        # Groups loaded by this round's calls: their schemas join the tools lane, after all
        # of the round's results so the templates still group those into one turn.
        for group in s.tools.loaded:
            if group not in loaded_before:
                s.assembler.admit_tool_schemas(s.conv, group, s.tools.schema_text(group))

    async def run_tool(self, call: ToolCall, turn_id: str) -> ToolOutput:
        s = self.ctx
        tool = s.tools.callable(call.name)
        if tool is None:
            loaded = ", ".join(t for g in s.tools.loaded for t in self.group_tools(g))
            hint = next((g for g in s.tools.available if call.name in self.group_tools(g)), "")
            how = f' Call load_tool_group(group="{hint}") first.' if hint else ""
            return ToolOutput(
                f"error: no tool {call.name!r} is loaded (loaded: {loaded}).{how}", ok=False
            )
        # Typed by the schema before the tool sees them: the XML dialect leaves every value
        # as text, and only the schema says whether "2026" is a year or a number.
        try:
            arguments = coerce_arguments(
                call.arguments, tool.schema()["function"]["parameters"], call.raw_args
            )
        except ArgumentError as exc:
            return ToolOutput(f"error: bad arguments for {tool.name}: {exc}", ok=False)
        ctx = ToolContext(
            settings=s.settings,
            store=s.store,
            embedder=s.embedder() if tool.needs_embedder else None,
            session_id=s.session_id,
            turn_id=turn_id,
            load_group=s.tools.load,
        )
        # A tool the approval policy marks only asks here; the user's yes runs it.
        task = asyncio.ensure_future(guarded(tool).run(arguments, ctx))
        stop = asyncio.ensure_future(s.cancel.wait())
        timeout = s.settings.tools.timeout_s
        done, _ = await asyncio.wait(
            {task, stop}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        stop.cancel()
        if task in done:
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        if s.cancel.is_set():
            return ToolOutput(f"error: {call.name} was cancelled: the user interrupted", ok=False)
        return ToolOutput(
            f"error: {call.name} took longer than {timeout:g} s and was stopped", ok=False
        )

    def group_tools(self, group: str) -> list[str]:
        s = self.ctx
        found = s.tools.registry.groups.get(group)
        return [t.name for t in found.tools] if found else []
