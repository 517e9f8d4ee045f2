"""The tools' side of approvals: what a gated tool does when the model calls it, and how an
approved request runs.

The policy table, the ledger and the yes/no logic live in `memory.approvals`; this module
only joins them to the tools, which sit above that layer. `guarded(tool)` is the tool as
the model may call it: one the table marks stores its exact, validated parameters as an
approval for the conversation that asked and tells the model to ask the user. `executor`
is what the state path calls on a yes: it runs the stored parameters through the tool
itself, never parameters the model generates again.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from bot.tools.base import Tool, ToolContext, ToolOutput
from memory.approvals import Executor, needs_approval, params_text
from memory.db import NotFoundError
from memory.rows import ApprovalRow

if TYPE_CHECKING:
    from bot.tools.registry import ToolRegistry
    from config import Settings
    from models.base import Embedder


def guarded(tool: Tool) -> Tool:
    """`tool` as the model may call it: asking first when the policy table says so."""
    if not needs_approval(tool.name):
        return tool
    return replace(tool, handler=functools.partial(_ask, tool))


async def _ask(tool: Tool, args: BaseModel, ctx: ToolContext) -> ToolOutput:
    if ctx.store is None:
        return ToolOutput(f"error: no memory store is open, so {tool.name} cannot ask", ok=False)
    if not ctx.session_id:
        return ToolOutput(f"error: {tool.name} needs a conversation to ask in", ok=False)
    # An argument model may say what the call would touch ("note-3 ('old gate code')"), so
    # the user hears what they approve, and a call on something missing is refused now.
    preview: Callable[[Any], str] | None = getattr(args, "preview", None)
    try:
        seen = preview(ctx.store) if preview is not None else ""
    except (NotFoundError, ValueError) as exc:
        return ToolOutput(f"error: {exc}; nothing to ask the user about", ok=False)
    params = args.model_dump()
    ttl = ctx.settings.tools.approval_ttl_s
    approval_id = ctx.store.approvals.request(tool.name, params, ctx.session_id, ttl_s=ttl)
    about = f" ({seen})" if seen else ""
    return ToolOutput(
        f"Approval needed: {tool.name} {params_text(params)}{about}. Nothing was done yet. "
        f"Tell the user exactly what will happen and ask them to confirm; approval "
        f"{approval_id} expires in {ttl} seconds.",
        data={"approval_id": approval_id, "tool": tool.name, "params": params},
    )


def executor(
    registry: ToolRegistry,
    settings: Settings,
    store: Any,
    embedder: Callable[[], Embedder | None] = lambda: None,
) -> Executor:
    """Runs an approved request: the stored tool with the stored parameters, bounded by
    tools.timeout_s, in the conversation that asked."""

    def execute(approval: ApprovalRow) -> tuple[bool, str]:
        tool = registry.get(approval.tool)
        if tool is None:
            return False, f"there is no tool {approval.tool}"
        ctx = ToolContext(
            settings=settings,
            store=store,
            embedder=embedder() if tool.needs_embedder else None,
            session_id=approval.requester,
        )
        try:
            out = run_to_end(tool.run(approval.params, ctx), settings.tools.timeout_s)
        except TimeoutError:
            return False, f"{tool.name} took longer than {settings.tools.timeout_s:g} s"
        return out.ok, out.content

    return execute


def run_to_end(coro: Coroutine[Any, Any, ToolOutput], timeout_s: float) -> ToolOutput:
    """Run a tool call from synchronous code, even code a running event loop called (the
    state path runs inside the session's turn): then it gets its own loop in a thread."""

    async def bounded() -> ToolOutput:
        return await asyncio.wait_for(coro, timeout_s)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(bounded())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, bounded()).result()
