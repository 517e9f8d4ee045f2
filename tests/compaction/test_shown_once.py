"""Each protected entry is shown once in a checkpoint, and comes back when its carrier goes.

A commitment that a live task line of the same checkpoint carries (the task made by the call
the commitment was read from) is shown on that line with when it was made and falls due, not
again under Commitments; an id a live line names is not listed again; a piece of a date-time
is not an id at all. A live session (real runtime, turn loop, compaction, tools and SQLite
file; the scripted model on the real tokenizer and template) shows the task once after the
first compaction, and after the task is done the next checkpoint shows the commitment under
Commitments again with its times. The guard finds every protected entry in both prompts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bot.runtime import Runtime
from bot.tools.memory_tools import memory_tools
from bot.tools.registry import ToolRegistry
from bot.turn.session import Session
from compaction.attempts import shown_time
from compaction.checkpoint import Checkpoint, carried_commitments, missing_items, render
from compaction.guard import missing, required_items
from compaction.protected import LogEntry, extract
from config import Settings
from memory.store import Store
from models import Tokenizer
from models.fakes import ScriptedLLM
from models.toolcalls import write_call
from testkit.sim import ScriptedReplies, compactor
from tests.bot.conftest import SHORT_PROMPT, collect

TITLE = "Pay the plumber"
DUE = "2026-12-05T09:00"
SAID = "2026-12-01T10:05:00+00:00"
FILLER = "We could book the jazz trio or the string quartet for the evening. " * 20


def test_a_commitment_on_its_live_task_line_is_shown_once_with_its_times() -> None:
    cp = Checkpoint(
        commitments=[TITLE, "Go to the pharmacy", "Sign the lease"],
        commitment_times={TITLE: {"said": SAID, "due": DUE}, "Go to the pharmacy": {"said": SAID}},
        pending_tasks=[f"task-4 {TITLE} (waiting on user)"],
        blocked_tasks=["task-5 Sign the lease (blocked)"],
        ids=["QX-7731", "task-4", "task-5"],
    )
    text = render(cp)
    assert carried_commitments(cp) == {
        TITLE: f"task-4 {TITLE} (waiting on user)",
        "Sign the lease": "task-5 Sign the lease (blocked)",
    }
    assert text.count(TITLE) == 1 and text.count("Sign the lease") == 1
    assert (
        f"- task-4 {TITLE} (waiting on user): said 2026-12-01 10:05 UTC, due 2026-12-05 09:00"
        in text
    )
    assert "- Go to the pharmacy (at 10:05 UTC)" in text  # no live line carries it
    assert "Ids referenced: QX-7731\n" in text + "\n"  # the tasks' lines name their ids
    assert missing_items(text, cp.protected_items()) == []

    # The task is done: the next checkpoint's live lines no longer carry it, so it is back.
    cp.pending_tasks = []
    text = render(cp)
    assert text.count(TITLE) == 1 and "Pending tasks" not in text
    assert f"- {TITLE} (at 10:05 UTC; due 2026-12-05 09:00)" in text
    assert "Ids referenced: QX-7731, task-4\n" in text + "\n"
    assert missing_items(text, cp.protected_items()) == []


def test_a_date_time_is_not_an_id_and_its_due_time_stays_with_the_commitment() -> None:
    reminder = {"text": "Go to the library", "due": "2026-09-01T23:00"}
    entries = [
        LogEntry("ev-1", "user", "Remind me at 2026-09-01T23:00 about booking QX-7731."),
        LogEntry("ev-2", "tool_call", "", "set_reminder", reminder, "c1", at=SAID),
        LogEntry("ev-3", "tool_result", "saved", "set_reminder", {}, "c1", at=SAID),
    ]
    cp = extract(entries, {"set_reminder": "reminder"})
    assert cp.ids == ["QX-7731"]
    assert cp.commitment_times["Go to the library"]["due"] == "2026-09-01T23:00"
    # A checkpoint stored with such pieces among its ids loads without them.
    stored = {**cp.to_json(), "ids": ["2026-09-01T23", "QX-7731", "2026-09-02T0900Z"]}
    assert Checkpoint.from_json(stored).ids == ["QX-7731"]


def open_runtime(
    settings: Settings, tokenizer: Tokenizer, tmp_path: Path
) -> tuple[Runtime, ScriptedLLM, ScriptedReplies]:
    script = ScriptedReplies(FILLER)
    llm = ScriptedLLM(tokenizer, script, n_ctx=settings.context.window)
    tools = [t for t in memory_tools() if t.name in ("create_task", "complete_task")]
    registry = ToolRegistry(tools, default_groups=("memory",))
    store = Store(tmp_path / "annie.db")
    runtime = Runtime(settings, llm=llm, store=store, system_prompt=SHORT_PROMPT, registry=registry)
    return runtime, llm, script


async def turn(session: Session, text: str) -> None:
    await collect(session, text)
    await session.wait_idle()


async def compact_past(session: Session, gone: Callable[[], bool]) -> None:
    for i in range(30):
        if gone():
            return
        await turn(session, f"Give me music idea number {i} for the party.")
    raise AssertionError("tier 2 never summarized the early turns")


async def next_prompt(session: Session, llm: ScriptedLLM) -> str:
    """The prompt of the next turn's first call: what the model reads after the compaction."""
    asked = len(llm.prompts)
    await turn(session, "Give me one more music idea for the party.")
    return llm.prompts[asked]


def checkpoint_text(session: Session) -> str:
    [item] = [i for i in session.conv.items if i.kind == "summary" and i.meta.get("checkpoint")]
    return item.content


async def test_a_live_task_is_shown_once_and_its_commitment_returns_when_done(
    settings: Settings, tokenizer: Tokenizer, tmp_path: Path
) -> None:
    runtime, llm, script = open_runtime(settings, tokenizer, tmp_path)
    dialect = llm.tool_dialect
    session = runtime.open_session()
    made = {"title": TITLE, "pending": "user", "due": DUE}
    script.replies += [write_call("create_task", made, dialect), "Added."]
    await turn(session, "Add a task to pay the plumber by Friday morning.")
    [task] = runtime.store.tasks.pending()
    call = runtime.store.events.find(session.id, kinds=["tool_result"])[-1]
    said_day, _, said_minute = shown_time(call.created_at).partition(" ")

    await compact_past(session, lambda: all(i.id != call.id for i in session.conv.items))
    text = checkpoint_text(session)
    # Once among the entries; the calls tried list the call itself, with its exact arguments.
    entries, _, tried = text.partition("\nTool calls tried")
    assert entries.count(TITLE) == 1 and "Commitments" not in text
    assert f'create_task {{"title": "{TITLE}", "pending": "user", "due": "{DUE}"}}' in tried
    line = rf"^- {task.id} {TITLE} \(waiting on user\): said {said_day} {said_minute}, "
    assert re.search(line + r"due 2026-12-05 09:00$", text, re.M)
    assert not re.search(rf"^Ids referenced:.*\b{task.id}\b", text, re.M)
    prompt = await next_prompt(session, llm)
    assert text in prompt
    assert missing(prompt, required_items(compactor(session).checkpoint, runtime.store)) == []

    # The task is done: the next checkpoint carries the commitment under its own heading.
    script.replies += [write_call("complete_task", {"task_id": task.id}, dialect), "Done."]
    await turn(session, "Please complete the plumber task for me.")  # the model's call
    assert runtime.store.tasks.pending() == []
    done = runtime.store.events.find(session.id, kinds=["tool_result"])[-1]
    await compact_past(session, lambda: all(i.id != done.id for i in session.conv.items))
    text = checkpoint_text(session)
    assert f"Commitments (made on {said_day}):" in text
    assert re.search(rf"^- {TITLE} \((?:at {said_minute}; )?due 2026-12-05 09:00\)$", text, re.M)
    assert "Pending tasks" not in text
    assert re.search(rf"^Ids referenced:.*\b{task.id}\b", text, re.M)
    saved = runtime.store.checkpoints.latest(session.id)
    assert saved is not None and TITLE in saved.data["commitments"]
    prompt = await next_prompt(session, llm)
    assert text in prompt
    assert missing(prompt, required_items(compactor(session).checkpoint, runtime.store)) == []
    await session.close()
    await runtime.close()
