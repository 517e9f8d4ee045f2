"""The session loop on both real model families (SmolLM2 and the generated Qwen3.5): a tool
call end to end, the state path, barge-in, warm-up."""

from __future__ import annotations

import threading
from pathlib import Path

from bot.turn.events import (
    ContextMeter,
    Event,
    LatencyEvent,
    StateAnswer,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnDone,
)
from context.conversation import INTERRUPTED_MARK
from models.base import LLM
from tests.bot.conftest import SHORT_PROMPT, collect, make_runtime


async def test_a_chat_turn_with_one_tool_call_on_the_real_model(
    any_llm: LLM, tmp_path: Path
) -> None:
    """Small or random models rarely write a well-formed call on their own, so the first round
    uses `tool_choice`, which constrains sampling with a GBNF grammar (not a forced prefix)
    that only admits one `list_tasks` call in the model's own dialect. Everything after that,
    parsing, running the tool, the second round and the answer, is unconstrained."""
    llm = any_llm
    runtime = make_runtime(llm, tmp_path, rounds=1)
    runtime.store.tasks.add("call the bank about the card", pending="user")
    session = runtime.open_session()
    events = await collect(session, "Which tasks do I have?", tool_choice="list_tasks")
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [c.name for c in calls] == ["list_tasks"]
    assert len(results) == 1 and results[0].ok and "call the bank" in results[0].preview
    done = [e for e in events if isinstance(e, TurnDone)]
    assert len(done) == 1 and done[0].path == "model" and not done[0].interrupted
    assert "<tool_call>" not in "".join(e.text for e in events if isinstance(e, TextDelta))
    assert any(isinstance(e, ContextMeter) for e in events)
    stages = next(e for e in events if isinstance(e, LatencyEvent)).stages
    assert stages["tools_ms"] >= 0 and stages["model_ms"] > 0
    # Every step is in the event log.
    kinds = [e.kind for e in runtime.store.events.find(session.id)]
    for kind in ("user", "manifest", "assistant", "tool_call", "tool_result"):
        assert kind in kinds
    # The ledger is exact and the second round reused the first round's prompt.
    total, counted = session.ledger.verify(session.conv)
    assert total == counted
    first, second = session.ledger.calls[:2]
    assert second.reused_tokens >= first.prompt_tokens
    assert second.evaluated_tokens < 80
    await runtime.close()


async def test_a_state_question_makes_no_model_call(any_llm: LLM, tmp_path: Path) -> None:
    llm = any_llm
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    before = llm.last_stats
    cached = llm.cached_tokens  # type: ignore[attr-defined]
    events = await collect(session, "Are there any tasks pending on me?")
    assert llm.last_stats is before  # no call started: each call replaces last_stats
    assert llm.cached_tokens == cached  # type: ignore[attr-defined]
    answer = next(e for e in events if isinstance(e, StateAnswer))
    assert answer.text == "Nothing needs you right now."
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.path == "state" and done.text == answer.text
    assert [i.kind for i in session.conv.items] == ["user", "assistant"]
    assert session.ledger.calls == []
    await runtime.close()


ASKS = (
    "Tell me a long story about a dragon and a knight.",
    "Describe a long journey across the sea, step by step.",
    "Tell me everything you know about mountains and rivers.",
    "Explain how a river reaches the sea, at length.",
    "Tell me a long story about a lighthouse keeper.",
)


async def test_barge_in_keeps_only_what_was_delivered(any_llm: LLM, tmp_path: Path) -> None:
    llm = any_llm
    runtime = make_runtime(llm, tmp_path, reserve=300)
    session = runtime.open_session()
    heard: list[str] = []

    def on(event: Event) -> None:
        if isinstance(event, TextDelta):
            heard.append(event.text)
            # Early: the random-weights model's answer may end after a few pieces, and
            # which few depends on the floats of whichever saved state it went on from.
            if len(heard) == 3:
                session.cancel(delivered_text="".join(heard[:2]))

    # The random-weights model sometimes ends its answer within a few pieces, and the model
    # thread can finish such an answer before the loop has handed on its third piece, so the
    # cancel finds nothing left to stop; ask again until the talking-over reaches a model
    # still writing. A cancel that never stops the model fails every ask.
    for ask in ASKS:
        heard.clear()
        events = await collect(session, ask, on)
        if len(heard) >= 3 and llm.last_stats.cancelled:
            break
    assert len(heard) >= 3, heard
    done = next(e for e in events if isinstance(e, TurnDone))
    delivered = "".join(heard[:2])
    assert done.interrupted and done.text == delivered.strip()
    assert llm.last_stats.cancelled
    assert llm.last_stats.generated_tokens < 300
    last = session.conv.items[-1]
    assert last.interrupted and last.content == delivered
    # Kept once, marked as cut off (the pieces are short enough to occur elsewhere too).
    assert session.ledger.prompt(session.conv).count(delivered + INTERRUPTED_MARK) == 1
    stored = runtime.store.events.find(session.id, kinds=["assistant"])[-1]
    assert stored.content == delivered and stored.meta["interrupted"] is True
    # The conversation goes on after the interruption.
    events = await collect(session, "What time is it?")
    assert any(isinstance(e, StateAnswer) for e in events)
    await runtime.close()


async def test_warming_up_evaluates_the_head_so_the_first_turn_adds_only_its_own(
    any_llm: LLM, tmp_path: Path
) -> None:
    llm = any_llm
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    head = session.ledger.prefix_cost(session.conv.prefix).total
    other = runtime.open_session()  # evaluated in between, so the model holds another head
    other.warm_up()
    await other.wait_idle()
    session.warm_up()
    await session.wait_idle()
    warm = session.ledger.calls[-1]
    assert warm.label == "warm-up" and warm.prompt_tokens == head
    await collect(session, "Say hello.")
    first = next(c for c in session.ledger.calls if c.label.startswith("round"))
    assert first.reused_tokens >= head
    assert first.evaluated_tokens <= first.prompt_tokens - head  # the state snapshot and request
    # Once the conversation has started there is nothing left to warm.
    session.warm_up()
    await session.wait_idle()
    assert [c.label for c in session.ledger.calls].count("warm-up") == 1
    await runtime.close()


async def test_sessions_share_one_evaluated_head_and_each_evaluates_only_its_briefing(
    any_llm: LLM, tmp_path: Path
) -> None:
    # The model's own window (16k on Qwen3.5, 4k on SmolLM2). At 4k the briefing lane has 93
    # tokens; the generated tokenizer spends one per character, and the random model's summary
    # and answer lines can each outgrow what is left after the header, leaving nothing kept.
    runtime = make_runtime(any_llm, tmp_path, window=any_llm.n_ctx)
    kept = await runtime.keep_head()  # what `serve` does at start-up
    # (The model is shared with earlier tests, so it may hold the head already.)
    assert kept is not None and not kept.cancelled and kept.prompt_tokens > 0
    assert await runtime.keep_head() is None  # once per server
    first = runtime.open_session()
    await collect(first, "Remember that my booking reference is KX42.")
    await first.close()
    # The next session has a briefing of its own, and the model holds the first session.
    second = runtime.open_session()
    assert second.conv.prefix.briefing
    second.warm_up()
    await second.wait_idle()
    warm = second.ledger.calls[-1]
    assert warm.label == "warm-up" and not warm.cancelled
    assert [c.label for c in second.ledger.calls] == ["warm-up"]  # no head of its own
    assert warm.reused_tokens == kept.prompt_tokens  # the shared head, restored or kept
    assert warm.evaluated_tokens == warm.prompt_tokens - kept.prompt_tokens > 0
    await runtime.close()


async def test_a_turn_through_a_head_not_kept_yet_keeps_it_on_the_way(
    any_llm: LLM, tmp_path: Path
) -> None:
    """The user speaks the moment they connect, every time: the head's warm-up is always cut
    short, while each turn evaluates through the head anyway. The first such turn keeps it,
    so no later warm-up goes back into it and every later session restores it."""
    # A head of its own: the model is shared with earlier tests that kept theirs.
    prompt = f"{SHORT_PROMPT} (Test {tmp_path.name}.)"
    runtime = make_runtime(any_llm, tmp_path, system_prompt=prompt)
    stopped = threading.Event()
    stopped.set()
    cut_short = await runtime.keep_head(stopped)
    assert cut_short is not None and cut_short.cancelled and not runtime.head_kept
    first = runtime.open_session()
    await collect(first, "Say hello.")
    turn = next(c for c in first.ledger.calls if c.label.startswith("round"))
    kept = await runtime.keep_head()
    assert kept is not None and runtime.head_kept
    assert kept.plan == "kept" and kept.evaluated_tokens == 0
    # The head ended inside what the turn evaluated, and the turn kept it there.
    assert turn.reused_tokens < kept.prompt_tokens < turn.prompt_tokens
    await first.close()
    second = runtime.open_session()
    second.warm_up()
    await second.wait_idle()
    warm = second.ledger.calls[-1]
    assert [c.label for c in second.ledger.calls] == ["warm-up"] and not warm.cancelled
    assert warm.reused_tokens == kept.prompt_tokens  # restored or cut back to, not evaluated
    await runtime.close()


async def test_warm_up_stops_when_the_user_speaks_and_goes_on_in_the_next_idle_time(
    any_llm: LLM, tmp_path: Path
) -> None:
    llm = any_llm
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    head = session.ledger.prefix_cost(session.conv.prefix).total
    session.warm_up()
    session.yield_model()  # the user started to speak before the head was evaluated
    await session.wait_idle()
    stopped = session.ledger.calls[-1]
    assert stopped.label == "warm-up" and stopped.cancelled
    assert stopped.evaluated_tokens < head  # it gave the cores back before the end
    # A status question needs no model; the idle time after it finishes the warm-up.
    events = await collect(session, "Are there any tasks pending on me?")
    assert any(isinstance(e, StateAnswer) for e in events)
    await session.wait_idle()
    resumed = [c for c in session.ledger.calls if c.label == "warm-up"][-1]
    assert resumed is not stopped and not resumed.cancelled
    assert resumed.reused_tokens >= stopped.reused_tokens + stopped.evaluated_tokens
    await collect(session, "Say hello.")
    first = next(c for c in session.ledger.calls if c.label.startswith("round"))
    assert first.reused_tokens >= head  # the turn did not pay for the head
    await runtime.close()


async def test_a_turn_that_cuts_the_warm_up_short_leaves_the_rest_to_the_next_idle_time(
    any_llm: LLM, tmp_path: Path
) -> None:
    """The user speaks and their turn starts while the warm-up is still evaluating: the turn
    cancels the warm-up's wait (the evaluation stops at its next batch), and the idle time
    after the turn evaluates the rest, so a later model turn does not pay for the head."""
    runtime = make_runtime(any_llm, tmp_path)
    session = runtime.open_session()
    head = session.ledger.prefix_cost(session.conv.prefix).total
    session.warm_up()
    session.yield_model()
    events = await collect(session, "Are there any tasks pending on me?")  # no wait_idle first
    assert any(isinstance(e, StateAnswer) for e in events)
    await session.wait_idle()
    warmed = [c for c in session.ledger.calls if c.label == "warm-up" and not c.cancelled]
    assert warmed, [c.label for c in session.ledger.calls]
    await collect(session, "Say hello.")
    first = next(c for c in session.ledger.calls if c.label.startswith("round"))
    assert first.reused_tokens >= head, (first, head)
    await runtime.close()


async def test_one_users_speech_stops_another_sessions_warm_up_on_a_shared_model(
    any_llm: LLM, tmp_path: Path
) -> None:
    """A session opened while another user talks: its warm-up would hold the one local model
    while that user's turn waits. The speech stops it at its next batch, and its next turn
    evaluates the rest."""
    runtime = make_runtime(any_llm, tmp_path)
    talking = runtime.open_session()
    newcomer = runtime.open_session()
    head = newcomer.ledger.prefix_cost(newcomer.conv.prefix).total
    newcomer.warm_up()
    talking.yield_model()  # the other user starts to speak
    await newcomer.wait_idle()
    stopped = newcomer.ledger.calls[-1]
    assert stopped.label == "warm-up" and stopped.cancelled, newcomer.ledger.calls
    assert stopped.evaluated_tokens < head
    events = await collect(talking, "Say hello.")
    assert any(isinstance(e, TurnDone) and e.path == "model" for e in events)
    await runtime.close()
