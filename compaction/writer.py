"""Builds and stores checkpoints: rules for protected fields, the model for prose, then merge.

The session's running checkpoint only grows by merging, so a later checkpoint never drops an
earlier one's protected entries (the plan, blockers, failed calls and commitments' times among
them). Live records (pending and blocked tasks, approvals) are re-read from their tables each
time. The rendered checkpoint is kept within a token cap by shortening the descriptive fields
and dropping the oldest calls that worked; protected entries and failures are never cut.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence

from compaction.checkpoint import Checkpoint, merge, render
from compaction.hooks import HookInputs
from compaction.protected import LogEntry, extract, first_request, open_questions
from compaction.summarize import ModelSummary, SummaryCancelled, summarize
from compaction.tables import blocked_items, live_items
from models.base import ModelError

# The rendered checkpoint's share of the window before descriptive fields are shortened.
CAP_FRACTION = 0.2
# A goal cut to fit keeps this many characters.
_GOAL_KEPT = 60
_local_ids = itertools.count(1)


def fallback_summary(entries: Sequence[LogEntry]) -> ModelSummary:
    """A deterministic summary when no model is available (or it was too slow)."""
    asked = [e.text.strip() for e in entries if e.kind == "user" and e.text.strip()]
    if not asked:
        return ModelSummary()
    recent = "; ".join(" ".join(a.split())[:80].rstrip(".!?") for a in asked[-4:])
    return ModelSummary(summary=f"Earlier the user asked: {recent}.")


class CheckpointWriter:
    """Holds the session's running checkpoint and writes new ones."""

    def __init__(self, ctx: HookInputs) -> None:
        self.ctx = ctx
        self.checkpoint = Checkpoint()
        self.last_source = ""
        self.last_model: ModelSummary | None = None

    async def next_checkpoint(
        self,
        entries: Sequence[LogEntry],
        *,
        cancel: asyncio.Event,
        use_model: bool = True,
        room: int | None = None,
    ) -> Checkpoint:
        """The running checkpoint merged with one for `entries`; raises SummaryCancelled.

        Rendered, it is kept within `CAP_FRACTION` of the window, or `room` tokens if that is
        less (a waiting call leaves only so much)."""
        extracted = extract(entries, self.ctx.protects)
        model = fallback_summary(entries)
        self.last_source = "rules"
        llm = self.ctx.llm
        if llm is not None and use_model and entries:
            try:
                model = await summarize(
                    llm,
                    entries,
                    self.checkpoint,
                    max_tokens=self.ctx.settings.compaction.summary_max_tokens,
                    cancel=cancel,
                )
                self.last_source = "model" if model.parsed else "model (unparsed)"
                self.last_model = model
            except ModelError:
                self.last_source = "rules (model failed)"
        later = Checkpoint(
            goal=model.goal or first_request(entries),
            decisions=model.decisions,
            open_questions=model.open_questions or open_questions(list(entries)),
            summary=model.summary or fallback_summary(entries).summary,
            commitments=extracted.commitments,
            commitment_times=extracted.commitment_times,
            corrections=extracted.corrections,
            facts=extracted.facts,
            plan=extracted.plan,
            blockers=extracted.blockers,
            attempts=extracted.attempts,
            failures=extracted.failures,
            notes=extracted.notes,
            ids=extracted.ids,
            covers=[entries[0].id, entries[-1].id] if entries else [],
            turns=sum(1 for e in entries if e.kind == "user"),
        )
        cp = merge(self.checkpoint, later)
        tasks, approvals, ids = live_items(self.ctx.store)
        cp.pending_tasks = tasks
        cp.blocked_tasks = blocked_items(self.ctx.store)
        cp.approvals = approvals
        cp.ids = [*cp.ids, *(i for i in ids if i not in cp.ids)]
        return self._fit(cp, room)

    def _fit(self, cp: Checkpoint, room: int | None = None) -> Checkpoint:
        ledger = self.ctx.ledger
        cap = int(ledger.window * CAP_FRACTION)
        if room is not None:
            cap = min(cap, room)
        while ledger.count(render(cp)) > cap:
            if len(cp.summary) > 80:
                cp.summary = "…" + cp.summary[-(len(cp.summary) // 2) :]
            elif cp.open_questions:
                cp.open_questions.pop(0)
            elif cp.decisions:
                cp.decisions.pop(0)
            elif any(not a.failed for a in cp.attempts):
                # Calls that worked go first, oldest first: their results are in the log by
                # id. Failed ones stay: they are what must not be repeated.
                cp.attempts.remove(next(a for a in cp.attempts if not a.failed))
            elif cp.summary:
                cp.summary = ""
            elif len(cp.goal) > _GOAL_KEPT + 1:
                # Cut once: the cut goal is _GOAL_KEPT characters and "…" (one more), so it
                # is never cut again (a test of `> _GOAL_KEPT` looped for ever on it).
                cp.goal = cp.goal[:_GOAL_KEPT] + "…"
            else:
                break  # only protected entries left: they stay whatever they cost
        return cp

    def save(self, cp: Checkpoint, *, tier: int, tail_event_ids: list[str]) -> str:
        """Persist the checkpoint; its id names the summary item in the context."""
        store = self.ctx.store
        if store is None:
            return f"ckpt-local-{next(_local_ids)}"
        checkpoint_id: str = store.checkpoints.save(
            self.ctx.session_id, tier, cp.to_json(), cp.summary, tail_event_ids
        )
        return checkpoint_id

    def commit(self, cp: Checkpoint) -> None:
        self.checkpoint = cp


__all__ = ["CheckpointWriter", "SummaryCancelled", "fallback_summary"]
