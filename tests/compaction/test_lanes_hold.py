"""Lanes that hold through whole sessions: the tools lane unloads idle groups, the history lane
folds in idle time long before the tier-2 threshold, and first calls stay small.

Real runtime, session loop and compactor on a real SQLite file; the scripted model (real
tokenizer and template) speaks the recorded words and writes the summaries.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import pytest

from bot.runtime import Runtime
from bot.turn.events import ToolResultEvent
from config import load_settings
from memory.store import Store
from models import Tokenizer
from models.fakes import ScriptedLLM
from testkit.sim import simulate, simulator
from testkit.trace import generate
from tests.bot.conftest import SHORT_PROMPT, collect, small_registry

IDLE_TURNS = 2
WINDOW = 32768


def call(name: str, **arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


async def test_a_tool_group_unused_for_n_turns_is_unloaded_and_reloads_when_called(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    replies: deque[str] = deque()
    llm = ScriptedLLM(
        tokenizer, lambda prompt: replies.popleft() if replies else "Done.", n_ctx=WINDOW
    )
    settings = load_settings(
        context={
            "window": WINDOW,
            "reserve_output": 256,
            "hold_lanes_above": 0,
            "unload_tool_groups_after": IDLE_TURNS,
            "warm_up": False,
        },
        tools={"timeout_s": 5.0},
        compaction={"tier3_summary_s": 0.5},
    )
    runtime = Runtime(
        settings,
        llm=llm,
        store=Store(tmp_path / "annie.db"),
        system_prompt=SHORT_PROMPT,
        registry=small_registry(),
    )
    session = runtime.open_session()

    replies.extend([call("load_tool_group", group="utility"), call("get_time"), "It is noon."])
    await collect(session, "Use your utility tools on this one, please.")
    lane = session.conv.get("tools-utility")
    assert lane is not None and not lane.cleared and "utility" in session.tools.loaded
    schema = next(line for line in lane.content.splitlines() if '"name": "get_time"' in line)

    # One idle turn: still loaded. The second: unloaded before that turn's first call.
    await collect(session, "Thanks. Tell me a fun fact.")
    assert "utility" in session.tools.loaded and schema in llm.prompts[-1]
    await collect(session, "And another one.")
    assert "utility" not in session.tools.loaded
    assert lane.cleared and not lane.pinned and schema not in llm.prompts[-1]
    assert 'load_tool_group(group="utility")' in llm.prompts[-1]
    assert session.tools.prefix_groups == ["core", "memory"]  # the head never changes
    # The manifest of that call names the lane and why the schemas left.
    logged = session.store.events.find(session.id, kinds=["manifest"])
    manifest = json.loads(logged[-1].content)
    why = [o for o in manifest["omissions"] if "'utility' unloaded" in o["reason"]]
    assert why and why[0]["lane"] == "tools"
    assert f"not used for {IDLE_TURNS} turns" in why[0]["reason"]
    assert why[0]["recover_with"] == {"name": "load_tool_group", "arguments": {"group": "utility"}}
    entry = next(e for e in manifest["admitted"] if e["source_id"] == "tools-utility")
    assert entry["lane"] == "tools" and "unloaded" in entry["reason"]

    # Called again: the error names the group, the model loads it, and the tool runs with its
    # schemas back in view (a new item, appended, so every earlier token stays cached).
    replies.extend(
        [
            call("get_time"),
            call("load_tool_group", group="utility"),
            call("get_time"),
            "It is noon again.",
        ]
    )
    events = await collect(session, "Same again with your tools, please.")
    results = [(e.name, e.ok) for e in events if isinstance(e, ToolResultEvent)]
    assert results == [("get_time", False), ("load_tool_group", True), ("get_time", True)]
    back = [i for i in session.conv.items if i.kind == "tools" and not i.cleared]
    assert len(back) == 1 and back[0] is not lane and back[0].pinned
    assert schema in back[0].content and schema in llm.prompts[-1]
    assert "utility" in session.tools.loaded
    total, rendered = session.ledger.verify(session.conv)
    assert total == rendered
    await runtime.close()


@pytest.mark.slow
async def test_a_long_session_keeps_first_calls_small_and_folds_history_in_idle_time(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    window = WINDOW
    settings = load_settings(context={"window": window})
    store = Store(tmp_path / "annie.db")
    records, planted = generate(150)
    player = simulator(records, settings, tokenizer=tokenizer, store=store)
    result = await simulate(player)

    firsts = sorted(c.prompt_tokens for c in result.ledger.calls if c.label == "round 0")
    assert len(firsts) == 150
    assert result.overflows == 0 and result.trimmed == 0
    # First calls stay bounded once the session is long: the prompt never nears the window.
    assert firsts[int(0.95 * (len(firsts) - 1))] <= 12_000
    assert firsts[-1] <= 12_000
    # The raw history was folded behind the checkpoint in idle time, far below 80%.
    folds = [e for e in result.events if e.tier == 2 and "past its lane budget" in e.detail]
    assert folds
    assert all(e.tokens_before < 0.5 * window and "forced" not in e.detail for e in folds)
    assert all(e.tokens_after < e.tokens_before for e in folds)
    # The history lane's tool output was cleared by its own hold, never by the 65% threshold.
    tier1 = [e for e in result.events if e.tier == 1]
    assert tier1 and all("holding the history lane" in e.detail for e in tier1)
    # Nothing planted was lost: each fact is in the final context or the saved checkpoint.
    final = result.prompt()
    saved = store.checkpoints.latest(result.session_id)
    assert saved is not None
    saved_text = json.dumps(saved.data, ensure_ascii=False)
    assert [f.needle for f in planted if f.needle not in final and f.needle not in saved_text] == []
    store.close()
