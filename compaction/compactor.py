"""The compactor: one per session, implementing the conversation loop's compaction hooks.

After each turn the monitor reads the ledger; tier 1 runs at once (no model call), tier 2 is
queued and runs in `on_idle` with a cancel event that `on_user_activity` sets (queued too, well
before the tier-2 threshold, when lanes are held and the raw history is past its budget: the
fold keeps half the budget verbatim, so first calls stay small on long sessions), and it is forced
synchronously in `before_call` only when the next call would not fit (the model's summary then
gets `compaction.turn_summary_s`, past which the rules' checkpoint stands). After any compaction the
new prompt is re-prefilled in idle time so the user's next turn hits the cache. `on_disconnect`
runs tier 3. Every compaction comes back as a `CompactionEvent`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from compaction import tier3
from compaction.checkpoint import Checkpoint, render
from compaction.events import CompactionEvent
from compaction.guard import ensure_protected, required_items
from compaction.hooks import HookInputs
from compaction.monitor import Action, MonitorHistory, decide, history_due
from compaction.summarize import SummaryCancelled
from compaction.tier1 import ItemView, Tier1Plan, plan_tier1
from compaction.tier2 import (
    apply_tier2,
    entries_from_items,
    event_ids,
    kept_items,
    plan_tier2,
    still_valid,
    summary_item,
)
from compaction.writer import CheckpointWriter
from context.conversation import Conversation, cleared_placeholder
from context.holding import HOLD_TO, foldable_tokens, raw_tokens
from context.ledger import Ledger
from models.base import CallStats, ModelError

# Tokens a summary item adds to its rendered checkpoint: the message's role markup and title.
SUMMARY_MARGIN = 32


@dataclass
class Reprefill:
    """One idle-time re-prefill: what the compaction predicted and what the model evaluated."""

    tier: int
    predicted: int
    stats: CallStats


class Compactor:
    """Three-tier compaction for one session (see `context.hooks.CompactionHooks`)."""

    def __init__(self, ctx: HookInputs) -> None:
        self.ctx = ctx
        self.settings = ctx.settings
        self.cfg = ctx.settings.compaction
        self.store = ctx.store
        self.llm = ctx.llm
        self.session_id = ctx.session_id
        self.monitored = MonitorHistory()
        self.writer = CheckpointWriter(ctx)
        self.tier2_pending = False
        self.tier2_cancelled = 0
        self.events: list[CompactionEvent] = []
        self.reprefills: list[Reprefill] = []
        self._reprefill_due: tuple[int, int] | None = None
        self._cancel: asyncio.Event | None = None
        # The queued tier 2 is the history lane's fold (not the tier-2 threshold's).
        self._fold = False

    @property
    def checkpoint(self) -> Checkpoint:
        return self.writer.checkpoint

    # --- hooks --------------------------------------------------------------------------

    async def before_call(
        self, conv: Conversation, ledger: Ledger, needed_tokens: int
    ) -> list[CompactionEvent]:
        usage = ledger.usage(conv)
        self.monitored.read(conv.turn, usage.fraction, "before_call")
        if needed_tokens <= ledger.window:
            return []
        # The call would not fit: the one place the user waits for compaction.
        out: list[CompactionEvent] = []
        reserve = needed_tokens - usage.total  # what the call needs beyond the prompt
        over = needed_tokens - ledger.window
        target = max(0.0, (usage.total - over) / ledger.window)
        event = self._tier1(conv, ledger, target=min(target, self.cfg.tier1_target), forced=True)
        if event is not None:
            out.append(event)
            over -= event.tokens_before - event.tokens_after
        if over > 0:
            # The user is waiting: the model's summary gets `turn_summary_s`, then the rules'.
            cancel = asyncio.Event()
            timer = asyncio.get_running_loop().call_later(self.cfg.turn_summary_s, cancel.set)
            try:
                event2 = await self._tier2(conv, ledger, cancel=cancel, reserve=reserve)
            finally:
                timer.cancel()
            if event2 is not None:
                out.append(event2)
        # Still over (the conversation moved while the summary was written, so its plan no
        # longer held): the assembler's overflow trim drops the oldest turns behind a marker.
        return out

    async def after_turn(self, conv: Conversation, ledger: Ledger) -> list[CompactionEvent]:
        usage = ledger.usage(conv)
        self.monitored.read(conv.turn, usage.fraction, "after_turn")
        plan = self._plan_tier1(conv, ledger, usage.total, self.cfg.tier1_target)
        after = None if plan.empty else plan.used_after / ledger.window
        action = decide(
            usage.fraction, conv.turn, self.monitored, self.cfg, tier1_fraction_after=after
        )
        if action is Action.TIER1:
            event = self._tier1(conv, ledger, target=self.cfg.tier1_target, plan=plan)
            return [event] if event is not None else []
        if action is Action.QUEUE_TIER2:
            self.tier2_pending = True
        elif action is Action.NONE and not self.tier2_pending:
            return self._hold_history(conv, ledger, usage.total)
        return []

    def _hold_history(self, conv: Conversation, ledger: Ledger, used: int) -> list[CompactionEvent]:
        """Lanes held: a history lane over budget has its old tool output cleared now (tier 1's
        batch, re-prefilled in idle time); a raw history still past it is queued to fold."""
        ctx = self.settings.context
        budget = ctx.budget("history_tail")
        if used < ctx.hold_lanes_above:
            return []
        out: list[CompactionEvent] = []
        raw = raw_tokens(conv, ledger, "history")
        if raw > budget:
            goal = (used - raw + int(budget * HOLD_TO)) / ledger.window
            event = self._tier1(conv, ledger, target=goal, lane=True)
            out += [event] if event is not None else []
            used = ledger.usage(conv).total
        history = foldable_tokens(conv, ledger, self.cfg.keep_recent_tool_results)
        if history_due(used, history, conv.turn, self.monitored, ctx.hold_lanes_above, budget):
            self.tier2_pending = self._fold = True
        return out

    async def on_idle(self, conv: Conversation, ledger: Ledger) -> list[CompactionEvent]:
        out: list[CompactionEvent] = []
        if self.tier2_pending:
            self._cancel = asyncio.Event()
            try:
                event = await self._tier2(conv, ledger, cancel=self._cancel)
            except SummaryCancelled:
                self.tier2_cancelled += 1
                return out
            except asyncio.CancelledError:
                self.tier2_cancelled += 1
                raise
            finally:
                self._cancel = None
            if event is not None:
                out.append(event)
        await self._reprefill(conv, ledger)
        return out

    def on_user_activity(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    async def on_disconnect(self, conv: Conversation, ledger: Ledger) -> list[CompactionEvent]:
        self.on_user_activity()
        started = time.perf_counter()
        # Any user's activity (`Runtime.yield_model` reaches every session, this closing one
        # too) ends the polish, as it ends tier 2.
        self._cancel = asyncio.Event()
        try:
            event = await tier3.persist(
                self.writer,
                conv,
                ledger,
                summary_s=self.cfg.tier3_summary_s,
                tail_budget=self.settings.context.budget("history_tail"),
                started=started,
                cancel=self._cancel,
            )
        finally:
            self._cancel = None
        self._emit(event)
        return [event]

    # --- tier 1 ---------------------------------------------------------------------------

    def _plan_tier1(
        self, conv: Conversation, ledger: Ledger, used: int, target: float
    ) -> Tier1Plan:
        by_id = {item.id: item for item in conv.items}

        def placeholder_tokens(item_id: str) -> int:
            item = by_id[item_id]
            message = item.message()
            message["content"] = cleared_placeholder(item.id, item.original_tokens)
            return ledger.message_tokens(message)

        views = [
            ItemView(item.id, item.kind, ledger.item_tokens(item), item.cleared, item.turn)
            for item in conv.items
        ]
        return plan_tier1(
            views,
            used=used,
            window=ledger.window,
            target=target,
            keep_recent=self.cfg.keep_recent_tool_results,
            placeholder_tokens=placeholder_tokens,
        )

    def _tier1(
        self,
        conv: Conversation,
        ledger: Ledger,
        *,
        target: float,
        plan: Tier1Plan | None = None,
        forced: bool = False,
        lane: bool = False,
    ) -> CompactionEvent | None:
        started = time.perf_counter()
        before = ledger.usage(conv).total
        plan = plan or self._plan_tier1(conv, ledger, before, target)
        if plan.empty:
            return None
        wanted = set(plan.clear_ids)
        changed = conv.clear([item for item in conv.items if item.id in wanted])
        reinserted = ensure_protected(
            conv, ledger, required_items(self.writer.checkpoint, self.store), plan.first_index
        )
        what = f"cleared {changed} tool results before item {plan.first_index}"
        if lane:  # the history lane's own hold, not the tier-1 threshold's
            what += ", holding the history lane to its budget"
            for item in (i for i in conv.items if i.id in wanted):
                item.meta["left_out"] = "tool result cleared: held the history lane to its budget"
        else:
            self.monitored.last_tier1_turn = conv.turn
        return self._edited(
            1,
            what,
            conv,
            ledger,
            before,
            plan.first_index,
            changed,
            started,
            forced=forced,
            reinserted=reinserted,
        )

    # --- tier 2 ---------------------------------------------------------------------------

    async def _tier2(
        self,
        conv: Conversation,
        ledger: Ledger,
        *,
        cancel: asyncio.Event,
        reserve: int | None = None,
    ) -> CompactionEvent | None:
        """Summarize the older turns. `reserve` is given when a call is waiting (forced): what it
        needs beyond the prompt, so the checkpoint is kept to the room that call leaves."""
        started = time.perf_counter()
        forced = reserve is not None
        fold = self._fold and not forced
        plan = plan_tier2(conv, ledger, tail_budget=self._tail_budget(conv, ledger, fold=fold))
        if plan.empty:
            self.tier2_pending = self._fold = False
            return None
        head = conv.items[: plan.cut]
        entries = entries_from_items(head)
        room = None
        if reserve is not None:
            # What stays: everything after the cut, the items inside it that are kept (pinned
            # ones, the current state), and the summary item's own markup (SUMMARY_MARGIN).
            inside = sum(ledger.item_tokens(i) for i in kept_items(conv, plan.cut))
            kept = ledger.usage(conv).total - plan.tokens + inside
            room = ledger.window - reserve - kept - SUMMARY_MARGIN
        # The model call: the only await, and the only step a user turn can cancel. A forced
        # run's cancel is its time cap: the rules' checkpoint then stands, as in tier 3.
        try:
            cp = await self.writer.next_checkpoint(entries, cancel=cancel, room=room)
        except SummaryCancelled:
            if not forced:
                raise
            cp = await self.writer.next_checkpoint(
                entries, cancel=cancel, use_model=False, room=room
            )
            self.writer.last_source = "rules (the model's summary ran past turn_summary_s)"
        if not still_valid(conv, plan):
            return None  # the conversation moved under us; stays queued for the next idle
        before = ledger.usage(conv).total
        tail_ids = event_ids(conv.items[plan.cut :])
        item_id = self.writer.save(cp, tier=2, tail_event_ids=tail_ids)
        apply_tier2(conv, plan, [summary_item(item_id, cp, head)])
        self.writer.commit(cp)
        reinserted = ensure_protected(conv, ledger, required_items(cp, self.store), 0)
        self.tier2_pending = self._fold = False
        self.monitored.last_tier2_turn = conv.turn
        what = f"summarized {len(plan.ids)} items into {item_id}"
        if fold:
            what += ", the raw history being past its lane budget"
        return self._edited(
            2,
            what,
            conv,
            ledger,
            before,
            0,
            len(plan.ids),
            started,
            forced=forced,
            reinserted=reinserted,
            note=f"summary by {self.writer.last_source}",
        )

    def _edited(
        self,
        tier: int,
        what: str,
        conv: Conversation,
        ledger: Ledger,
        before: int,
        edit_at: int,
        affected: int,
        started: float,
        *,
        forced: bool,
        reinserted: int,
        note: str = "",
    ) -> CompactionEvent:
        """The event for an edit at item `edit_at`; its re-prefill is then due in idle time.

        llama.cpp reuses the longest shared token prefix, so the edit costs the tokens from
        `edit_at` to the end of the prompt.
        """
        after = ledger.usage(conv).total
        reprefill = after - ledger.offset(conv, edit_at)
        self._reprefill_due = (tier, reprefill)
        detail = (
            f"{what} ({before / ledger.window:.0%} → {after / ledger.window:.0%})"
            + (f"; {note}" if note else "")
            + (", forced: the next call would not fit" if forced else "")
            + (f", re-inserted {reinserted} protected items" if reinserted else "")
        )
        return self._emit(
            CompactionEvent(
                tier=tier,
                tokens_before=before,
                tokens_after=after,
                items_affected=affected,
                reprefill_tokens=reprefill,
                duration_ms=(time.perf_counter() - started) * 1000,
                detail=detail,
            )
        )

    def _tail_budget(self, conv: Conversation, ledger: Ledger, *, fold: bool = False) -> int:
        """The verbatim tail: the lane budget (half of it for the history lane's own fold, so
        the next fold is some turns away), smaller if needed to reach the tier-2 target."""
        usage = ledger.usage(conv)
        outside = usage.total - sum(usage.by_item.values())
        current = self.writer.checkpoint
        estimate = ledger.count(render(current)) if not current.is_empty() else 0
        room = int(self.cfg.tier2_target * ledger.window) - outside - estimate - 64
        lane = self.settings.context.budget("history_tail")
        return max(0, min(int(lane * HOLD_TO) if fold else lane, room))

    # --- shared -----------------------------------------------------------------------------

    async def _reprefill(self, conv: Conversation, ledger: Ledger) -> None:
        """Evaluate the compacted prompt now, so the next user turn only adds its own tokens."""
        if self._reprefill_due is None or self.llm is None:
            return
        if not any(call.label != "reprefill" for call in ledger.calls):
            # Nothing was ever evaluated for this conversation (a replay): no cache to keep warm.
            return
        tier, predicted = self._reprefill_due
        prompt = ledger.prompt(conv, add_generation_prompt=False)
        try:
            stats = await self.llm.prefill(prompt)
        except ModelError:
            return  # the next call pays for it instead; nothing is lost
        self._reprefill_due = None
        ledger.record_call(stats, turn=conv.turn, label="reprefill")
        conv.mark_sent()
        self.reprefills.append(Reprefill(tier, predicted, stats))

    def _emit(self, event: CompactionEvent) -> CompactionEvent:
        self.events.append(event)
        return event


def create_hooks(ctx: HookInputs) -> Compactor:
    """The factory `context.hooks.default_hooks_factory` finds in this package."""
    return Compactor(ctx)
