"""Running the model's tool calls for a turn: log, run (bounded, cancellable), admit.

Each call is logged before it runs and its result after; the result (an error included) is
admitted by the assembler, so the model reads it on the next round. A call to a tool whose
group is not loaded gets an error naming the group to load. Arguments are typed by the tool's
schema first; ones that do not fit are an error result and the tool does not run. An
unreadable call is answered with an example in the model's own dialect. A group loaded by a
call has its schemas appended to the tools lane once the round's results are in. A barge-in
cancels the running tool; a tool that overruns tools.timeout_s is stopped. A call that already
failed in this session with the same arguments is not run again (the retry guard): the model
gets the earlier error back, with its result id, unless the user has asked since to try again,
so a model that lost the failure to a compaction cannot repeat it. Nothing here raises
into the turn. The runner sees only the prompt's parts, memory, the tools and the turn's cancel
event, never the session: what a tool needs is in its metadata (`Tool.needs_embedder`,
`Tool.produces_table`), not in a list of names here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from bot.tools.approval import guarded
from bot.tools.base import OUTSIDE_MARK, ToolEnv, ToolOutput, run_bounded
from bot.turn.events import ErrorEvent, Event, TableEvent, ToolCallEvent, ToolResultEvent
from compaction.attempts import Attempt, earlier_failure
from memory.rows import from_iso
from models.base import ToolCall
from models.toolcalls import ArgumentError, call_example, coerce_arguments, write_call

if TYPE_CHECKING:
    from bot.tools.registry import ActiveTools
    from bot.turn.model_inputs import Memory, PromptParts
    from bot.turn.record import Recorder
    from config import Settings


class ToolRunner:
    """The tool rounds of one turn."""

    def __init__(
        self,
        prompt: PromptParts,
        memory: Memory,
        tools: ActiveTools,
        *,
        record: Recorder,
        settings: Settings,
        allowed: frozenset[str],
        cancel: asyncio.Event,
    ) -> None:
        self.prompt = prompt
        self.memory = memory
        self.tools = tools
        self.record = record
        self.settings = settings
        # Approval-gated tools the user allowed for this session: they run without asking.
        self.allowed = allowed
        # Set by a barge-in: the running tool stops.
        self.cancel = cancel
        # What Annie says when the egress check held a request back: the turn ends with it.
        self.refused = ""

    async def run_calls(
        self,
        turn_id: str,
        raw: str,
        text: str,
        calls: list[ToolCall],
        errors: list[Any],
    ) -> AsyncIterator[Event]:
        """Record the assistant's calls, run them, admit every result (errors included)."""
        loaded_before = list(self.tools.loaded)
        self.record_calls(turn_id, raw, text, calls)
        for call in calls:
            yield ToolCallEvent(turn_id, call.id, call.name, call.arguments)
            output, not_run = await self.run_tool(call, turn_id)
            for event in self.record_result(turn_id, call, output, not_run):
                yield event
        for n, err in enumerate(errors, start=1):
            content = (
                f"error: your tool call could not be read ({err.reason}). Write it like this, "
                f"or answer without it:\n{call_example(self.prompt.llm.tool_dialect)}"
            )
            call_id = f"bad_{self.prompt.conv.turn}_{n}"
            result_id = self.record.log(
                "tool_result",
                content,
                turn_id,
                role="tool",
                call_id=call_id,
                meta={"ok": False, "raw": err.raw},
            )
            self.prompt.assembler.admit_tool_result(
                self.prompt.conv, id=result_id, call_id=call_id, name="", content=content, ok=False
            )
            yield ErrorEvent(f"unreadable tool call: {err.reason}", where="tool_call")
        # Groups loaded by this round's calls: their schemas join the tools lane, after all
        # of the round's results so the templates still group those into one turn.
        for group in self.tools.loaded:
            if group not in loaded_before:
                self.prompt.assembler.admit_tool_schemas(
                    self.prompt.conv, group, self.tools.schema_text(group)
                )

    def record_calls(self, turn_id: str, raw: str, text: str, calls: list[ToolCall]) -> None:
        """The assistant's message that made `calls` (`raw`, markup included), and each call."""
        call_json = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
        self.record.say(
            "assistant",
            text,
            turn_id,
            item_text=raw,
            item_kind="tool_call",
            meta={"raw": raw, "tool_calls": call_json},
            tool_calls=calls,
            reason="the assistant's tool calls",
        )
        for call in calls:
            self.record.log(
                "tool_call",
                json.dumps(call.arguments, ensure_ascii=False),
                turn_id,
                role="assistant",
                name=call.name,
                call_id=call.id,
            )

    def record_result(
        self, turn_id: str, call: ToolCall, output: ToolOutput, not_run: str = ""
    ) -> list[Event]:
        """Log a call's result and admit it for the model's next round (capped, cleared by
        tier 1 like every result); returns the events that tell the front end. `not_run`
        says why an error came from the runner rather than the tool (the log keeps it, and
        the retry guard counts only the tool's own errors)."""
        if not output.ok and output.data.get("refused"):
            self.refused = str(output.data["refused"])
        meta: dict[str, Any] = {"ok": output.ok}
        if not_run:
            meta["not_run"] = not_run
        result_id = self.record.log(
            "tool_result",
            output.content,
            turn_id,
            role="tool",
            name=call.name,
            call_id=call.id,
            meta=meta,
        )
        tool = self.tools.registry.get(call.name)
        outside = tool is not None and tool.outside and output.ok
        item = self.prompt.assembler.admit_tool_result(
            self.prompt.conv,
            id=result_id,
            call_id=call.id,
            name=call.name,
            content=OUTSIDE_MARK + output.content if outside else output.content,
            ok=output.ok,
        )
        expires = output.data.get("expires_at") if output.ok else None
        if isinstance(expires, str) and expires:  # an approval request: it expires
            item.meta["expires_at"] = from_iso(expires).timestamp()
        events: list[Event] = [
            ToolResultEvent(turn_id, call.id, call.name, output.ok, output.content[:240])
        ]
        if tool is not None and tool.produces_table and output.ok:
            data = output.data
            events.append(
                TableEvent(
                    turn_id, str(data.get("title", "")), list(data["columns"]), list(data["rows"])
                )
            )
        return events

    def resume(self, turn_id: str, call: ToolCall, output: ToolOutput) -> list[Event]:
        """An approved (or declined) call goes back to the model: the call as the model
        writes one, then its result, appended so every earlier token stays cached."""
        raw = write_call(call.name, call.arguments, self.prompt.llm.tool_dialect)
        self.record_calls(turn_id, raw, "", [call])
        return [
            ToolCallEvent(turn_id, call.id, call.name, call.arguments),
            *self.record_result(turn_id, call, output),
        ]

    async def run_tool(self, call: ToolCall, turn_id: str) -> tuple[ToolOutput, str]:
        """The call's output, and why the tool did not run to an answer ("" when it did)."""
        tool = self.tools.callable(call.name)
        if tool is None:
            loaded = ", ".join(t for g in self.tools.loaded for t in self.group_tools(g))
            hint = next((g for g in self.tools.available if call.name in self.group_tools(g)), "")
            how = f' Call load_tool_group(group="{hint}") first.' if hint else ""
            message = f"error: no tool {call.name!r} is loaded (loaded: {loaded}).{how}"
            return ToolOutput(message, ok=False), "not loaded"
        # Typed by the schema before the tool sees them: the XML dialect leaves every value
        # as text, and only the schema says whether "2026" is a year or a number.
        try:
            arguments = coerce_arguments(
                call.arguments, tool.schema()["function"]["parameters"], call.raw_args
            )
        except ArgumentError as exc:
            message = f"error: bad arguments for {tool.name}: {exc}"
            return ToolOutput(message, ok=False), "bad arguments"
        failed = earlier_failure(
            self.memory.store, self.memory.session_id, call.name, call.arguments
        )
        if failed is not None:
            return ToolOutput(refusal(failed), ok=False), f"repeats the failed call {failed.id}"
        ctx = ToolEnv(
            settings=self.settings,
            store=self.memory.store,
            embedder=self.memory.embedder() if tool.needs_embedder else None,
            session_id=self.memory.session_id,
            turn_id=turn_id,
            load_group=self.tools.load,
            allowed=self.allowed,
            sends_out=self.tools.sends_out(self.allowed),
        )
        # A tool the approval policy marks only asks here; the user's yes runs it.
        output = await run_bounded(
            guarded(tool).run(arguments, ctx), call.name, self.settings.tools.timeout_s, self.cancel
        )
        interrupted = not output.ok and self.cancel.is_set()
        return output, "interrupted by the user" if interrupted else ""

    def group_tools(self, group: str) -> list[str]:
        found = self.tools.registry.groups.get(group)
        return [t.name for t in found.tools] if found else []


def refusal(failed: Attempt) -> str:
    """What the model reads instead of a repeat of a call that failed: the earlier error."""
    return (
        f"error: not run again: {failed.tool} already failed with exactly these arguments in "
        f"this conversation ({failed.id}): {failed.error} Change the arguments, try another "
        "way, or tell the user; it runs again only if the user asks to try again."
    )
