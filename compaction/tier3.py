"""Tier 3: on disconnect or clean shutdown, persist the checkpoint, summary and recent tail.

The session's running checkpoint is merged with everything still in view, the live tables are
re-read, and the result goes to the store as a tier-3 checkpoint with the ids of the verbatim
tail, which is what the next session's briefing (`compaction.briefing`) is built from.

The rules' checkpoint is saved first, at once, so a session that is gone is on disk within
milliseconds whatever the model is doing (a kill -9 a moment later loses nothing). The model
may then polish the summary for at most `compaction.tier3_summary_s`; a polished checkpoint is
saved as a newer row, which the next briefing prefers. The polish gives way to any user who
starts a turn meanwhile (a page reloaded, another session): one local model serves them all,
and a user waiting behind a summary of a conversation that has ended is the worse trade.
"""

from __future__ import annotations

import asyncio
import time

from compaction.checkpoint import render
from compaction.events import CompactionEvent
from compaction.summarize import SummaryCancelled
from compaction.tier2 import entries_from_items, event_ids, plan_tier2
from compaction.writer import CheckpointWriter
from context.conversation import Conversation
from context.ledger import Ledger


async def persist(
    writer: CheckpointWriter,
    conv: Conversation,
    ledger: Ledger,
    *,
    summary_s: float,
    tail_budget: int,
    started: float,
    cancel: asyncio.Event | None = None,
) -> CompactionEvent:
    """Write the tier-3 checkpoint; the model polishes the summary for at most `summary_s`,
    or until `cancel` is set (a user's turn wants the model: the rules' checkpoint stands)."""
    before = ledger.usage(conv).total
    visible = [item for item in conv.items if item.kind != "summary"]
    entries = entries_from_items(visible)
    plan = plan_tier2(conv, ledger, tail_budget=tail_budget)
    tail_ids = event_ids(conv.items[plan.cut :])
    cancel = cancel or asyncio.Event()
    cp = await writer.next_checkpoint(entries, cancel=cancel, use_model=False)
    checkpoint_id = writer.save(cp, tier=3, tail_event_ids=tail_ids)
    source = writer.last_source
    if summary_s > 0 and writer.ctx.llm is not None and entries:
        timer = asyncio.get_running_loop().call_later(summary_s, cancel.set)
        try:
            polished = await writer.next_checkpoint(entries, cancel=cancel)
        except SummaryCancelled:
            pass  # too slow: the rules' checkpoint already saved stands
        else:
            if writer.last_source != "rules (model failed)":
                checkpoint_id = writer.save(polished, tier=3, tail_event_ids=tail_ids)
                cp, source = polished, writer.last_source
        finally:
            timer.cancel()
    writer.commit(cp)
    after = ledger.count(render(cp))
    return CompactionEvent(
        tier=3,
        tokens_before=before,
        tokens_after=after,
        items_affected=len(visible),
        reprefill_tokens=0,
        duration_ms=(time.perf_counter() - started) * 1000,
        detail=(
            f"persisted {checkpoint_id} with a tail of {len(tail_ids)} events for the next "
            f"session; summary by {source}"
        ),
    )
