"""One conversation: user text in, typed events out, every step in the event log.

Flow of a turn: the state path answers status questions from typed state with no model call;
anything else is admitted by the assembler, streamed from the shared LLM (text deltas with
tool-call markup hidden), its tool calls run (bounded rounds), and the answer completes with
`TurnDone`, a context meter and a latency breakdown. Compaction hooks run before each call,
after the turn, and in idle time between turns (a background task a new turn cancels).
Barge-in: `cancel(delivered)` stops generation within a token; the conversation keeps only
what the user actually heard, marked interrupted. `stop(kept)` also stops generation, but at a
budget the front end reached: the text up to the cut is the finished answer. The voice page,
the terminal chat and `ask` all drive this same loop. Spoken reminder commands ("snooze it
ten minutes") are matched before the state path; reminders that fell due are said through
`announce()`, which the front end calls at a gap in the conversation (`on_due` tells it when).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bot.events import (
    CompactionEvent,
    ContextMeter,
    ErrorEvent,
    Event,
    LatencyEvent,
    ReminderEvent,
    StateAnswer,
    TurnDone,
)
from bot.interruption import amend_interrupted, interrupted_answer
from bot.model_turn import model_turn
from bot.reminder_commands import resolve as reminder_command
from bot.reminders import announcement
from context.assembler import (
    Assembler,
    Assembly,
    ContextOverflowError,
    Request,
)
from context.conversation import Conversation, Item, neutralize
from context.envelope import Manifest
from context.ledger import Ledger, Usage
from memory.db import StoreError
from memory.rows import utc_now
from models.base import ModelError

if TYPE_CHECKING:
    from bot.runtime import Runtime
    from bot.tools.registry import ActiveTools
    from compaction.hooks import CompactionHooks
    from config import Settings

MODEL_FAILED = "Sorry, something went wrong on my side. Please try again."


class Session:
    """A conversation over the runtime's shared model; one turn at a time."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        settings: Settings,
        conv: Conversation,
        ledger: Ledger,
        assembler: Assembler,
        tools: ActiveTools,
        hooks: CompactionHooks,
        on_event: Callable[[Event], None] | None = None,
        record_metrics: bool = True,
    ) -> None:
        self.runtime = runtime
        self.record_metrics = record_metrics
        self.settings = settings
        self.conv = conv
        self.ledger = ledger
        self.assembler = assembler
        self.tools = tools
        self.hooks = hooks
        self.on_event = on_event
        self.id = conv.session_id
        self.resolver = runtime.state_resolver(self._context_usage) if runtime.state_path else None
        self.last_assembly: Assembly | None = None
        self.compactions: list[CompactionEvent] = []
        self.closed = False
        self._lock = asyncio.Lock()
        self._cancel = asyncio.Event()
        self._delivered: str | None = None
        self._stopped: tuple[str, str] | None = None  # (kept text, why), set by `stop()`
        self._idle: asyncio.Task[None] | None = None
        # Warm-up stops when the user starts to speak or type (the cores are theirs then) and
        # goes on in the next idle time from where it stopped.
        self._warm_stop = threading.Event()
        self._warm_pending = False
        self.started_at = utc_now()
        # Set by the front end: reminders fell due, say them at the next gap (`announce`).
        self.on_due: Callable[[], None] | None = None
        # What idle time waits for first: a voice front end starts saying the answer after
        # the turn is done, and model work then would take the cores its first sentence needs.
        self.idle_after: Callable[[], Awaitable[None]] | None = None

    # --- views --------------------------------------------------------------------------

    def usage(self) -> Usage:
        return self.ledger.usage(self.conv)

    def manifest(self) -> Manifest | None:
        return self.last_assembly.envelope.manifest() if self.last_assembly else None

    def meter(self) -> ContextMeter:
        u = self.usage()
        c = self.settings.compaction
        return ContextMeter(
            u.window, u.total, u.by_component, u.by_lane, c.tier1_threshold, c.tier2_threshold
        )

    def _context_usage(self) -> tuple[int, int]:
        u = self.usage()
        return u.total, u.window

    # --- logging ------------------------------------------------------------------------

    @property
    def cancel_event(self) -> asyncio.Event:
        """Set by `cancel()`; generation and running tools stop when it is set."""
        return self._cancel

    def log(self, kind: str, content: Any, turn_id: str = "", **kw: Any) -> str:
        """Append one event to the store's log for this session (its turn in `meta`)."""
        meta = dict(kw.pop("meta", {}) or {})
        meta.setdefault("turn", self.conv.turn)
        return self.runtime.store.events.append(
            self.id, kind, content, turn_id=turn_id, meta=meta, **kw
        )

    def record_compaction(self, ev: CompactionEvent, turn_id: str = "") -> CompactionEvent:
        self.compactions.append(ev)
        self.log("compaction", ev.to_json(), turn_id)
        return ev

    # --- the turn -----------------------------------------------------------------------

    def cancel(self, delivered_text: str | None = None) -> None:
        """Barge-in: stop generating now. `delivered_text` is what the user heard of this
        turn's answer (all rounds); None means everything streamed so far was delivered."""
        self._delivered = delivered_text
        self._stopped = None  # a barge-in wins over a budget stop
        self._cancel.set()

    def stop(self, kept_text: str, reason: str = "budget") -> None:
        """The front end has all it will use of this answer (its budget is reached, or it
        repeats itself): stop generating now and keep `kept_text`, the turn's visible text up
        to the cut (all rounds), as a normal finished answer, not an interrupted one."""
        self._stopped = (kept_text, reason)
        self._cancel.set()

    @property
    def stopped(self) -> tuple[str, str] | None:
        """(kept text, why) when `stop()` ended this turn's generation early."""
        return self._stopped

    def amend_interrupted(self, turn_id: str, delivered_text: str) -> bool:
        """Barge-in after the answer was complete but still being spoken: keep only what the
        user heard of the latest answer, marked interrupted (the full answer stays in the log).
        Returns False when there is nothing to amend."""
        return amend_interrupted(self.conv, self.log, turn_id, delivered_text)

    def tool_names(self) -> list[str]:
        return self.tools.registry.names

    async def handle_text(
        self, text: str, *, turn_id: str | None = None, tool_choice: str | None = None
    ) -> AsyncIterator[Event]:
        """Answer one user message, yielding events as they happen.

        `tool_choice` names a tool the model must call first: the first round is constrained
        by a GBNF grammar that only admits that call (its group is loaded if needed), and the
        state path is skipped.
        """
        if self.closed:
            raise RuntimeError("the session is closed")
        self.yield_model()
        await self._stop_idle()
        async with self._lock:
            self._cancel = asyncio.Event()
            self._delivered = None
            self._stopped = None
            turn_no = self.conv.turn + 1
            turn_id = turn_id or f"{self.id}-t{turn_no}"
            t0 = time.perf_counter()
            stages: dict[str, float] = {}
            user_id = self.log("user", text, turn_id, role="user", meta={"turn": turn_no})
            request = Request(text=text, turn_id=turn_id, id=user_id)
            # A required tool means the caller wants the model; the state path steps aside.
            use_state = self.resolver is not None and not tool_choice
            # Reminder commands ("snooze it ten minutes", "done") act before anything else.
            answered = (
                reminder_command(text, self.runtime.store, self.id) if not tool_choice else None
            )
            if answered is None and use_state and self.resolver:
                # In a worker thread: an embedded question costs ~10 ms of encoder time, and
                # a "yes" runs the approved tool to its end (a web fetch, seconds). Other
                # sessions' audio and turns go on meanwhile. The store is shared under its lock.
                answered = await asyncio.to_thread(self.resolver.resolve, text, session_id=self.id)
            stages["state_ms"] = (time.perf_counter() - t0) * 1000
            path = "state" if answered is not None else "model"
            if answered is not None:
                self.assembler.admit_turn(self.conv, request)
                answer_id = self.log(
                    "state_answer",
                    answered.text,
                    turn_id,
                    role="assistant",
                    meta={"intent": answered.intent, "sources": answered.sources},
                )
                # The answer may carry outside text (an approved fetch's page): it must never
                # render as the template's own markers, such as a forged user turn.
                item = Item(
                    answer_id,
                    "assistant",
                    "assistant",
                    neutralize(answered.text),
                    turn=self.conv.turn,
                )
                item.reason = f"state answer ({answered.intent})"
                item.meta["path"] = "state"
                self.conv.append(item)
                yield StateAnswer(
                    turn_id,
                    answered.text,
                    answered.intent,
                    answered.sources,
                    answered.latency_ms,
                    spoken=answered.spoken,
                )
                yield TurnDone(turn_id, answered.text, "state")
            else:
                try:
                    async for event in model_turn(self, request, stages, t0, tool_choice):
                        yield event
                except (ModelError, ContextOverflowError) as exc:
                    # The user's words are logged already; say what failed instead of crashing,
                    # and take the turn out of view so the next one renders.
                    self.log("error", str(exc), turn_id, meta={"where": "model"})
                    self.conv.withdraw_turn(turn_no, f"turn {turn_no} failed: {exc}"[:300])
                    yield ErrorEvent(str(exc), where="model")
                    spoken = getattr(exc, "spoken", MODEL_FAILED)
                    yield TurnDone(turn_id, spoken, "model", failed=True)
            stages["total_ms"] = (time.perf_counter() - t0) * 1000
            yield self.meter()
            yield LatencyEvent(turn_id, stages)
            if self.record_metrics:
                with contextlib.suppress(Exception):
                    self.runtime.store.metrics.record(self.id, turn_id, stages, path)
            for ev in await self.hooks.after_turn(self.conv, self.ledger):
                yield self.record_compaction(ev, turn_id)
        self._idle = asyncio.create_task(self._run_idle())

    def interrupted(self, turn_id: str, spoken: list[str], shown: str, raw: str) -> TurnDone:
        """Keep only what was delivered, marked interrupted."""
        return interrupted_answer(
            self.conv,
            self.log,
            turn_id,
            spoken=spoken,
            shown=shown,
            raw=raw,
            delivered=self._delivered,
        )

    # --- reminders ----------------------------------------------------------------------

    def reminders_due(self) -> None:
        """The scheduler fired reminders: the front end says them at its next gap."""
        if self.on_due is not None and not self.closed:
            self.on_due()

    async def announce(self, turn_id: str = "") -> list[Event]:
        """Say every fired reminder no one has heard yet: logged and kept in the conversation
        as Annie's words (so "snooze it" has a referent), marked announced in this session.
        Waits for a turn in progress; returns nothing when none are waiting."""
        if self.closed:
            return []
        async with self._lock:
            if self.closed:  # closed while waiting: the next session says them
                return []
            reminders = self.runtime.store.reminders
            try:
                reminders.fire_due()  # due ones the scheduler has not reached yet count too
                rows = reminders.unannounced()
            except StoreError as exc:
                return [ErrorEvent(f"the reminders cannot be read: {exc}", where="reminders")]
            if not rows:
                return []
            text, away = announcement(rows, self.started_at)
            ids = [r.id for r in rows]
            event_id = self.log(
                "reminder", text, turn_id, role="assistant", meta={"reminders": ids, "away": away}
            )
            item = Item(event_id, "assistant", "assistant", text, turn=self.conv.turn)
            item.reason = "reminder announcement"
            self.conv.append(item)
            reminders.mark_announced(ids, self.id)
            listed = [{"id": r.id, "text": r.text, "due": r.due, "kind": r.kind} for r in rows]
            return [ReminderEvent(turn_id, text, away, listed), self.meter()]

    # --- idle time and the end ----------------------------------------------------------

    async def _run_idle(self) -> None:
        try:
            if self.idle_after is not None:
                await self.idle_after()
            if self._warm_pending:  # stopped for the user: the next turn should not pay it
                self._warm_stop = threading.Event()
                await self._warm_up()
            events = await self.hooks.on_idle(self.conv, self.ledger)
        except asyncio.CancelledError:
            return
        except Exception as exc:
            self._emit(ErrorEvent(f"idle compaction failed: {exc}", where="compaction"))
            return
        for ev in events:
            self._emit(self.record_compaction(ev))

    def _emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    async def _stop_idle(self) -> None:
        task, self._idle = self._idle, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def idle(self) -> list[CompactionEvent]:
        """Run idle-time work now and wait for it (replay, tests, an explicit pause)."""
        await self._stop_idle()
        before = len(self.compactions)
        await self._run_idle()
        return self.compactions[before:]

    def warm_up(self) -> None:
        """Evaluate the fixed head now, while the user has not spoken yet.

        On a new session the first turn would otherwise prefill the system prompt, briefing
        and tool schemas (about 1,900 tokens) before its first token. When the user starts to
        speak or type first (`yield_model`), the evaluation stops at its next batch, so it
        never competes with recognizing their words; what it evaluated is kept, and the rest
        is evaluated in the next idle time (or by the turn, if that needs the model).
        """
        if self.settings.context.warm_up and not self.conv.items and self._idle is None:
            # Pending until it has run to the end: a turn that cancels the task, before it
            # starts or mid-wait (the evaluation itself is shielded and stops at `stop`),
            # leaves the rest to the next idle time.
            self._warm_pending = True
            self._warm_stop = threading.Event()
            self._idle = asyncio.create_task(self._warm_up())

    def yield_model(self) -> None:
        """The user started to speak or type: background model work stops for them, this
        session's and, where one model serves every session in turn, the others' too."""
        self.runtime.yield_model(self)

    def stop_background(self) -> None:
        """Stop this session's warm-up and idle-time model work at their next batch; what is
        left is done in its next idle time."""
        self._warm_stop.set()
        self.hooks.on_user_activity()

    async def _warm_up(self) -> None:
        stop = self._warm_stop
        prompt = self.ledger.prompt(self.conv, add_generation_prompt=False)
        try:
            # Shielded: a turn that arrives first cancels this wait, never the evaluation (a
            # job still queued behind another would be lost); `stop` ends it instead.
            # The shared head first (kept once per server, usually at start-up), so that
            # this session restores it and evaluates only its own briefing.
            head = await asyncio.shield(self.runtime.keep_head(stop))
            if head is not None:
                self.ledger.record_call(head, turn=self.conv.turn, label="shared head")
            stats = await asyncio.shield(self.runtime.llm.prefill(prompt, stop))
        except ModelError as exc:
            self._warm_pending = False  # the turn will say what is wrong; no retry loop
            self._emit(ErrorEvent(f"warming the model up failed: {exc}", where="model"))
            return
        self._warm_pending = stats.cancelled
        self.ledger.record_call(stats, turn=self.conv.turn, label="warm-up")

    async def wait_idle(self) -> None:
        """Wait for the background idle work scheduled after the last turn."""
        if self._idle is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._idle

    async def close(self) -> list[CompactionEvent]:
        """End the session: tier 3 through the hooks, then mark it ended in the store."""
        if self.closed:
            return []
        self.closed = True
        # A warm-up still evaluating (shielded from the cancel below) would hold the model
        # that tier 3 may want; it stops at its next batch.
        self.stop_background()
        await self._stop_idle()
        async with self._lock:
            events = [
                self.record_compaction(ev)
                for ev in await self.hooks.on_disconnect(self.conv, self.ledger)
            ]
        with contextlib.suppress(Exception):
            self.runtime.store.sessions.end(self.id)
        if self in self.runtime.sessions:
            self.runtime.sessions.remove(self)
        return events
