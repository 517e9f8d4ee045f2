"""The tools' side of approvals: what a gated tool does when the model calls it, and how an
approved request runs.

The policy table, the ledger and the yes/no logic live in `memory.approvals`; this module
only joins them to the tools, which sit above that layer. `guarded(tool)` is the tool as
the model may call it: one the table marks stores its exact, validated parameters as an
approval for the conversation that asked and tells the model to ask the user, unless the
user allowed it for this session (`ToolEnv.allowed`). `approved_runner` is what the
turn's chain of answerers calls on a yes: it runs the stored parameters through the tool
itself, never parameters the model generates again.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from bot.tools.base import Tool, ToolEnv, ToolOutput, run_bounded
from memory.approvals import WEB_TOOLS, needs_approval, params_text
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


async def _ask(tool: Tool, args: BaseModel, ctx: ToolEnv) -> ToolOutput:
    if tool.name in ctx.allowed:
        return await tool.handler(args, ctx)  # the user allowed it for this session
    if ctx.store is None:
        return ToolOutput(f"error: no memory store is open, so {tool.name} cannot ask", ok=False)
    if not ctx.session_id:
        return ToolOutput(f"error: {tool.name} needs a conversation to ask in", ok=False)
    # The argument model says what the call would touch in words ("delete the note 'old
    # gate code'"), kept with the approval so that every later mention names it the same
    # way; a call on something missing is refused now.
    target: Callable[[Any], str] | None = getattr(args, "approval_target", None)
    try:
        words = target(ctx.store) if target is not None else ""
    except (NotFoundError, ValueError) as exc:
        return ToolOutput(f"error: {exc}; nothing to ask the user about", ok=False)
    params = args.model_dump()
    ttl = ctx.settings.tools.approval_ttl_s
    approval_id = ctx.store.approvals.request(
        tool.name, params, ctx.session_id, ttl_s=ttl, target=words
    )
    about = f" to {words}" if words else ""
    # The web tools may be allowed for the rest of the session: offered in the same question,
    # so one yes can stand for every search after it.
    standing = (
        " Offer the standing yes in the same question, e.g. 'Shall I search the web for that? "
        "You can say yes, or yes and don't ask again.'"
        if tool.name in WEB_TOOLS
        else ""
    )
    approval = ctx.store.approvals.get(approval_id)
    return ToolOutput(
        f"Approval needed{about}: {tool.name} {params_text(params)}. Nothing was done yet. "
        f"Ask the user, in those words, whether to go ahead (say what it touches, not its "
        f"id); approval {approval_id} expires in {ttl} seconds.{standing}",
        data={
            "approval_id": approval_id,
            "tool": tool.name,
            "params": params,
            # Carried into the envelope: this result stops holding when the approval expires.
            "expires_at": approval.expires_at if approval is not None else None,
        },
    )


def approved_runner(
    registry: ToolRegistry,
    settings: Settings,
    store: Any,
    embedder: Callable[[], Embedder | None] = lambda: None,
) -> Callable[[ApprovalRow, asyncio.Event | None], Awaitable[ToolOutput]]:
    """Runs an approved request: the stored tool with the stored parameters, in the
    conversation that asked, bounded by tools.timeout_s and stopped by `cancel`."""

    async def run(approval: ApprovalRow, cancel: asyncio.Event | None) -> ToolOutput:
        tool = registry.get(approval.tool)
        if tool is None:
            return ToolOutput(f"error: there is no tool {approval.tool}", ok=False)
        ctx = ToolEnv(
            settings=settings,
            store=store,
            embedder=embedder() if tool.needs_embedder else None,
            session_id=approval.requester,
        )
        return await run_bounded(
            tool.run(approval.params, ctx), tool.name, settings.tools.timeout_s, cancel
        )

    return run
