"""A tool group loaded mid-session stays usable after compaction clears the call that loaded it.

The group's schemas are an item of the tools lane, appended after the load call's result (so
the prompt's prefix stays cached), pinned, and never a tool result: tier 1 clears the load
result and tier 2 summarizes its turn, and the schemas are still in the prompt and the tool
still runs. Real runtime, session loop and compactor on a real SQLite file, with the scripted
model on the real tokenizer.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

from bot.tools.registry import ActiveTools, default_registry
from bot.turn.events import ToolResultEvent
from config import Settings
from context.conversation import Conversation, Item
from context.ledger import Ledger
from models import Tokenizer, load_tokenizer
from models.base import ToolCall
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime
from tests.context.helpers import prefix


def call(name: str, **arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


async def test_a_loaded_groups_schemas_survive_compaction_and_the_tool_still_runs(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    replies: deque[str] = deque()
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Done.")
    runtime = make_runtime(llm, tmp_path, window=4096, reserve=512)
    for n in range(40):
        runtime.store.tasks.add(f"Errand number {n}: pick up the parcel at counter {n}")
    session = runtime.open_session()

    replies.extend([call("load_tool_group", group="utility"), call("get_time"), "It is noon."])
    events = await collect(session, "Use your utility tools on this one, please.")
    assert [e.ok for e in events if isinstance(e, ToolResultEvent)] == [True, True]
    load_result = next(i for i in session.conv.items if i.name == "load_tool_group")
    lane = session.conv.get("tools-utility")
    assert lane is not None and lane.pinned and lane.lane == "tools"
    assert session.conv.items.index(lane) > session.conv.items.index(load_result)
    # The exact schema line: the assistant's call markup also names the tool, so the test looks
    # for the schema itself, description and parameters included.
    schema = next(line for line in lane.content.splitlines() if '"name": "get_time"' in line)
    assert (
        '"parameters"' in schema
        and schema not in session.ledger.prefix_cost(session.conv.prefix).text
    )
    assert session.tools.prefix_groups == ["core", "memory"]  # the head never changed

    # Long tool results until tier 1 clears the oldest ones, the load result among them.
    for _ in range(12):
        replies.extend([call("get_context", type="tasks"), "Those are your errands."])
        await collect(session, "Draft a note for the courier about the parcels.")
        await session.wait_idle()
        if load_result.cleared:
            break
    assert load_result.cleared and any(c.tier == 1 for c in session.compactions)
    prompt = session.ledger.prompt(session.conv)
    assert schema in prompt  # the schemas are still in view
    assert (
        session.ledger.usage(session.conv).by_lane["tools"]
        > session.ledger.prefix_cost(session.conv.prefix).tool_schemas
    )

    # A call that would not fit forces tier 2 too: the turns that loaded the group are
    # summarized away, and the pinned schemas stay after the checkpoint.
    forced = await session.hooks.before_call(
        session.conv, session.ledger, 2 * session.ledger.window
    )
    assert any(e.tier == 2 for e in forced)
    assert session.conv.get(load_result.id) is None and session.conv.get("tools-utility") is lane
    assert schema in session.ledger.prompt(session.conv)
    total, rendered = session.ledger.verify(session.conv)
    assert total == rendered  # the new lane is counted exactly, as the template renders it

    # The tool is still callable, with its schema in the prompt the model answers from.
    replies.extend([call("get_time", timezone="Europe/Paris"), "It is noon in Paris."])
    events = await collect(session, "Same again for Europe/Paris, please.")
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [(e.name, e.ok) for e in results] == [("get_time", True)]
    assert schema in llm.prompts[-1]
    await runtime.close()


def test_the_tools_lane_after_a_tool_result_is_counted_exactly_by_the_strict_template(
    qwen35_settings: Settings,
) -> None:
    # Qwen3.5 groups tool results into one user turn and refuses odd message lists; a tools
    # item after the load call's result renders, and the ledger's count matches the render.
    ledger = Ledger(load_tokenizer(qwen35_settings), window=200_000)
    conv = Conversation("s", prefix())
    call = ToolCall(id="c1", name="load_tool_group", arguments={"group": "utility"})
    conv.append(Item("ev-1", "user", "user", "Use the utility tools.", turn=1))
    conv.append(Item("ev-2", "tool_call", "assistant", "", 1, tool_calls=[call]))
    conv.items[-1].calls_in_content = False
    conv.append(Item("ev-3", "tool_result", "tool", "Loaded.", 1, call_id="c1"))
    text = ActiveTools(default_registry()).schema_text("utility")
    conv.append(Item("tools-utility", "tools", "user", text, 1, lane="tools", pinned=True))
    conv.append(Item("ev-4", "assistant", "assistant", "Ready.", turn=1))
    total, rendered = ledger.verify(conv)
    assert total == rendered and ledger.usage(conv).by_lane["tools"] > 0
