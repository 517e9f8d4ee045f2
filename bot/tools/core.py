"""The recovery tools every session has: get_context and load_tool_group (seed 000's fallback).

get_context brings back anything left out of view by id, from the full-fidelity event log
(a cleared tool result, the rest of a previewed one, turns left out on overflow) or from the
typed tables (tasks, notes). load_tool_group loads another group of tools on demand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.tools.base import Tool, ToolEnv, ToolOutput
from context.provenance import withheld_count, withheld_placeholder

if TYPE_CHECKING:
    from memory.rows import Hit
    from memory.store import Store

# One page of a stored item; the assembler still previews anything over its lane budget.
PAGE_CHARS = 6000


class GetContextArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[str] = Field(
        default_factory=list,
        description='Ids to bring back, e.g. ["ev-12"], ["task-3"], ["note-7"]; with '
        'type="turns", first and last turn numbers.',
    )
    type: Literal["any", "turns", "tasks", "notes"] = Field(
        "any", description="What to fetch: items by id, turns of this chat, open tasks, notes."
    )
    query: str = Field("", description="Words to search memory for, when there are no ids.")
    offset: int = Field(0, ge=0, description="Character offset to continue a long result.")


class LoadToolGroupArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group: str = Field(min_length=1, description="The tool group to load.")


def _store(ctx: ToolEnv) -> Store:
    if ctx.store is None:
        raise RuntimeError("no memory store is open")
    store: Store = ctx.store
    return store


def _page(text: str, offset: int, item_id: str) -> str:
    page = text[offset : offset + PAGE_CHARS]
    end = offset + len(page)
    if end < len(text):
        page += (
            f'\n[{len(text) - end:,} more characters: get_context(ids=["{item_id}"], offset={end})]'
        )
    return page


def _by_id(store: Store, item_id: str, offset: int, sends_out: bool = False) -> str:
    key = item_id.strip()
    if key.startswith("ev-"):
        ev = store.events.get(key)
        if ev is None:
            return f"{key}: no such event"
        if sends_out and store.provenance.private_events([ev.id]):
            return withheld_placeholder(ev.id, "turn")
        head = f"{ev.id} ({ev.kind}{', ' + ev.name if ev.name else ''}, {ev.created_at[:19]}):"
        return head + "\n" + _page(ev.content, offset, ev.id)
    if key.startswith("task-"):
        task = store.tasks.get(key)
        if task is None:
            return f"{key}: no such task"
        due = task.due or "-"
        return f"{task.id} [{task.status}, waiting on {task.pending}, due {due}] {task.title}"
    if key.startswith("note-"):
        note = store.notes.get(key)
        if note is None:
            return f"{key}: no such note"
        if sends_out and note.private:
            return withheld_placeholder(note.id)
        # Kept for the record, but a correction replaced it: say so, or it reads as current.
        later = f"; superseded by {note.superseded_by}" if note.superseded_by else ""
        return f"{note.id} ({note.kind}{later}): {note.text}"
    if key.startswith("appr-"):
        appr = store.approvals.get(key)
        if appr is None:
            return f"{key}: no such approval"
        return (
            f"{appr.id} {appr.tool} {appr.params} status {appr.status}, expires {appr.expires_at}"
        )
    return f"{key}: unknown id (expected ev-N, task-N, note-N or appr-N)"


def _listing(store: Store, hits: list[Hit], line: Callable[[Hit], str], sends_out: bool) -> str:
    """One line per hit, private ones left out (and counted) when `sends_out`."""
    held = store.provenance.private_among(h.id for h in hits) if sends_out else set()
    lines = [line(h) for h in hits if h.id not in held]
    if held:
        lines.append(withheld_count(len(held)))
    return "\n".join(lines)


def _turns(store: Store, session_id: str, ids: list[str], sends_out: bool = False) -> str:
    try:
        numbers = [int(i) for i in ids] or [1]
    except ValueError:
        return 'error: with type="turns", ids are turn numbers, e.g. ["3", "5"]'
    first, last = min(numbers), max(numbers)
    lines = []
    found = store.events.find(session_id, kinds=["user", "assistant", "state_answer", "tool_call"])
    held = store.provenance.private_events(ev.id for ev in found) if sends_out else set()
    for ev in found:
        turn = ev.meta.get("turn")
        if isinstance(turn, int) and first <= turn <= last and ev.content.strip():
            who = {"user": "User", "tool_call": f"Call {ev.name}"}.get(ev.kind, "Annie")
            said = withheld_placeholder(ev.id, "turn") if ev.id in held else ev.content
            lines.append(f"[turn {turn}] {who}: {said}")
    return "\n".join(lines) or f"no turns {first}-{last} in this conversation"


async def get_context(args: GetContextArgs, ctx: ToolEnv) -> ToolOutput:
    store = _store(ctx)
    # While a tool that can send data out is loaded or allowed, private notes and the turns
    # they were said in are withheld here as everywhere else (`context.provenance`).
    out = ctx.sends_out
    if args.type == "turns":
        return ToolOutput(_turns(store, ctx.session_id, args.ids, out))
    if args.type == "tasks":
        rows = store.tasks.find()
        text = "\n".join(f"{t.id} [{t.status}, waiting on {t.pending}] {t.title}" for t in rows)
        return ToolOutput(text or "There are no unfinished tasks.")
    if args.ids:
        return ToolOutput("\n\n".join(_by_id(store, i, args.offset, out) for i in args.ids))
    if args.query:
        hits = store.notes.search(args.query, limit=5)
        if not hits:
            return ToolOutput(
                f"Nothing matched {args.query!r}. Try other words; "
                "this does not prove it was never said."
            )
        return ToolOutput(_listing(store, hits, lambda h: f"{h.id} ({h.kind}): {h.text}", out))
    if args.type == "notes":
        hits = store.notes.search("note", limit=10)
        listed = _listing(store, hits, lambda h: f"{h.id}: {h.text}", out)
        return ToolOutput(listed or "There are no notes.")
    return ToolOutput("error: give ids, a query, or a type (turns, tasks, notes)", ok=False)


async def load_tool_group(args: LoadToolGroupArgs, ctx: ToolEnv) -> ToolOutput:
    if ctx.load_group is None:
        return ToolOutput("error: tool groups cannot be loaded here", ok=False)
    text = ctx.load_group(args.group)
    return ToolOutput(text, ok=not text.startswith("error"))


def core_tools(catalog: str = "") -> list[Tool]:
    """get_context and load_tool_group; `catalog` lists the groups load_tool_group offers."""
    load_desc = "Load a group of tools so you can call them."
    if catalog:
        load_desc += " Groups:\n" + catalog
    return [
        Tool(
            "get_context",
            "Bring back something left out of view: a cleared tool result or earlier turn by id, "
            "the rest of a long result (offset), open tasks, or notes.",
            GetContextArgs,
            get_context,
        ),
        Tool("load_tool_group", load_desc, LoadToolGroupArgs, load_tool_group),
    ]
