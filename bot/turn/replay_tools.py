"""The world a replay stands in: recorded tools and the script of the recorded model.

`RecordedTool` keeps the real tool's name, group, schema and metadata and answers each run
from the recording; `RecordedReplies` is the `ScriptedLLM` script that emits each recorded
assistant message with its calls in the loaded model's own markup. Calls are mapped by order
(see `bot.turn.replay`): the parser gives a call a live id, the recording's id picks the result.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any

from pydantic import BaseModel, ConfigDict

from bot.tools.base import Tool, ToolEnv, ToolOutput
from bot.tools.registry import ToolRegistry
from compaction.summarize import INSTRUCTIONS
from models.base import ToolDialect
from models.toolcalls import write_call

RECORDED_GROUP = "recorded"


class RecordedResults:
    """The recorded results, and the recorded calls of the latest message still to run."""

    def __init__(self, results: dict[str, str]) -> None:
        self.results = results
        self._calls: deque[tuple[str, str]] = deque()

    def expect(self, calls: list[dict[str, Any]]) -> None:
        """The model just wrote these calls; calls of an earlier message that never ran go."""
        self._calls = deque((str(c["name"]), str(c.get("id", ""))) for c in calls)

    def take(self, name: str) -> ToolOutput:
        if not self._calls:
            return ToolOutput(f"error: the recording has no call of {name} here", ok=False)
        recorded, call_id = self._calls.popleft()
        if recorded != name or call_id not in self.results:
            return ToolOutput(
                f"error: the recording has no result for {name} ({call_id})", ok=False
            )
        content = self.results[call_id]
        return ToolOutput(content, ok=not content.startswith("error:"))


@dataclass
class RecordedTool(Tool):
    """A tool with the real one's schema and metadata whose run returns the recorded result."""

    recorded: RecordedResults | None = None

    async def run(self, arguments: dict[str, Any], ctx: ToolEnv) -> ToolOutput:
        assert self.recorded is not None
        return self.recorded.take(self.name)


class _AnyArguments(BaseModel):
    model_config = ConfigDict(extra="allow")


async def _never(args: Any, ctx: ToolEnv) -> ToolOutput:
    raise AssertionError("a recorded tool answers from the recording")


def recorded_registry(
    base: ToolRegistry, recorded: RecordedResults, names: Iterable[str]
) -> ToolRegistry:
    """`base` with every tool answered from the recording; tools it lacks join a group of
    their own. No recorded tool loads the embedder or sends a table: their results are text."""
    plain = {"needs_embedder": False, "produces_table": False, "recorded": recorded}
    tools: list[Tool] = [
        RecordedTool(**{**{f.name: getattr(t, f.name) for f in fields(Tool)}, **plain})
        for g in base.groups.values()
        for t in g.tools
    ]
    known = {t.name for t in tools}
    for name in dict.fromkeys(n for n in names if n not in known):
        tools.append(
            RecordedTool(
                name,
                "A tool of the recorded session.",
                _AnyArguments,
                _never,
                RECORDED_GROUP,
                recorded=recorded,
            )
        )
    return ToolRegistry(
        tools,
        descriptions={**base.descriptions, RECORDED_GROUP: "tools only the recording has"},
        default_groups=base.default_groups,
    )


class RecordedReplies:
    """The scripted model's script: the next recorded assistant message, calls in markup.

    A compaction summary prompt goes to `summary` when one is given (the session's model then
    writes tier-2 summaries too, as the shared model does live)."""

    def __init__(self, recorded: RecordedResults, summary: Callable[[str], str] | None) -> None:
        self.recorded = recorded
        self.summary = summary
        self.dialect: ToolDialect = "json"
        self.replies: deque[dict[str, Any]] = deque()

    def __call__(self, prompt: str) -> str:
        if self.summary is not None and INSTRUCTIONS in prompt:
            return self.summary(prompt)
        if not self.replies:
            return ""  # the turn asked for more rounds than were recorded
        rec = self.replies.popleft()
        calls = list(rec.get("tool_calls") or [])
        self.recorded.expect(calls)
        written = [write_call(c["name"], c.get("arguments", {}), self.dialect) for c in calls]
        return "\n".join([str(rec.get("text", "")), *written]).strip("\n")
