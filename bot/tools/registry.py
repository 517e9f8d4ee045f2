"""Tool groups, the compact catalog, and each session's set of loaded groups.

Only the core group is loaded at the start of a session (get_context, load_tool_group and the
memory tools); its schemas are part of the fixed prompt head. Other groups are listed in a
one-line-per-group catalog inside load_tool_group's own description, and load on demand: the
schemas of a group loaded mid-session are appended to the conversation as an item of the tools
lane (`schema_text`), after that call's result, so the prompt head never changes mid-session
and the model's prefix cache stays valid. That item is part of the active tool set, not a tool
result: compaction never clears it. Once lanes are held (`context.hold_lanes_above`) a group
loaded mid-session and not called for `context.unload_tool_groups_after` turns is unloaded, and
so is the least recently used one while the tools lane is over its budget (`hold_tools_lane`);
load_tool_group brings it back. The head's groups are never unloaded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.tools.base import Tool

if TYPE_CHECKING:
    from context.assembler import Assembler
    from context.conversation import Conversation

GROUP_DESCRIPTIONS = {
    "core": "recover context left out of view, load more tool groups",
    "memory": "notes, memory search, tasks and reminders",
    "web": "search the web and read web pages",
    "utility": "think step by step, tell the time, show a table on the page",
    "reminders": "timers, snooze, done and cancel for reminders",
}
DEFAULT_GROUPS = ("core", "memory")

# Validation keywords the model does not need to see: arguments are validated on receipt.
_DROP = {"title", "additionalProperties", "minLength", "maxLength", "minItems", "maxItems"}
_DROP |= {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern"}


def compact_schema(node: Any) -> Any:
    """A JSON schema without titles, bounds or `anyOf [X, null]` noise (about half the tokens)."""
    if isinstance(node, list):
        return [compact_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP or (key == "default" and value is None):
            continue
        if key == "anyOf" and isinstance(value, list):
            kept = [v for v in value if v != {"type": "null"}]
            if len(kept) == 1 and isinstance(kept[0], dict):
                out.update(compact_schema(kept[0]))
                continue
            value = kept
        if key == "properties" and isinstance(value, dict):
            # Property names are data, not keywords: only their schemas are compacted.
            out[key] = {name: compact_schema(spec) for name, spec in value.items()}
        else:
            out[key] = compact_schema(value)
    return out


def tool_schema(tool: Tool) -> dict[str, Any]:
    """The schema the model sees for `tool`."""
    full = tool.schema()
    fn = dict(full["function"])
    fn["parameters"] = compact_schema(fn["parameters"])
    return {"type": "function", "function": fn}


@dataclass
class ToolGroup:
    name: str
    description: str
    tools: list[Tool] = field(default_factory=list)


class ToolRegistry:
    """Every tool Annie has, by group."""

    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        descriptions: dict[str, str] | None = None,
        default_groups: Sequence[str] = DEFAULT_GROUPS,
    ) -> None:
        self.descriptions = dict(GROUP_DESCRIPTIONS, **(descriptions or {}))
        self.groups: dict[str, ToolGroup] = {}
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
            group = self.groups.setdefault(
                tool.group, ToolGroup(tool.group, self.descriptions.get(tool.group, tool.group))
            )
            group.tools.append(tool)
        self.default_groups = [g for g in default_groups if g in self.groups]

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def protects(self) -> dict[str, str]:
        """Tool name -> the kind of record its calls make that compaction must keep."""
        return {name: t.protects for name, t in self._tools.items() if t.protects}

    def schemas(self, groups: Iterable[str]) -> list[dict[str, Any]]:
        return [tool_schema(t) for g in groups if g in self.groups for t in self.groups[g].tools]

    def catalog(self, exclude: Iterable[str] = ()) -> str:
        """One line per group: name, what it is for, and its tools."""
        skip = set(exclude)
        return "\n".join(
            f"- {g.name}: {g.description} ({', '.join(t.name for t in g.tools)})"
            for g in self.groups.values()
            if g.name not in skip
        )


class ActiveTools:
    """One session's loaded groups; only tools of loaded groups can be called."""

    def __init__(self, registry: ToolRegistry, groups: Sequence[str] | None = None) -> None:
        self.registry = registry
        self.loaded: list[str] = list(groups if groups is not None else registry.default_groups)
        # The groups whose schemas are in the fixed prompt head.
        self.prefix_groups = list(self.loaded)
        # The current turn (`begin_turn`), and the turn each group was last loaded or called.
        self.turn = 0
        self.last_used: dict[str, int] = {}

    @property
    def available(self) -> list[str]:
        return list(self.registry.groups)

    def sends_out(self, allowed: Iterable[str] = ()) -> bool:
        """Whether a tool that can send data off the machine (`Tool.outside`) is loaded, or
        allowed to run without asking (private notes stay out of such a call's prompt)."""
        groups = [self.registry.groups[g] for g in self.loaded if g in self.registry.groups]
        if any(t.outside for group in groups for t in group.tools):
            return True
        return any((tool := self.registry.get(n)) is not None and tool.outside for n in allowed)

    def prefix_schemas(self) -> list[dict[str, Any]]:
        return self.registry.schemas(self.prefix_groups)

    def callable(self, name: str) -> Tool | None:
        tool = self.registry.get(name)
        if tool is None or tool.group not in self.loaded:
            return None
        self.last_used[tool.group] = self.turn
        return tool

    def begin_turn(self, turn: int) -> None:
        self.turn = turn

    def unloadable(self) -> list[str]:
        """Groups loaded mid-session, least recently used first (the head's stay loaded)."""
        mine = [g for g in self.loaded if g not in self.prefix_groups]
        return sorted(mine, key=lambda g: self.last_used.get(g, 0))

    def idle(self, turns: int) -> list[str]:
        """Groups loaded mid-session and neither loaded nor called for `turns` turns."""
        return [g for g in self.unloadable() if self.turn - self.last_used.get(g, 0) >= turns]

    def unload(self, group: str) -> None:
        if group in self.loaded and group not in self.prefix_groups:
            self.loaded.remove(group)

    def require(self, name: str) -> Tool:
        """The tool a caller requires (`tool_choice`), its group loaded if it was not."""
        tool = self.registry.get(name)
        if tool is None:
            raise ValueError(f"tool_choice names no tool: {name!r}")
        if tool.group not in self.loaded:
            self.load(tool.group)
        return tool

    def load(self, group: str) -> str:
        """Load a group; the text is the load_tool_group result (the schemas follow it)."""
        found = self.registry.groups.get(group)
        if found is None:
            known = ", ".join(self.registry.groups)
            return f"error: no tool group {group!r}; the groups are: {known}"
        names = ", ".join(t.name for t in found.tools)
        self.last_used[group] = self.turn
        if group in self.loaded:
            return f"The {group} tools are already loaded: {names}"
        self.loaded.append(group)
        return f"Loaded the {group} tools ({names}); their schemas follow. You can call them now."

    def schema_text(self, group: str) -> str:
        """A loaded group's schemas as the tools lane shows them: a label, one JSON per tool."""
        found = self.registry.groups.get(group)
        tools = found.tools if found is not None else []
        lines = [f"[Tools of the {group} group, loaded for this session; not said by the user]"]
        lines += [json.dumps(tool_schema(t)["function"], ensure_ascii=False) for t in tools]
        return "\n".join(lines)


def hold_tools_lane(active: ActiveTools, assembler: Assembler, conv: Conversation) -> list[str]:
    """At a turn's start, once lanes are held: unload groups unused for
    `context.unload_tool_groups_after` turns, then the least recently used while the tools
    lane is over its budget (never one used this turn). Returns the groups unloaded."""
    active.begin_turn(conv.turn)
    if not assembler.holding(conv):
        return []
    after = assembler.settings.context.unload_tool_groups_after
    out: list[str] = []
    # A group whose schemas are not in view (loaded with the session, not by load_tool_group)
    # costs the lane nothing, so it stays loaded.
    for group in active.idle(after):
        if assembler.unload_tool_group(conv, group, f"not used for {after} turns"):
            active.unload(group)
            out.append(group)
    for group in active.unloadable():
        if not assembler.tools_over_budget(conv) or active.last_used.get(group, 0) >= conv.turn:
            break
        if assembler.unload_tool_group(conv, group, "least recently used; the lane is full"):
            active.unload(group)
            out.append(group)
    return out


def default_registry() -> ToolRegistry:
    """Every shipped tool: core, memory, web and utility."""
    from bot.tools.core import core_tools
    from bot.tools.memory_tools import memory_tools
    from bot.tools.reminder_tools import reminder_tools
    from bot.tools.utility import utility_tools
    from bot.tools.web import web_tools

    others = [*memory_tools(), *web_tools(), *utility_tools(), *reminder_tools()]
    catalog = ToolRegistry(others).catalog(exclude=DEFAULT_GROUPS)
    return ToolRegistry([*core_tools(catalog), *others])
