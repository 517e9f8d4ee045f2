"""Tier 2 on the real small model: it yields to a user turn, completes later, keeps what matters.

The model (SmolLM2-135M; a 1,024-token window keeps CPU prefill short) writes the descriptive
part of the checkpoint under the JSON grammar; the protected items come from the tables and the
log, and the finished context is checked for them. After compacting, the new prompt is
re-prefilled in idle time, so the next call evaluates only its own new tokens.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from compaction.sim import Simulator
from compaction.tables import approval_params
from compaction.trace import generate
from config import load_settings
from memory.store import Store
from models import LLM

from .test_long_session import CORRECTION, PARAMS, TASK_TITLE

SYSTEM_PROMPT = "You are Annie, a warm and concise voice assistant. Speak in short sentences."


async def test_tier2_on_the_real_model_yields_then_completes(llm: LLM, tmp_path: Path) -> None:
    settings = load_settings(
        context={"window": 1024, "reserve_output": 128},
        compaction={"summary_max_tokens": 48},
    )
    store = Store(tmp_path / "annie.db")
    task_id = store.add_task(TASK_TITLE, pending="user")
    store.request_approval("send_email", PARAMS, requester="annie", ttl_s=86_400)
    sim = Simulator(settings, llm, store, system_prompt=SYSTEM_PROMPT, llm=llm, idle=False)
    records, _ = generate(60, seed=3)
    records = [
        {"type": "user", "text": CORRECTION},
        {"type": "assistant", "text": "Thanks, Ana it is."},
        *records,
    ]
    compactor, conv, ledger = sim.compactor, sim.conv, sim.ledger
    rest = iter(records)
    for record in rest:
        if record["type"] == "user":
            await sim.end_turn()
            if compactor.tier2_pending:
                break
        await sim.feed(record)
    assert compactor.tier2_pending, "the trace never reached the tier-2 threshold"
    assert ledger.usage(conv).fraction >= settings.compaction.tier2_threshold

    # Idle: tier 2 starts on the real model; the user starts a turn and it must yield.
    before = [(item.id, item.visible) for item in conv.items]
    idle = asyncio.create_task(compactor.on_idle(conv, ledger))
    await asyncio.sleep(1.0)
    assert not idle.done(), "the summary finished before the user spoke; nothing was tested"
    compactor.on_user_activity()
    assert await asyncio.wait_for(idle, 120) == []
    assert compactor.tier2_pending and compactor.tier2_cancelled == 1
    assert [(item.id, item.visible) for item in conv.items] == before

    # The user's turn runs (here: admitted from the trace), then idle time comes again.
    await sim.feed(record)
    for record in rest:
        if record["type"] == "user":
            break
        await sim.feed(record)
    events = await compactor.on_idle(conv, ledger)
    assert [e.tier for e in events] == [2]
    event = events[0]
    assert event.tokens_after < event.tokens_before
    assert "summary by model" in event.detail
    model = compactor.writer.last_model
    assert model is not None and model.generated_tokens > 0 and model.raw.startswith("{")

    # Protected items are in the finished context, exactly.
    prompt = ledger.prompt(conv)
    assert CORRECTION in prompt
    assert TASK_TITLE in prompt and task_id in prompt
    assert approval_params(PARAMS) in prompt
    saved = store.latest_checkpoint(sim.session_id)
    assert saved is not None and saved.tier == 2 and CORRECTION in saved.data["corrections"]

    # The compacted prompt was re-prefilled in idle time: the next call reuses all of it.
    assert compactor.reprefills and compactor.reprefills[-1].stats.evaluated_tokens > 0
    nxt = await llm.prefill(ledger.prompt(conv))
    assert nxt.evaluated_tokens <= ledger.generation_tokens + 1
    assert nxt.reused_tokens >= ledger.usage(conv).total - ledger.generation_tokens - 1
    store.close()
