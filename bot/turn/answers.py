"""The chain of answerers: what answers the user's words, tried in a fixed order.

1. Reminder commands ("snooze it ten minutes", "done") act on the reminder just said.
2. Approvals: a "yes" or "no" to the tool call this conversation is waiting on. A yes runs
   the stored call (the exact stored parameters, bounded by tools.timeout_s, stopped by a
   barge-in); its output, or the refusal, goes back to the model as that call's result, so
   the model answers the question that asked for it in the same spoken turn. "Yes, and don't
   ask again" also allows the tool for the rest of the session.
3. The state path: status questions answered from typed state (`context.state`).
4. The model (`bot.turn.model_turn`), for everything else and after an approval.

The first three answer without the model, in milliseconds. Every front end (the voice page,
`chat`, `ask`, replay) decides through one `AnswerChain`, built by `Runtime.answer_chain` with
the same stages loaded, so a question takes the same path wherever it is asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from bot.tools.base import ToolOutput
from bot.turn.reminder_commands import may_be_command
from bot.turn.reminder_commands import resolve as reminder_command
from context.state import CANT_READ_APPROVALS, StateResolver, StateResult
from memory import approvals
from memory.db import StoreError
from memory.rows import ApprovalRow
from memory.store import Store
from models.base import ToolCall

# Runs an approved call with its stored parameters; the event stops it (a barge-in).
RunApproved = Callable[[ApprovalRow, asyncio.Event | None], Awaitable[ToolOutput]]


@dataclass
class Answered:
    """Answered without the model: `path` is the stage ("reminder", "approval", "state")."""

    path: str
    result: StateResult


@dataclass
class Resume:
    """An approval the user answered: its call and what came of it, for the model to use."""

    approval: ApprovalRow
    call: ToolCall
    output: ToolOutput
    # The user allowed the tool for the rest of the session ("yes, and don't ask again").
    standing: bool = False
    latency_ms: float = 0.0


@dataclass(frozen=True)
class ToModel:
    """No stage answered: the model does."""


TO_MODEL = ToModel()
Decision = Answered | Resume | ToModel


def declined(approval: ApprovalRow) -> ToolOutput:
    """What the model reads when the user said no."""
    return ToolOutput(
        f"The user declined: {approval.tool} was not run and nothing was sent. Say briefly "
        "what you will do instead, without it.",
        ok=False,
    )


@dataclass
class AnswerChain:
    """The stages before the model, in order; `decide` returns the first that answers."""

    store: Store | None
    resolver: StateResolver | None
    run_approved: RunApproved
    stages: list[str] = field(default_factory=lambda: ["reminder", "approval", "state"])

    async def decide(
        self,
        text: str,
        session_id: str,
        *,
        cancel: asyncio.Event | None = None,
        now: datetime | None = None,
    ) -> Decision:
        for stage in self.stages:
            if stage == "reminder":
                found = await self._reminder(text, session_id)
            elif stage == "approval":
                found = await self._approval(text, session_id, cancel, now)
            else:
                found = await self._state(text, session_id, now)
            if found is not None:
                return found
        return TO_MODEL

    def may_act(self, text: str) -> bool:
        """`text` may be a reminder command or a yes or no to an approval: stages that change
        the store, so nothing is ever prepared for them ahead of the turn."""
        if "reminder" in self.stages and may_be_command(text):
            return True
        return "approval" in self.stages and approvals.confirmation(text) is not None

    async def preview(
        self, text: str, session_id: str, *, now: datetime | None = None
    ) -> StateResult | None:
        """The state path's answer to `text`, read only, for an answer prepared while the
        user pauses; None where it does not answer or an earlier stage may act (`may_act`)."""
        if "state" not in self.stages or self.may_act(text):
            return None
        found = await self._state(text, session_id, now)
        return found.result if isinstance(found, Answered) else None

    async def _reminder(self, text: str, session_id: str) -> Decision | None:
        if self.store is None:
            return None
        result = reminder_command(text, self.store, session_id)
        return Answered("reminder", result) if result is not None else None

    async def _state(self, text: str, session_id: str, now: datetime | None) -> Decision | None:
        if self.resolver is None:
            return None
        # In a worker thread: an embedded question costs milliseconds of encoder time, and
        # other sessions' audio and turns go on meanwhile. The store is shared under its lock.
        result = await asyncio.to_thread(self.resolver.resolve, text, now, session_id=session_id)
        return Answered("state", result) if result is not None else None

    async def _approval(
        self, text: str, session_id: str, cancel: asyncio.Event | None, now: datetime | None
    ) -> Decision | None:
        decision = approvals.confirmation(text)
        if decision is None:
            return None
        started = time.perf_counter()
        if self.store is None:
            # Without the ledger there is nothing to confirm; saying "done" would be a lie.
            return Answered("approval", StateResult(CANT_READ_APPROVALS, "approval"))
        at = (now or datetime.now()).astimezone()
        try:
            taken = approvals.take(self.store.approvals, decision, session_id, at)
        except (StoreError, sqlite3.Error):
            return Answered("approval", StateResult(CANT_READ_APPROVALS, "approval"))
        if taken is None:
            return None  # nothing is waiting anywhere: an ordinary reply, for the model
        if isinstance(taken, approvals.Outcome):
            result = StateResult(taken.text, "approval", taken.sources)
            result.latency_ms = (time.perf_counter() - started) * 1000.0
            return Answered("approval", result)
        call = ToolCall(taken.tool, dict(taken.params), id=f"call_{taken.id}")
        if taken.status == "declined":
            output = declined(taken)
        else:
            output = await self.run_approved(taken, cancel)
            status = "executed" if output.ok else "failed"
            with contextlib.suppress(StoreError, sqlite3.Error, ValueError):
                self.store.approvals.resolve(taken.id, status, output.content[:2000])
        return Resume(
            taken,
            call,
            output,
            standing=decision == "yes" and approvals.standing(text),
            latency_ms=(time.perf_counter() - started) * 1000.0,
        )
