"""One conversation: user text in, typed events out, every step in the event log.

A turn is three steps: record the user's words, ask the chain of answerers
(`bot.turn.answers`: reminder commands, approvals, the state path, then the model), record
the answer. Every front end (the voice page, `chat`, `ask`, replay) drives this same loop.
Compaction hooks run before each model call (`model_turn`), after the turn, and in idle time
between turns (a background task the next turn cancels). A front end ends a turn early through
`cancel(delivered)` (barge-in: keep only what was heard, marked interrupted) or
`stop(kept)` (its budget is reached: the text up to the cut is the answer).

A front end that runs beside the session (the voice connection, the terminal chat) drives it
through one inbox (`send`, with the commands of `bot.turn.inbox`) and reads everything the
session says from one outbox (`outbox`): each turn's events ending with `AnswerClosed`, and
what comes between turns (reminders due, idle-time compactions, reminders said on another
device). Nothing in the session calls back into a front end. `handle_text` is the same turn
for an in-process caller that reads the events itself (`ask`, replay, tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from bot.reminders.announcement import announcement, listed, say_unheard
from bot.turn.answers import TO_MODEL, Answered, Decision, Resume
from bot.turn.events import (
    MODEL_FAILED,
    AnswerClosed,
    CompactionEvent,
    ContextMeter,
    ErrorEvent,
    Event,
    LatencyEvent,
    Prepared,
    ReminderEvent,
    RemindersDue,
    StateAnswer,
    TurnDone,
)
from bot.turn.idle import IdleWork
from bot.turn.inbox import (
    Amend,
    Command,
    Enough,
    Interrupt,
    Paused,
    SayReminders,
    Sounding,
    Turn,
    UserActive,
    UserMessage,
)
from bot.turn.interruption import amend_interrupted
from bot.turn.model_inputs import Memory, PromptParts
from bot.turn.model_turn import Assembled, model_turn
from bot.turn.noticing import note_stated
from bot.turn.record import Recorder
from bot.turn.speculation import Ahead
from bot.turn.surroundings import ModelHost, Parts, Shared, TurnControl
from context.assembler import Assembly, ContextOverflowError, Request
from context.conversation import neutralize
from context.envelope import Manifest
from context.ledger import Usage
from context.provenance import PRIVATE
from memory.approvals import WEB_TOOLS
from memory.db import StoreError
from memory.rows import utc_now
from models.base import ModelError

if TYPE_CHECKING:
    from memory.rows import ReminderRow

# After a barge-in the turn gets this long to wind down before it is cancelled.
CANCEL_GRACE_S = 2.0
# Episodes embedded per step of idle work: about a third of a second on a 2-core CPU.
REMEMBER_BATCH = 64
log = logging.getLogger(__name__)


class Session:
    """A conversation over a shared model; one turn at a time."""

    def __init__(
        self, host: ModelHost, parts: Parts, shared: Shared, *, record_metrics: bool = True
    ) -> None:
        self.host = host
        self.settings = settings = parts.settings
        self.conv = conv = parts.conv
        self.ledger = ledger = parts.ledger
        self.assembler = parts.assembler
        self.tools = parts.tools
        self.hooks = hooks = parts.hooks
        self.store = store = shared.store
        self.llm = llm = shared.llm
        self.embedder = shared.embedder
        self.chain = shared.chain
        # Off where the front end stores its own end-to-end timings under the same turn id.
        self.record_metrics = record_metrics
        self.id = conv.session_id
        self.record = Recorder(self.id, conv, store.events.append)
        self.last_assembly: Assembly | None = None
        self.compactions: list[CompactionEvent] = []
        self.closed = False
        # Everything the session says to a front end that runs beside it (`send`).
        self.outbox: asyncio.Queue[Event] = asyncio.Queue()
        self._turns: asyncio.Queue[Turn] = asyncio.Queue()
        self._taking: asyncio.Task[None] | None = None  # takes `_turns` one at a time
        self._current: asyncio.Task[None] | None = None  # the turn being taken
        self._aside: set[asyncio.Task[Any]] = set()  # preparations, grace timers
        self._running: str | None = None  # the id of the turn being answered
        # Turns sent and not begun, and those of them interrupted already (what was heard).
        self._waiting: set[str] = set()
        self._cut_ahead: dict[str, str | None] = {}
        # Set while no answer waits for its first sound (a voiced turn clears it until the
        # front end sends `Sounding`): idle-time model work waits for it.
        self._sounding = asyncio.Event()
        self._sounding.set()
        # Approval-gated tools the user allowed for the rest of this session.
        web = settings.tools.web_approval
        self.allowed: set[str] = set(WEB_TOOLS) if web == "never_ask" else set()
        self.control = TurnControl()
        # What was prepared while the user paused (`bot.turn.speculation`).
        self.ahead = Ahead()
        self.last_heard = 0.0  # monotonic time of the user's last words here (0: none yet)
        self._lock = asyncio.Lock()
        self.background = IdleWork(
            conv=conv,
            ledger=ledger,
            llm=llm,
            hooks=hooks,
            keep_head=host.keep_head,
            emit=self._emit,
            compacted=self.record_compaction,
            warm_up_enabled=settings.context.warm_up,
            remember=self._remember,
            wait_for=self._sounding.wait,
        )
        self.started_at = utc_now()

    # --- the inbox ----------------------------------------------------------------------

    def send(self, command: Command) -> None:
        """A front end's one way in (`bot.turn.inbox`): a turn waits for the one before it
        and its events go to `outbox`, closed by `AnswerClosed`; a control acts now."""
        if self.closed:
            return
        if isinstance(command, UserMessage | SayReminders):
            self._waiting.add(command.turn_id)
            self._turns.put_nowait(command)
            if self._taking is None:
                self._taking = asyncio.create_task(self._take_turns())
        elif isinstance(command, Interrupt):
            if command.turn_id == self._running:
                self.cancel(command.delivered)
                if self._current is not None:  # one that does not wind down is cancelled
                    self._aside_task(_cancel_after(self._current, CANCEL_GRACE_S))
            elif command.turn_id in self._waiting:  # not begun yet: cut as it begins
                self._cut_ahead[command.turn_id] = command.delivered
        elif isinstance(command, Enough):
            if command.turn_id == self._running:
                self.stop(command.kept, command.reason)
        elif isinstance(command, Amend):
            if self.amend_interrupted(command.turn_id, command.delivered):
                done = TurnDone(command.turn_id, command.delivered, command.path, interrupted=True)
                self.outbox.put_nowait(done)
        elif isinstance(command, Sounding):
            self._sounding.set()
        elif isinstance(command, UserActive):
            self.yield_model()
        elif isinstance(command, Paused):
            self._aside_task(self._prepare_for(command.text))

    async def _take_turns(self) -> None:
        while True:
            turn = await self._turns.get()
            self._current = asyncio.create_task(self._take(turn))
            await asyncio.wait({self._current})  # a turn cancelled after its grace is over too
            self._current = None
            self._waiting.discard(turn.turn_id)
            self._cut_ahead.pop(turn.turn_id, None)
            self.outbox.put_nowait(AnswerClosed(turn.turn_id))

    async def _take(self, turn: Turn) -> None:
        try:
            if isinstance(turn, SayReminders):
                for event in await self.announce(turn.turn_id):
                    self.outbox.put_nowait(event)
                return
            if turn.voiced:
                self._sounding.clear()
            async for event in self.handle_text(
                turn.text, turn_id=turn.turn_id, tool_choice=turn.tool_choice
            ):
                self.outbox.put_nowait(event)
        except Exception as exc:
            log.exception("turn %s failed", turn.turn_id)
            self.outbox.put_nowait(ErrorEvent(f"the turn failed: {exc}", where="session"))

    async def _prepare_for(self, text: str) -> None:
        spoken = await self.prepare(text)
        self.outbox.put_nowait(Prepared(text, spoken or ""))

    def _aside_task(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._aside.add(task)
        task.add_done_callback(self._aside.discard)

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

    def tool_names(self) -> list[str]:
        return self.tools.registry.names

    @property
    def cancel_event(self) -> asyncio.Event:
        """Set by `cancel()` or `stop()`; generation and running tools stop when it is set."""
        return self.control.event

    def log(self, kind: str, content: Any, turn_id: str = "", **kw: Any) -> str:
        """Append one event to the store's log for this session (its turn in `meta`)."""
        return self.record.log(kind, content, turn_id, **kw)

    def record_compaction(self, ev: CompactionEvent, turn_id: str = "") -> CompactionEvent:
        self.compactions.append(ev)
        self.log("compaction", ev.to_json(), turn_id)
        return ev

    # --- the turn -----------------------------------------------------------------------

    def cancel(self, delivered_text: str | None = None) -> None:
        """Barge-in: stop generating now. `delivered_text` is what the user heard of this
        turn's answer (all rounds); None means everything streamed so far was delivered."""
        self.control.cancel(delivered_text)

    def stop(self, kept_text: str, reason: str = "budget") -> None:
        """The front end has all it will use of this answer: stop generating now and keep
        `kept_text`, the turn's visible text up to the cut (all rounds), as the answer."""
        self.control.stop(kept_text, reason)

    @property
    def stopped(self) -> tuple[str, str] | None:
        """(kept text, why) when `stop()` ended this turn's generation early."""
        return self.control.stopped

    def amend_interrupted(self, turn_id: str, delivered_text: str) -> bool:
        """Barge-in after the answer was complete but still being spoken: keep only what the
        user heard of the latest answer, marked interrupted (the full answer stays in the log).
        Returns False when there is nothing to amend."""
        return amend_interrupted(self.record, turn_id, delivered_text)

    async def handle_text(
        self,
        text: str,
        *,
        turn_id: str | None = None,
        tool_choice: str | None = None,
        decided: Decision | None = None,
    ) -> AsyncIterator[Event]:
        """Answer one user message, yielding events as they happen.

        `tool_choice` names a tool the model must call first: the first round is constrained
        by a grammar that only admits that call, and the answerers before the model step aside.
        `decided` is the chain's decision when the caller asked this session's chain already
        (`ask` does, so a status question never loads the model).
        """
        if self.closed:
            raise RuntimeError("the session is closed")
        self.last_heard = time.monotonic()  # where reminders are said (`Runtime`)
        self.ahead.settle(text)  # kept for these words, stopped for any others
        self.host.yield_model(self)
        await self.background.cancel()
        async with self._lock:
            self.control = TurnControl()
            turn_no = self.conv.turn + 1
            turn_id = turn_id or f"{self.id}-t{turn_no}"
            self._running = turn_id
            self._waiting.discard(turn_id)
            if turn_id in self._cut_ahead:
                self.control.cancel(self._cut_ahead.pop(turn_id))
            t0 = time.perf_counter()
            user_id = self.log("user", text, turn_id, role="user", meta={"turn": turn_no})
            # A mood the user states about themselves, in their own words (`memory.mood`).
            with contextlib.suppress(StoreError):
                self.store.moods.observe(self.id, user_id, text)
            request = Request(text=text, turn_id=turn_id, id=user_id)
            decision: Decision = decided or TO_MODEL
            if not tool_choice and decided is None:
                decision = await self.chain.decide(text, self.id, cancel=self.control.event)
            stages = {"state_ms": (time.perf_counter() - t0) * 1000}
            if isinstance(decision, Resume):  # the approved call's run is tool time
                stages["tools_ms"] = decision.latency_ms
                stages["state_ms"] -= decision.latency_ms
            if isinstance(decision, Answered):
                for event in self._answered(request, decision):
                    yield event
            else:
                resumed = decision if isinstance(decision, Resume) else None
                model = self._model(request, turn_no, stages, t0, tool_choice, resumed)
                async for event in model:
                    yield event
            stages["total_ms"] = (time.perf_counter() - t0) * 1000
            yield self.meter()
            yield LatencyEvent(turn_id, stages)
            if self.record_metrics:
                path = "state" if isinstance(decision, Answered) else "model"
                with contextlib.suppress(Exception):
                    self.store.metrics.record(self.id, turn_id, stages, path)
            # What the user stated is remembered without the model, after the answer; a
            # statement the chain raised as a contradiction waits for the user's yes.
            if not (isinstance(decision, Answered) and decision.path == "fact"):
                note_stated(self.store, self.id, turn_id, user_id, text)
            for ev in await self.hooks.after_turn(self.conv, self.ledger):
                yield self.record_compaction(ev, turn_id)
            self._running = None
        self.background.schedule()

    async def prepare(self, text: str) -> str | None:
        """The user paused after `text` and may be done: get ready to answer it, recording
        nothing (`bot.turn.speculation`). Returns the state path's spoken answer, or None."""
        if self.closed or self._lock.locked():
            self.ahead.stats.skipped += 1
            return None
        return await self.ahead.prepare(
            self._prompt_parts(),
            self._memory(),
            self.chain,
            text,
            settings=self.settings,
            sends_out=self.tools.sends_out(self.allowed),
        )

    def _answered(self, request: Request, decision: Answered) -> list[Event]:
        """An answer without the model: kept in the conversation as Annie's words."""
        result = decision.result
        self.assembler.admit_turn(self.conv, request)
        # An answer read from private notes is private too: its episode, and its place in the
        # conversation, which is cleared once a tool that sends data out is in reach.
        held = self._private_sources(result.sources)
        meta: dict[str, object] = {
            "intent": result.intent,
            "sources": result.sources,
            "path": decision.path,
        }
        if held:
            meta["private"] = True
        item = self.record.say(
            "state_answer",
            result.text,
            request.turn_id,
            # Never rendered as the template's own markers, such as a forged user turn.
            item_text=neutralize(result.text),
            meta=meta,
            reason=f"{decision.path} answer ({result.intent})",
            path="state",
        )
        if held:
            item.meta["sensitivity"] = PRIVATE
            item.source_ids = held
        return [
            StateAnswer(
                request.turn_id,
                result.text,
                result.intent,
                result.sources,
                result.latency_ms,
                spoken=result.spoken,
            ),
            TurnDone(request.turn_id, result.text, "state"),
        ]

    def _private_sources(self, sources: list[str]) -> list[str]:
        """The private notes among an answer's sources (all of its notes when the store
        cannot say: unvouched, they are kept in as private)."""
        notes = [s for s in sources if s.startswith("note-")]
        if not notes:
            return []
        try:
            return sorted(self.store.provenance.private_among(notes))
        except Exception:
            log.warning("could not read whether an answer's notes are private; kept as private")
            return notes

    async def _model(
        self,
        request: Request,
        turn_no: int,
        stages: dict[str, float],
        t0: float,
        tool_choice: str | None,
        resumed: Resume | None,
    ) -> AsyncIterator[Event]:
        """The model's answer; a failure is said, and the turn is taken out of view."""
        if resumed is not None and resumed.approval.status != "declined":
            web = resumed.call.name in WEB_TOOLS
            if resumed.standing or (web and self.settings.tools.web_approval == "session"):
                self.allow(resumed.call.name)
        turn = model_turn(
            request,
            self._prompt_parts(),
            self._memory(),
            self.tools,
            self.control,
            record=self.record,
            settings=self.settings,
            stages=stages,
            t0=t0,
            allowed=frozenset(self.allowed),
            recalled=self.ahead.recalled(request.text),  # searched in the pause, if it was
            tool_choice=tool_choice,
            resumed=resumed,
        )
        # The last round's prompt is the session's once the turn ends (a failed call's too).
        assembly: Assembly | None = None
        try:
            async for event in turn:
                if isinstance(event, Assembled):  # the session's to keep, no front end's
                    assembly = event.assembly
                    continue
                if isinstance(event, CompactionEvent):
                    self.record_compaction(event, request.turn_id)
                yield event
        except (ModelError, ContextOverflowError) as exc:
            # The user's words are logged already; say what failed instead of crashing,
            # and take the turn out of view so the next one renders.
            self.log("error", str(exc), request.turn_id, meta={"where": "model"})
            self.conv.withdraw_turn(turn_no, f"turn {turn_no} failed: {exc}"[:300])
            yield ErrorEvent(str(exc), where="model")
            spoken = getattr(exc, "spoken", MODEL_FAILED)
            yield TurnDone(request.turn_id, spoken, "model", failed=True)
        finally:
            self.last_assembly = assembly or self.last_assembly

    def allow(self, tool: str) -> None:
        """The user allowed `tool` for the rest of this session (web tools go together)."""
        added = set(WEB_TOOLS) if tool in WEB_TOOLS else {tool}
        if added - self.allowed:
            self.allowed |= added
            self.log("allowance", ", ".join(sorted(added)), meta={"tools": sorted(added)})

    def _prompt_parts(self) -> PromptParts:
        """What builds this session's prompts (`bot.turn.model_inputs`)."""
        return PromptParts(self.conv, self.ledger, self.assembler, self.llm, self.hooks)

    def _memory(self) -> Memory:
        """What this session reads memory through (`bot.turn.model_inputs`)."""
        return Memory(self.store, self.embedder, self.id)

    # --- reminders ----------------------------------------------------------------------

    def reminders_due(self) -> None:
        """The scheduler fired reminders: the front end says them at its next gap."""
        if not self.closed:
            self.outbox.put_nowait(RemindersDue())

    async def announce(self, turn_id: str = "") -> list[Event]:
        """Say every fired reminder no one has heard yet: logged and kept in the conversation
        as Annie's words (so "snooze it" has a referent), marked announced in this session.
        Waits for a turn in progress; returns nothing when none are waiting."""
        if self.closed:
            return []
        async with self._lock:
            if self.closed:  # closed while waiting: the next session says them
                return []
            try:
                said = say_unheard(self.store, self.record, self.id, self.started_at, turn_id)
            except StoreError as exc:
                return [ErrorEvent(f"the reminders cannot be read: {exc}", where="reminders")]
            if said is None:
                return []
            text, away, rows = said
            return [ReminderEvent(turn_id, text, away, listed(rows)), self.meter()]

    def show_reminders(self, rows: list[ReminderRow]) -> None:
        """Reminders said on the user's other device: this page shows them, unsaid."""
        text, away = announcement(rows, self.started_at)
        self._emit(ReminderEvent("", text, away, listed(rows), elsewhere=True))

    # --- idle time and the end ----------------------------------------------------------

    def _remember(self) -> bool:
        """Embed a batch of episodes written without an embedding (`memory.episodes`); True
        while more are left. A failure is logged and leaves them for the next idle time."""
        try:
            if not self.store.episodes.missing():
                return False
            # This conversation's own words wait for an embedder something else loads (recall
            # leaves them out meanwhile); an earlier one's are worth loading it for.
            model = self.store.notes.embedder
            if model is None and self.store.episodes.missing(outside=self.id):
                model = self.embedder()
            if model is None:
                return False
            return self.store.episodes.embed_missing(model, REMEMBER_BATCH) >= REMEMBER_BATCH
        except Exception as exc:
            log.warning("could not embed what was said: %s", exc)
            return False

    def _emit(self, event: Event) -> None:
        if not self.closed:
            self.outbox.put_nowait(event)

    async def idle(self) -> list[CompactionEvent]:
        """Run idle-time work now and wait for it (replay, tests, an explicit pause)."""
        before = len(self.compactions)
        await self.background.run_now()
        return self.compactions[before:]

    def warm_up(self) -> None:
        """Evaluate the fixed head now, while the user has not spoken yet (`IdleWork`)."""
        self.background.warm_up()

    def yield_model(self) -> None:
        """The user started to speak or type: background model work stops for them, this
        session's and, where one model serves every session in turn, the others' too; what
        was prepared for their last pause is not for what they say now."""
        self.ahead.drop()
        self.host.yield_model(self)

    def stop_background(self) -> None:
        """Stop this session's warm-up and idle-time model work at their next batch; what is
        left is done in its next idle time."""
        self.background.stop()

    async def wait_idle(self) -> None:
        """Wait for the background idle work scheduled after the last turn."""
        await self.background.wait()

    async def close(self) -> list[CompactionEvent]:
        """End the session: tier 3 through the hooks, then mark it ended in the store."""
        if self.closed:
            return []
        self.closed = True
        # A warm-up still evaluating (shielded from the cancel below) would hold the model
        # that tier 3 may want; it stops at its next batch.
        self.stop_background()
        await self.background.cancel()
        for task in [t for t in (self._taking, self._current) if t is not None] + [*self._aside]:
            task.cancel()
        async with self._lock:
            events = [
                self.record_compaction(ev)
                for ev in await self.hooks.on_disconnect(self.conv, self.ledger)
            ]
        with contextlib.suppress(Exception):
            self.store.sessions.end(self.id)
        self.host.ended(self)
        return events


async def _cancel_after(task: asyncio.Task[None], delay: float) -> None:
    """Cancel `task` unless it has ended within `delay` seconds."""
    await asyncio.wait({task}, timeout=delay)
    if not task.done():
        task.cancel()
