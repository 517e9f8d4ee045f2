"""Across sessions: tier 3 on disconnect feeds the next briefing; a killed session loses nothing.

Both run the real runtime and session loop on a real SQLite file. The model is the scripted one
(real tokenizer and template) so a turn's timing can be controlled; the briefing and the event
log do not depend on what the model says.
"""

from __future__ import annotations

from pathlib import Path

from bot.commands.chat import context_table
from bot.runtime import Runtime
from compaction.briefing import build_briefing
from compaction.summarize import INSTRUCTIONS
from config import load_settings
from memory.store import Store
from models import Tokenizer
from models.fakes import ScriptedLLM
from testkit.sim import scripted_summary

from .crash_child import CORRECTION, LAST, TURNS, kill_mid_turn, scripted_runtime

ROOT = Path(__file__).resolve().parents[2]


async def test_disconnect_then_new_session_briefing_has_the_checkpoint(
    tokenizer: Tokenizer,
) -> None:
    runtime, llm = scripted_runtime(tokenizer)
    task_id = runtime.store.tasks.add("Book the jazz trio", pending="user")
    first = runtime.open_session()
    for text in [
        "Let's plan my sister's birthday party.",
        CORRECTION,
        "The venue booking reference is QX-7731.",
    ]:
        async for _ in first.handle_text(text):
            pass
        await first.wait_idle()
    events = await first.close()
    assert [e.tier for e in events] == [3]
    saved = runtime.store.checkpoints.latest(first.id)
    assert saved is not None and saved.tier == 3
    assert CORRECTION in saved.data["corrections"] and "QX-7731" in saved.data["ids"]
    assert saved.tail_event_ids and all(i.startswith("ev-") for i in saved.tail_event_ids)

    second = runtime.open_session()
    briefing = second.conv.prefix.briefing
    assert briefing.startswith("Last conversation (")
    assert CORRECTION in briefing
    assert "QX-7731" in briefing
    assert task_id in briefing and "Book the jazz trio" in briefing
    assert "Let's plan my sister's birthday party." in briefing  # the goal
    usage = second.usage()
    assert usage.fixed.memory_briefing + usage.fixed.notes <= second.settings.context.budget(
        "briefing"
    )
    # "What were we talking about?" reaches the model with the briefing in its prompt.
    async for _ in second.handle_text("What were we talking about?"):
        pass
    assert CORRECTION in llm.prompts[-1] and "QX-7731" in llm.prompts[-1]
    await runtime.close()


def test_kill_9_during_a_turn_loses_no_completed_turn(
    annie_home: Path, tokenizer: Tokenizer
) -> None:
    completed = len(TURNS)
    session_id, seen = kill_mid_turn(annie_home, completed)
    assert seen[-1] == "STREAMING" and f"DONE {completed}" in seen

    store = Store(annie_home / "annie.db")
    users = [e.content for e in store.events.find(session_id, kinds=["user"])]
    answers = [e.content for e in store.events.find(session_id, kinds=["assistant"])]
    assert users == [q for q, _ in TURNS] + [LAST]
    assert answers == [a for _, a in TURNS]
    cp = store.checkpoints.latest(session_id)
    assert cp is None or cp.tier != 3

    # Resume: the next session's briefing is rebuilt from the event log.
    resumed = build_briefing(store, budget=750, count=tokenizer.count)
    assert resumed.rebuilt_from_log and resumed.session_id == session_id
    assert "ended unexpectedly" in resumed.text
    assert CORRECTION in resumed.text and "QX-7731" in resumed.text
    assert TURNS[-1][1] in resumed.text  # the last completed exchange is in the recent tail
    assert f"Unanswered when it ended: {LAST}" in resumed.text
    store.close()


async def test_live_session_compacts_in_idle_time_and_keeps_current_state(
    tokenizer: Tokenizer,
) -> None:
    settings = load_settings(context={"window": 4096, "reserve_output": 512})
    answer = "We could book the jazz trio or the string quartet for the evening. " * 20

    def script(prompt: str) -> str:
        return scripted_summary(prompt) if INSTRUCTIONS in prompt else answer

    llm = ScriptedLLM(tokenizer, script, n_ctx=4096)
    runtime = Runtime(settings, llm=llm, store=Store(settings.db_path), tokenizer=tokenizer)
    task_id = runtime.store.tasks.add("Book the jazz trio", pending="user")
    session = runtime.open_session()
    trimmed = 0
    for i in range(12):
        async for _ in session.handle_text(f"Give me music idea number {i} for the party."):
            pass
        assert session.last_assembly is not None
        trimmed += len(session.last_assembly.trimmed)
        await session.wait_idle()
    tiers = [e.tier for e in session.compactions]
    assert 2 in tiers, tiers
    assert trimmed == 0  # compaction kept every call inside the window
    # The Work Index snapshot (added only when it changes) survives tier 2, and so does the task.
    assert any(item.kind == "state" for item in session.conv.items)
    prompt = session.ledger.prompt(session.conv)
    assert "Book the jazz trio" in prompt and task_id in prompt
    # The idle re-prefill went through the shared model, and the ledger has it per call.
    assert "reprefill" in [c.label for c in session.ledger.calls]
    logged = runtime.store.events.find(session.id, kinds=["compaction"])
    assert len(logged) == len(session.compactions)
    # The chat's /context lists the same events.
    table = context_table(session)
    assert "compaction events:" in table and table.count("  tier ") == len(session.compactions)
    await runtime.close()
