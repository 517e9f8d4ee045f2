"""The session loop's control flow, timed with the scripted model (each path also runs on the
real model in test_session_model.py): tool rounds, bounds, errors, cancellation, sessions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pydantic import BaseModel

from bot.tools.base import Tool, ToolEnv, ToolOutput
from bot.turn.events import (
    MODEL_FAILED,
    ErrorEvent,
    Event,
    TableEvent,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnDone,
)
from bot.turn.model_turn import NO_ANSWER
from models.base import Embedder, Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime


def call(name: str, **arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


async def test_tool_rounds_load_a_group_then_use_it(tokenizer: Tokenizer, tmp_path: Path) -> None:
    llm = ScriptedLLM(
        tokenizer,
        [
            "Let me look. " + call("load_tool_group", group="web"),
            call("web_search", query="tides in Brest"),
            "I need your OK before searching.",
        ],
    )
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    events = await collect(session, "Search the web for tides in Brest.")
    names = [e.name for e in events if isinstance(e, ToolCallEvent)]
    assert names == ["load_tool_group", "web_search"]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    # A web search leaves the box, so it waits for the user's yes: nothing ran yet.
    assert results[0].ok and "approval appr-1" in results[1].preview
    assert "Nothing was done yet" in results[1].preview
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Let me look. I need your OK before searching."
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.text == text
    # Each round's prompt extends the previous one: the cache is reused, never rebuilt.
    assert all(p.startswith(q) for q, p in zip(llm.prompts, llm.prompts[1:], strict=False))
    assert [c.full_reprefill for c in session.ledger.calls] == [True, False, False]
    assert session.tools.prefix_groups == ["core", "memory"]
    assert "web" in session.tools.loaded
    await runtime.close()


async def test_tool_rounds_are_bounded(tokenizer: Tokenizer, tmp_path: Path) -> None:
    llm = ScriptedLLM(tokenizer, lambda prompt: call("get_context", type="tasks"))
    runtime = make_runtime(llm, tmp_path, rounds=2)
    session = runtime.open_session()
    events = await collect(session, "Loop forever please.")
    assert sum(isinstance(e, ToolCallEvent) for e in events) == 2
    assert len(llm.prompts) == 3  # two tool rounds, then one round that must answer
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.text == NO_ANSWER
    await runtime.close()


async def test_bad_and_unreadable_calls_are_results_the_model_reads(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(
        tokenizer,
        [
            call("load_tool_group", group="utility"),
            call("render_table", columns=["a"], rows=[["1", "2"]]),
            "<tool_call>\n{not json}\n</tool_call>",
            call("no_such_tool"),
            call("render_table", title="Tides", columns=["day", "high"], rows=[["Mon", "6:42"]]),
            "It's on your screen.",
        ],
    )
    runtime = make_runtime(llm, tmp_path, rounds=5)
    session = runtime.open_session()
    events = await collect(session, "Show the tides as a table.")
    results = [e for e in events if isinstance(e, ToolResultEvent)][1:]
    assert not results[0].ok and "row 1 has 2 cells" in results[0].preview
    assert any(isinstance(e, ErrorEvent) and "not valid JSON" in e.message for e in events)
    assert not results[1].ok and "no tool 'no_such_tool' is loaded" in results[1].preview
    tables = [e for e in events if isinstance(e, TableEvent)]
    assert len(tables) == 1 and tables[0].rows == [["Mon", "6:42"]]
    assert next(e for e in events if isinstance(e, TurnDone)).text == "It's on your screen."
    errors = runtime.store.events.find(session.id, kinds=["tool_result"])
    assert sum(not e.meta["ok"] for e in errors) == 3
    assert "not valid JSON" in session.ledger.prompt(session.conv)  # the model was told
    await runtime.close()


class _SlowArgs(BaseModel):
    seconds: float = 3.0


async def _slow(args: _SlowArgs, ctx: ToolEnv) -> ToolOutput:
    await asyncio.sleep(args.seconds)
    return ToolOutput("finished")


async def test_barge_in_during_a_tool_cancels_it(
    tokenizer: Tokenizer, embedder: Embedder, tmp_path: Path
) -> None:
    slow = Tool("slow_lookup", "A slow lookup.", _SlowArgs, _slow, group="core")
    llm = ScriptedLLM(tokenizer, ["One moment. " + call("slow_lookup", seconds=30)])
    # The embedder is loaded already (as the server loads it at start), so the time measured
    # is the barge-in's, not the state path's first embedding.
    runtime = make_runtime(llm, tmp_path, extra=[slow], embedder=embedder)
    session = runtime.open_session()

    def on(event: Event) -> None:
        if isinstance(event, ToolCallEvent):
            asyncio.get_running_loop().call_later(0.05, session.cancel, "One moment.")

    loop = asyncio.get_running_loop()
    start = loop.time()
    events = await collect(session, "Look it up.", on)
    assert loop.time() - start < 5
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert not result.ok and "cancelled" in result.preview
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.interrupted and done.text == "One moment."
    await runtime.close()


async def test_barge_in_mid_stream_with_a_delay(tokenizer: Tokenizer, tmp_path: Path) -> None:
    story = "Once upon a time there was a dragon who loved tea. " * 10
    llm = ScriptedLLM(tokenizer, [story], token_delay_s=0.01)
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    pieces: list[str] = []

    def on(event: Event) -> None:
        if isinstance(event, TextDelta):
            pieces.append(event.text)
            if len(pieces) == 5:
                session.cancel()  # a terminal front end: everything shown was delivered

    events = await collect(session, "Tell me a story.", on)
    done = next(e for e in events if isinstance(e, TurnDone))
    shown = "".join(pieces)
    assert done.interrupted and done.text == shown.strip() and len(shown) < len(story)
    assert session.conv.items[-1].content == shown and session.conv.items[-1].interrupted
    await runtime.close()


async def test_two_sessions_share_one_model(tokenizer: Tokenizer, tmp_path: Path) -> None:
    def reply(prompt: str) -> str:
        return (
            "Answer for A."
            if "question A" in prompt.rsplit("<|im_start|>user", 1)[-1]
            else "Answer for B."
        )

    llm = ScriptedLLM(tokenizer, reply, token_delay_s=0.002)
    runtime = make_runtime(llm, tmp_path)
    a, b = runtime.open_session(), runtime.open_session()
    ea, eb = await asyncio.gather(
        collect(a, "This is question A."), collect(b, "This is question B.")
    )
    assert next(e for e in ea if isinstance(e, TurnDone)).text == "Answer for A."
    assert next(e for e in eb if isinstance(e, TurnDone)).text == "Answer for B."
    assert a.id != b.id and len(llm.prompts) == 2
    await runtime.close()
    assert runtime.sessions == []
    for sid in (a.id, b.id):
        row = runtime.store.sessions.get(sid)
        assert row is not None and row.ended_at is not None


async def test_close_runs_tier_three_and_ends_the_session(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(tokenizer, ["Noted, Ana it is."])
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    await collect(session, "Actually my sister's name is Ana, not Anna.")
    await session.wait_idle()
    events = await session.close()
    assert [e.tier for e in events] == [3]
    assert session.closed and runtime.store.sessions.get(session.id).ended_at is not None  # type: ignore[union-attr]
    logged = runtime.store.events.find(session.id, kinds=["compaction"])
    assert len(logged) == 1
    await runtime.close()


async def test_barge_in_after_the_answer_amends_it_to_what_was_heard(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(tokenizer, ["The tide is high at six. Low tide comes at noon."])
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    events = await collect(session, "When is the tide?")
    done = next(e for e in events if isinstance(e, TurnDone))
    assert session.amend_interrupted(done.turn_id, "The tide is high at six.")
    last = session.conv.items[-1]
    assert last.interrupted and last.content == "The tide is high at six."
    prompt = session.ledger.prompt(session.conv)
    assert (
        "Low tide" not in prompt and session.ledger.verify(session.conv)[0] == session.usage().total
    )
    assert not session.amend_interrupted(done.turn_id, "again")  # only once
    logged = runtime.store.events.find(session.id, kinds=["assistant"])
    assert logged[0].content.endswith("noon.") and logged[-1].meta["interrupted"] is True
    await runtime.close()


async def test_a_model_failure_is_reported_not_raised(tokenizer: Tokenizer, tmp_path: Path) -> None:
    llm = ScriptedLLM(tokenizer, [])  # an empty script: the model fails on its first call
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    events = await collect(session, "Tell me something.")
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert "only 0 replies" in error.message and error.where == "model"
    assert next(e for e in events if isinstance(e, TurnDone)).text == MODEL_FAILED
    kinds = [e.kind for e in runtime.store.events.find(session.id)]
    assert kinds[0] == "user" and "error" in kinds
    await runtime.close()
