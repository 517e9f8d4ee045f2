"""Answers prepared while the user pauses: used when the turn brings the same words, dropped
when it does not, and nothing recorded either way.

The real SmolLM2 shows a prepared prompt taken by the turn (its first call evaluates almost
nothing); the generated Qwen3.5 hybrid model, whose state cannot be cut back, shows a miss:
the turn restores the state saved at the history's end, and the model then holds exactly what
a fresh evaluation of the same tokens gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bot.turn.events import StateAnswer, TextDelta
from bot.turn.speculation import same_words
from context.state_answers import NOTHING_PENDING
from models.base import LLM, Embedder
from models.llama_log import quiet_stderr
from models.llm import LlamaLLM
from tests.bot.conftest import collect, make_runtime

STATUS = "Are there any tasks pending on me?"


def logged(runtime: Any, session_id: str) -> int:
    return len(runtime.store.events.find(session_id))


def test_the_same_words_ignore_case_and_punctuation() -> None:
    assert same_words("Are there any tasks pending on me?", "are there any tasks, pending on me")
    assert not same_words("Are there any tasks pending?", "Are there any tasks pending on Sam?")


async def test_a_status_answer_is_ready_ahead_and_nothing_is_recorded(
    llm: LLM, tmp_path: Path
) -> None:
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    items, events = len(session.conv.items), logged(runtime, session.id)

    said = await session.prepare(STATUS)

    assert said == NOTHING_PENDING
    assert len(session.conv.items) == items and logged(runtime, session.id) == events
    answered = [e for e in await collect(session, STATUS) if isinstance(e, StateAnswer)]
    assert [a.text for a in answered] == [NOTHING_PENDING]
    assert session.ahead.stats.used == 1 and session.ahead.stats.dropped == 0
    await session.close()
    await runtime.close()


async def test_a_command_or_an_approval_answer_is_never_run_ahead(llm: LLM, tmp_path: Path) -> None:
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    before = llm.last_stats

    assert await session.prepare("Remind me to call the plumber in ten minutes.") is None
    assert await session.prepare("Yes, go ahead.") is None

    assert runtime.store.reminders.find() == []
    assert session.ahead.stats.model == 0 and llm.last_stats is before  # not even a prefill
    await session.close()
    await runtime.close()


async def test_the_prompt_evaluated_in_the_pause_is_the_turns_own(
    llm: LLM, embedder: Embedder, tmp_path: Path
) -> None:
    runtime = make_runtime(llm, tmp_path, embedder=embedder)
    session = runtime.open_session()
    # Written after the session opened, so its briefing does not show it already.
    note = "The sea is very salty and full of whales."
    noted = runtime.store.notes.add(note, embedding=embedder.embed([note])[0])
    question = "Tell me one thing about the sea."
    await collect(session, "Hello there.")  # a history to extend, as in a real conversation
    items, events = len(session.conv.items), logged(runtime, session.id)

    assert await session.prepare(question) is None

    assert session.ahead.stats.model == 1 and session.ahead.stats.prefilled_tokens > 10
    assert len(session.conv.items) == items and logged(runtime, session.id) == events
    got = await collect(session, question)
    assert any(isinstance(e, TextDelta) for e in got)
    first = next(c for c in session.ledger.calls if c.turn == session.conv.turn)
    # Everything the turn sends was evaluated while the user paused.
    assert first.evaluated_tokens <= 1 < first.reused_tokens == first.prompt_tokens
    assert session.ahead.stats.used == 1
    # The notes recalled in the pause are the turn's: admitted, not searched for again.
    assert session.ahead.stats.recalled == 1
    assert any(noted in item.source_ids for item in session.conv.items if item.lane == "evidence")
    await session.close()
    await runtime.close()


@pytest.fixture(scope="module")
def reference(qwen35_path: Path) -> Any:
    import llama_cpp

    with quiet_stderr():
        model = llama_cpp.Llama(str(qwen35_path), n_ctx=16384, n_batch=512, verbose=False)
    yield model
    model.close()


async def test_a_miss_on_a_hybrid_model_restores_the_history_and_leaves_no_trace(
    qwen35_llm: LLM, reference: Any, tmp_path: Path
) -> None:
    import llama_cpp

    assert isinstance(qwen35_llm, LlamaLLM)
    runtime = make_runtime(qwen35_llm, tmp_path, window=8192)
    session = runtime.open_session()
    await collect(session, "Hi.")
    said = [e for e in runtime.store.events.find(session.id) if e.kind == "assistant"][-1]
    # Qwen's template trims each message and moves text before a "</think>" into a think
    # block, and an empty reply is kept as a stand-in: a random reply of that kind renders
    # otherwise than it was generated, and the history's end is then evaluated again from
    # the last round's prompt.
    raw = said.meta["raw"]
    verbatim = bool(raw) and raw == raw.strip() and "</think>" not in raw

    assert await session.prepare("What is the capital of France?") is None
    assert session.ahead.stats.prefilled_tokens > 0
    await collect(session, "Name a colour.")  # other words: what was prepared is dropped

    assert session.ahead.stats.dropped == 1 and session.ahead.stats.used == 0
    first = next(c for c in session.ledger.calls if c.turn == session.conv.turn)
    # The state saved at the history's end was restored, not an older one re-evaluated: all
    # of the last turn's prompt and, where the history spells it as generated, its reply
    # are kept. (Counted from the calls, not by tokenizing the history's text: the generated
    # model's reply is random bytes, whose text does not tokenize back to the tokens it
    # sampled.)
    last = [c for c in session.ledger.calls if c.turn == session.conv.turn - 1][-1]
    kept_reply = last.generated_tokens - 1 if verbatim else 1
    assert first.reused_tokens >= last.prompt_tokens + kept_reply
    tokens, logits = await qwen35_llm.next_logits()
    reference.reset()
    reference.eval(tokens)
    ptr = llama_cpp.llama_get_logits_ith(reference.ctx, -1)
    fresh = np.ctypeslib.as_array(ptr, shape=(reference.n_vocab(),)).astype(np.float32)
    assert np.allclose(logits, fresh, atol=1e-3, rtol=1e-3)
    assert "capital of France" not in qwen35_llm.detokenize(tokens)
    await session.close()
    await runtime.close()
