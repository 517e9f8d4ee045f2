"""A 300-turn tool-heavy session at a 4,096-token window, through the real turn (a Session).

The session's model is the scripted one (real tokenizer and template, recorded text); it
writes the tier-2 summaries too, for speed; the same tier-2 path runs on the real small model
in test_real_model.py.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from bot.tools.memory_tools import memory_tools
from bot.tools.registry import ToolRegistry
from bot.tools.web import web_tools
from bot.turn.replay import TracePlayer
from compaction.events import CompactionEvent
from compaction.summarize import INSTRUCTIONS
from config import Settings
from memory.approvals import params_text
from memory.store import Store
from models import Tokenizer
from testkit.sim import SimResult, after_compaction, simulate, simulator
from testkit.trace import generate

SYSTEM_PROMPT = (
    "You are Annie, a warm and concise voice assistant. Speak in short sentences. "
    "Never read tables or lists aloud; send them to the page. Use tools when they help, "
    "and say so when something cannot be found. "
) * 6
CORRECTION = "actually my sister's name is Ana, not Anna"
TASK_TITLE = "Send the signed lease to Marta"
PARAMS = {"to": "landlord@example.org", "subject": "Lease", "amount_eur": 1250}


def trace_tools() -> ToolRegistry:
    """The tools the generated trace calls, with their metadata, none in the prompt head (at
    4k the core and memory schemas would take a third of the window)."""
    return ToolRegistry([*memory_tools(), *web_tools()], default_groups=())


def long_session(
    records: list[dict[str, Any]], settings: Settings, *, store: Store, **options: Any
) -> tuple[TracePlayer, str]:
    """A task and an approval open in the store, and a player over `records` after a first
    turn in which the user corrects a name; returns the player and the task's id."""
    task_id = store.tasks.add(TASK_TITLE, pending="user")
    store.approvals.request("send_email", PARAMS, requester="annie", ttl_s=86_400)
    corrected = [
        {"type": "user", "text": CORRECTION},
        {"type": "assistant", "text": "Thanks, Ana it is."},
        *records,
    ]
    player = simulator(corrected, settings, store=store, registry=trace_tools(), **options)
    return player, task_id


def _turns_with(result: SimResult, tier: int) -> list[int]:
    return [t.turn for t in result.turns for e in t.events if e.tier == tier]


async def test_300_tool_heavy_turns_never_overflow_and_keep_what_matters(
    settings: Settings, tokenizer: Tokenizer, tmp_path: Path
) -> None:
    store = Store(tmp_path / "annie.db")
    records, planted = generate(300)
    sim, task_id = long_session(
        records, settings, tokenizer=tokenizer, store=store, system_prompt=SYSTEM_PROMPT
    )
    checked: list[CompactionEvent] = []

    def protected_present(event: CompactionEvent, prompt: str) -> None:
        if event.tier == 3:
            return
        checked.append(event)
        assert TASK_TITLE in prompt and task_id in prompt, event.detail
        assert params_text(PARAMS) in prompt, event.detail
        assert CORRECTION in prompt, event.detail

    after_compaction(sim, protected_present)
    result = await simulate(sim)
    window = settings.context.window

    # The window never overflows, and the assembler never had to trim: compaction sufficed.
    assert result.overflows == 0
    assert result.trimmed == 0
    assert result.peak + settings.context.output_reserve_tokens <= window

    # Tier 1 fires first, at 65% or more; tier 2 at 80% or more; each tier at its threshold.
    events = result.events
    assert events[0].tier == 1 and events[0].tokens_before >= 0.65 * window
    tier2 = [e for e in events if e.tier == 2]
    assert tier2 and tier2[0].tokens_before >= 0.80 * window
    assert all(e.tokens_before >= 0.65 * window for e in events if e.tier == 1)
    assert all(e.tokens_before >= 0.80 * window for e in tier2)
    assert all(e.tokens_after < e.tokens_before for e in events if e.tier in (1, 2))
    # Neither fires on consecutive turns.
    for tier in (1, 2):
        turns = _turns_with(result, tier)
        assert turns, f"tier {tier} never fired"
        assert all(b - a > 1 for a, b in itertools.pairwise(turns)), (tier, turns)
    assert result.count(3) == 1

    # Protected facts were checked in the context after every compaction.
    assert len(checked) == result.count(1) + result.count(2)

    # Tier 2 asked the session's model; each compaction was re-prefilled in idle time.
    assert any(INSTRUCTIONS in p for p in sim.llm.prompts)
    assert all("summary by model" in e.detail for e in tier2)
    assert len(result.compactor.reprefills) == len(checked)
    assert [c.label for c in result.ledger.calls].count("reprefill") == len(checked)
    # A tier-1 edit costs only the tokens from its cut to the end, never the fixed head.
    head = result.ledger.prefix_cost(result.conv.prefix).total
    for e in events:
        if e.tier == 1:
            assert 0 < e.reprefill_tokens <= e.tokens_after - head

    # Every compaction is in the event log.
    logged = store.events.find(result.session_id, kinds=["compaction"])
    assert [json.loads(e.content)["tier"] for e in logged] == [e.tier for e in events]

    # All 20 planted facts survive in the final context or the persisted checkpoint.
    final = result.prompt()
    saved = store.checkpoints.latest(result.session_id)
    assert saved is not None and saved.tier == 3
    saved_text = json.dumps(saved.data, ensure_ascii=False)
    lost = [f for f in planted if f.needle not in final and f.needle not in saved_text]
    assert lost == []
    assert CORRECTION in saved.data["corrections"]
    store.close()
