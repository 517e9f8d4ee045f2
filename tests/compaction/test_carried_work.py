"""After a compaction the session still knows what was tried and failed, and does not repeat it.

A live session (real runtime, turn loop, compaction and SQLite file; the scripted model on the
real tokenizer and template) books a table with a real tool that fails for one time slot. Long
answers then push the conversation past the tier-2 threshold, so the failed call's turn is
summarized away. The next prompt carries the failure (tool, exact arguments, error) in the
checkpoint; a model that calls the same thing again gets the earlier error back and the tool is
not run; a different time runs; the user's "try again" runs the same call once more. The plan,
the blocker, the blocked task and the task's times survive too, and the next briefing carries
the failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from bot.runtime import Runtime
from bot.tools.base import Tool, ToolEnv, ToolOutput
from bot.tools.memory_tools import memory_tools
from bot.tools.registry import ToolRegistry
from bot.turn.events import ToolResultEvent
from bot.turn.session import Session
from compaction.attempts import shown_time
from compaction.briefing import build_briefing
from config import Settings
from memory.store import Store
from models import Tokenizer
from models.fakes import ScriptedLLM
from models.toolcalls import write_call
from testkit.sim import ScriptedReplies
from tests.bot.conftest import SHORT_PROMPT, collect

FULL = {"restaurant": "Nopa", "time": "19:30"}
FREE = {"restaurant": "Nopa", "time": "20:30"}
ERROR = "error: Nopa has no table free at 19:30 tonight"
FAILED_LINE = 'book_table {"restaurant": "Nopa", "time": "19:30"} failed'
PLAN = "First book the table, then add a task to pay the plumber."
BLOCKER = "I'm waiting for the landlord's reply about the deposit."
TASK = {"title": "Pay the plumber", "due": "2026-12-05T09:00"}
FILLER = "We could book the jazz trio or the string quartet for the evening. " * 20


class BookArgs(BaseModel):
    restaurant: str
    time: str


def booking_tool(calls: list[dict[str, str]]) -> Tool:
    """A real tool that books a table; 19:30 is always full. Every run is recorded."""

    async def book(args: BookArgs, ctx: ToolEnv) -> ToolOutput:
        calls.append(args.model_dump())
        if args.time == "19:30":
            return ToolOutput(ERROR, ok=False)
        return ToolOutput(f"booked {args.restaurant} at {args.time}, reference NP-{len(calls)}")

    return Tool("book_table", "Book a restaurant table.", BookArgs, book, group="errands")


def open_runtime(
    settings: Settings, tokenizer: Tokenizer, tmp_path: Path, calls: list[dict[str, str]]
) -> tuple[Runtime, ScriptedLLM, ScriptedReplies]:
    script = ScriptedReplies(FILLER)
    llm = ScriptedLLM(tokenizer, script, n_ctx=settings.context.window)
    create = [t for t in memory_tools() if t.name == "create_task"]
    registry = ToolRegistry([booking_tool(calls), *create], default_groups=("errands", "memory"))
    store = Store(tmp_path / "annie.db")
    runtime = Runtime(settings, llm=llm, store=store, system_prompt=SHORT_PROMPT, registry=registry)
    return runtime, llm, script


async def turn(session: Session, text: str) -> list[ToolResultEvent]:
    events = await collect(session, text)
    await session.wait_idle()
    return [e for e in events if isinstance(e, ToolResultEvent)]


async def compact_past(session: Session, gone: Callable[[], bool]) -> None:
    """Long exchanges until a tier-2 compaction has moved `gone`'s item out of the context."""
    for i in range(30):
        if gone():
            return
        await turn(session, f"Give me music idea number {i} for the party.")
    raise AssertionError("tier 2 never summarized the early turns")


async def test_a_failed_call_is_carried_past_compaction_and_not_repeated(
    settings: Settings, tokenizer: Tokenizer, tmp_path: Path
) -> None:
    calls: list[dict[str, str]] = []
    runtime, llm, script = open_runtime(settings, tokenizer, tmp_path, calls)
    dialect = llm.tool_dialect
    blocked = runtime.store.tasks.add("Sign the lease", status="blocked")
    session = runtime.open_session()

    script.replies += [write_call("book_table", FULL, dialect), "Nopa is full at 19:30."]
    [result] = await turn(session, "Book a table at Nopa for 19:30 tonight.")
    assert not result.ok and calls == [FULL]
    failed = runtime.store.events.find(session.id, kinds=["tool_result"])[-1]
    assert failed.meta == {"ok": False, "turn": 1} and failed.content == ERROR

    script.replies += [write_call("create_task", TASK, dialect), "Added."]
    await turn(session, f"{PLAN} {BLOCKER}")
    task_call = runtime.store.events.find(session.id, kinds=["tool_call"])[-1]

    await compact_past(session, lambda: all(i.id != failed.id for i in session.conv.items))
    assert 2 in [e.tier for e in session.compactions]
    saved = runtime.store.checkpoints.latest(session.id)
    assert saved is not None and saved.data["failures"][0]["arguments"] == (
        '{"restaurant": "Nopa", "time": "19:30"}'
    )

    # The naive model calls the failed booking again: the tool is not run, the model is told.
    asked = len(llm.prompts)
    script.replies += [
        write_call("book_table", FULL, dialect),
        write_call("book_table", FREE, dialect),
        "Booked Nopa at 20:30.",
    ]
    refused, booked = await turn(session, "Please book Nopa for me.")
    first = llm.prompts[asked]
    assert f"{FAILED_LINE} ({failed.id}): {ERROR}" in first
    assert PLAN in first and BLOCKER in first
    assert f"{blocked} Sign the lease (blocked)" in first
    day, _, minute = shown_time(task_call.created_at).partition(" ")
    assert f"Commitments (made on {day}):" in first
    line = rf"^- Pay the plumber \((?:at {minute}; )?due 2026-12-05 09:00\)$"
    assert re.search(line, first, re.M)
    assert not refused.ok and "not run again" in refused.preview and failed.id in refused.preview
    assert booked.ok
    assert calls == [FULL, FREE]  # never the same failing call twice
    logged = runtime.store.events.find(session.id, kinds=["tool_result"])[-2]
    assert logged.meta["not_run"] == f"repeats the failed call {failed.id}"
    assert ERROR in llm.prompts[-1]  # the earlier error reached the model again

    # The user asks for the same thing again: it runs, once.
    script.replies += [write_call("book_table", FULL, dialect), "Still full, sorry."]
    [again] = await turn(session, "Try Nopa at 19:30 again, please.")
    assert not again.ok and calls == [FULL, FREE, FULL]
    script.replies += [write_call("book_table", FULL, dialect), "I won't try that again."]
    [repeat] = await turn(session, "Hmm, ok.")
    assert "not run again" in repeat.preview and calls == [FULL, FREE, FULL]

    # The next session is briefed on the failure with its exact arguments (at the 32k
    # window's briefing budget: at 4k the briefing has room for the last exchange only).
    await session.close()
    briefing = build_briefing(runtime.store, budget=750, count=session.ledger.count)
    assert f"Failed: {FAILED_LINE}" in briefing.text
    assert f"Plan: {PLAN}" in briefing.text and f"Blocked: {BLOCKER}" in briefing.text
    await runtime.close()
