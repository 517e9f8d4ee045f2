"""Tier 2 on the real small model, in a live session: it yields to a user turn, completes later.

The session plays a generated trace (its turns are the scripted model's); the real model
(SmolLM2-135M; a 1,024-token window keeps CPU prefill short) writes the descriptive part of
the checkpoint under the JSON grammar and takes the idle-time re-prefill. The protected items
come from the tables and the log, and the finished context is checked for them. After
compacting, the new prompt was re-prefilled in idle time, so the next call evaluates only its
own new tokens.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.runtime import Runtime
from bot.turn.events import TurnDone
from bot.turn.session import Session
from compaction.events import CompactionEvent
from config import load_settings
from memory.approvals import params_text
from memory.store import Store
from models import LLM, Tokenizer
from testkit.sim import compactor
from testkit.trace import generate
from tests.bot.conftest import collect, small_registry

from .test_long_session import CORRECTION, PARAMS, TASK_TITLE, long_session

# Summaries written by the real model at a real window: the full run only.
pytestmark = pytest.mark.slow

SYSTEM_PROMPT = "You are Annie, a warm and concise voice assistant. Speak in short sentences."


async def _started(llm: LLM, before: object, timeout_s: float = 60.0) -> None:
    """Wait until `llm` starts a call after `before` (its stats object of the last call)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while llm.last_stats is before:
        assert loop.time() < end, "the summary call never started"
        await asyncio.sleep(0.005)


async def test_tier2_on_the_real_model_yields_then_completes(
    llm: LLM, tokenizer: Tokenizer, tmp_path: Path
) -> None:
    settings = load_settings(
        context={"window": 1024, "reserve_output": 128},
        compaction={"summary_max_tokens": 48},
    )
    store = Store(tmp_path / "annie.db")
    records, _ = generate(60, seed=3)
    player, task_id = long_session(
        records,
        settings,
        tokenizer=tokenizer,
        store=store,
        system_prompt=SYSTEM_PROMPT,
        summarizer=llm,
    )
    session = player.session
    hooks = compactor(session)
    before = llm.last_stats
    # Turns until one queues tier 2; idle work then starts it on the real model at once.
    while not hooks.tier2_pending:
        assert not player.done, "the trace never reached the tier-2 threshold"
        before = llm.last_stats
        await player.turn(idle=False)
    assert session.usage().fraction >= settings.compaction.tier2_threshold

    # The summary is being written when the user speaks: the turn stops it, it retries later.
    await _started(llm, before)
    kept = [item.id for item in session.conv.items]
    rec = await player.turn(idle=False)
    assert hooks.tier2_cancelled == 1 and hooks.tier2_pending
    assert 2 not in [e.tier for e in rec.events]
    assert {item.id for item in session.conv.items} >= set(kept)  # nothing was summarized

    # Idle time comes again: tier 2 runs to the end on the real model.
    await session.wait_idle()
    tier2 = [e for e in session.compactions if e.tier == 2]
    assert len(tier2) == 1
    event = tier2[0]
    assert event.tokens_after < event.tokens_before
    assert "summary by model" in event.detail
    model = hooks.writer.last_model
    assert model is not None and model.generated_tokens > 0 and model.raw.startswith("{")

    # Protected items are in the finished context, exactly.
    ledger, conv = session.ledger, session.conv
    prompt = ledger.prompt(conv)
    assert CORRECTION in prompt
    assert TASK_TITLE in prompt and task_id in prompt
    assert params_text(PARAMS) in prompt
    saved = store.checkpoints.latest(session.id)
    assert saved is not None and saved.tier == 2 and CORRECTION in saved.data["corrections"]

    # The compacted prompt was re-prefilled in idle time: the next call reuses all of it.
    assert hooks.reprefills and hooks.reprefills[-1].stats.evaluated_tokens > 0
    nxt = await llm.prefill(ledger.prompt(conv))
    assert nxt.evaluated_tokens <= ledger.generation_tokens + 1
    assert nxt.reused_tokens >= ledger.usage(conv).total - ledger.generation_tokens - 1
    await player.close()
    store.close()


async def test_the_tier3_polish_gives_way_to_a_users_turn(llm: LLM, tmp_path: Path) -> None:
    """A session that ends is on disk at once (the rules' checkpoint); the model's polish of
    its summary then runs while nobody talks, and stops when a user of another session starts
    a turn, so that user does not wait behind a summary of a conversation that has ended."""
    settings = load_settings(
        context={"window": 2048, "reserve_output": 128},
        compaction={"tier3_summary_s": 300.0, "summary_max_tokens": 400},
    )
    store = Store(tmp_path / "annie.db")
    runtime = Runtime(
        settings, llm=llm, store=store, system_prompt=SYSTEM_PROMPT, registry=small_registry(())
    )
    ending = runtime.open_session()
    await collect(ending, "Remember that the boiler is serviced on Friday.")
    other = runtime.open_session()
    before = llm.last_stats
    closing = asyncio.create_task(ending.close())
    await _started(llm, before)  # the polish is being written
    saved = store.checkpoints.latest(ending.id)
    assert saved is not None and saved.tier == 3  # the rules' checkpoint, on disk already
    other.yield_model()  # the other user starts to speak
    events = await asyncio.wait_for(closing, 60)
    assert llm.last_stats.cancelled
    assert len(events) == 1 and events[0].tier == 3
    assert "summary by rules" in events[0].detail
    assert store.checkpoints.latest(ending.id) == saved  # the row written first stands
    await runtime.close()
    store.close()


PASTE = "Here are my garden notes, please keep them in mind. " + " ".join(
    f"Item {i}: the tomatoes in bed {i} need water every {i % 3 + 1} days." for i in range(30)
)


async def _pastes_until_forced(
    session: Session, limit: int = 8
) -> tuple[list[CompactionEvent], TurnDone]:
    """Paste long notes turn after turn, no idle time between them, until one turn has to
    compact before its call; that turn's compaction and done events."""
    for _ in range(limit):
        events = await collect(session, PASTE)
        forced = [e for e in events if isinstance(e, CompactionEvent) and "forced" in e.detail]
        if forced:
            return forced, next(e for e in events if isinstance(e, TurnDone))
    raise AssertionError(f"no forced compaction in {limit} pasted turns")


@pytest.mark.parametrize("cap_s", [0.0, 300.0])
async def test_a_turn_that_must_compact_waits_for_the_models_summary_at_most_its_cap(
    llm: LLM, tmp_path: Path, cap_s: float
) -> None:
    """Back-to-back pastes leave no idle time for tier 2, so a turn compacts before its call,
    with the user waiting. Past `turn_summary_s` the rules' checkpoint stands; within it the
    model's summary is used. Either way the turn is answered, from a prompt that fits."""
    settings = load_settings(
        context={"window": 2048, "reserve_output": 96},
        compaction={"turn_summary_s": cap_s, "summary_max_tokens": 48},
    )
    store = Store(tmp_path / "annie.db")
    runtime = Runtime(
        settings, llm=llm, store=store, system_prompt=SYSTEM_PROMPT, registry=small_registry(())
    )
    session = runtime.open_session()
    forced, done = await _pastes_until_forced(session)
    tier2 = [e for e in forced if e.tier == 2]
    assert len(tier2) == 1
    if cap_s == 0.0:
        assert "summary by rules (the model's summary ran past turn_summary_s)" in tier2[0].detail
    else:
        assert "summary by model" in tier2[0].detail
    assert not done.failed and done.path == "model"
    assert session.ledger.usage(session.conv).total <= settings.context.window
    saved = store.checkpoints.latest(session.id)
    assert saved is not None and saved.tier == 2
    await runtime.close()
    store.close()
