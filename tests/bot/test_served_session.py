"""The session loop through a real serving engine (llama-cpp-python's server in a child
process), on both model families: the state path, a forced tool call, barge-in, two sessions
talking at once, compaction with the served model writing the summary, and the server going
away mid-turn."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.turn.events import (
    ErrorEvent,
    Event,
    StateAnswer,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnDone,
)
from bot.turn.session import Session
from config import load_settings
from memory.store import Store
from models import LLM, ModelUnavailable, Tokenizer, load_llm
from testkit.llama_server import LlamaCppServer
from testkit.trace import generate
from tests.bot.conftest import after_deltas, collect, make_runtime
from tests.compaction.test_long_session import long_session
from tests.conftest import served_settings

# Sessions on a real serving engine in a child process: the full run only.
pytestmark = pytest.mark.slow


def completions(server_log: str) -> int:
    return server_log.count('"POST /v1/completions HTTP/1.1"')


STORIES = (
    "Tell me a long story about a dragon and a knight.",
    "Go on, tell me a much longer one, please.",
    "One more long story, about a lighthouse keeper and a storm.",
)


async def ask_until(
    session: Session, n: int, texts: list[str], on: Callable[[Event], None]
) -> tuple[list[Event], list[str]]:
    """Ask `STORIES` in turn until an answer streams `n` text deltas; the events of that turn
    and the requests asked. The generated model's weights are random, so how long it talks
    depends on the prompt, whose state line carries the minute: a few answers are a token or
    two. The next request in the same session is another prompt."""
    asked: list[str] = []
    for request in STORIES:
        texts.clear()
        asked.append(request)
        events = await collect(session, request, on)
        if len(texts) >= n:
            return events, asked
    raise AssertionError(f"no answer to {len(STORIES)} requests ran to {n} text deltas")


async def test_a_tool_call_turn_and_a_state_answer_through_the_server(
    served_llm: LLM, tmp_path: Path
) -> None:
    runtime = make_runtime(served_llm, tmp_path, rounds=1)
    runtime.store.tasks.add("call the bank about the card", pending="user")
    session = runtime.open_session()
    events = await collect(session, "Which tasks do I have?", tool_choice="list_tasks")
    assert [e.name for e in events if isinstance(e, ToolCallEvent)] == ["list_tasks"]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert len(results) == 1 and "call the bank" in results[0].preview
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.path == "model" and not done.interrupted
    # Exact counts against the served model; the engine's cache figures are unknown here.
    total, counted = session.ledger.verify(session.conv)
    assert total == counted
    calls = session.ledger.calls
    assert len(calls) == 2 and all(not c.cache_reported for c in calls)
    assert calls[1].prompt_tokens > calls[0].prompt_tokens
    # A status question is answered from state: no request reaches the engine.
    answer = next(
        e
        for e in await collect(session, "Are there any tasks pending on me?")
        if isinstance(e, StateAnswer)
    )
    assert "call the bank" in answer.text
    assert len(session.ledger.calls) == 2
    await runtime.close()


async def test_barge_in_stops_the_served_answer(served_llm: LLM, tmp_path: Path) -> None:
    runtime = make_runtime(served_llm, tmp_path, reserve=300)
    session = runtime.open_session()
    heard, on = after_deltas(3, lambda texts: session.cancel(delivered_text="".join(texts[:2])))
    events, _ = await ask_until(session, 3, heard, on)
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.interrupted and done.text == "".join(heard[:2]).strip()
    assert session.ledger.calls[-1].generated_tokens < 300
    await runtime.close()


async def test_two_sessions_at_once_get_their_own_answers(
    served_smollm2: LlamaCppServer, tmp_path: Path
) -> None:
    llm = load_llm(served_settings(served_smollm2, tmp_path, 4096))
    runtime = make_runtime(llm, tmp_path)
    first, second = runtime.open_session(), runtime.open_session()
    a, b = await asyncio.gather(
        collect(first, "Tell me one fact about owls."),
        collect(second, "Tell me one fact about volcanoes."),
    )
    for session, events, word in ((first, a, "owls"), (second, b, "volcanoes")):
        done = next(e for e in events if isinstance(e, TurnDone))
        assert done.path == "model" and done.text
        streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert streamed.strip() == done.text.strip()
        stored = runtime.store.events.find(session.id)
        user = [e.content for e in stored if e.kind == "user"]
        assert user == [f"Tell me one fact about {word}."]
        assistant = [e.content for e in stored if e.kind == "assistant"]
        assert assistant == [done.text]
        total, counted = session.ledger.verify(session.conv)
        assert total == counted
    await runtime.close()


async def test_tier2_summary_is_written_by_the_served_model(
    served_smollm2: LlamaCppServer, tokenizer: Tokenizer, tmp_path: Path
) -> None:
    settings = served_settings(served_smollm2, tmp_path, 1024)
    llm = load_llm(settings)
    settings = load_settings(
        context={"window": 1024, "reserve_output": 128},
        compaction={"summary_max_tokens": 48},
    )
    store = Store(tmp_path / "annie.db")
    records, _ = generate(60, seed=3)
    player, _ = long_session(
        records,
        settings,
        tokenizer=tokenizer,
        store=store,
        summarizer=llm,
        system_prompt="You are Annie, a concise voice assistant.",
    )
    session = player.session
    while not any(e.tier == 2 for e in session.compactions):
        assert not player.done, "the trace never reached tier 2"
        await player.turn(idle=True)
    event = next(e for e in session.compactions if e.tier == 2)
    assert "summary by model" in event.detail and event.tokens_after < event.tokens_before
    assert session.usage().total <= settings.context.window


async def test_the_server_going_away_mid_turn_keeps_the_words_and_says_so(
    qwen35_path: Path, tmp_path: Path
) -> None:
    with LlamaCppServer(qwen35_path, n_ctx=4096) as server:
        llm = load_llm(served_settings(server, tmp_path, 4096))
        runtime = make_runtime(llm, tmp_path, reserve=400)
        session = runtime.open_session()
        texts, on = after_deltas(2, lambda _: server.kill())
        events, asked = await ask_until(session, 2, texts, on)
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and "stopped answering" in errors[0].message
    assert server.url in errors[0].message
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.failed and done.text == ModelUnavailable.spoken
    stored = runtime.store.events.find(session.id)
    assert [e.content for e in stored if e.kind == "user"] == asked
    assert any(e.kind == "error" for e in stored)
    # The session goes on: the state path needs no model.
    again = await collect(session, "What time is it?")
    assert any(isinstance(e, StateAnswer) for e in again)
    await runtime.close()
