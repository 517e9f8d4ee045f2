"""A session's background work: the warm-up of its fixed head, embedding what was said, and
idle-time compaction.

Both run only while no turn is in flight, as one task that the next turn cancels. The model's
time belongs to the user: when they start to speak or type (`stop`), an evaluation stops at
its next batch, what it evaluated is kept, and the rest is done in the next idle time. Idle
work first waits for the answer to begin sounding (`wait_for`: the front end's `Sounding`),
since it would take the cores the first spoken sentence needs.

What was said is written as episodes with no embedding (`memory.episodes`), so writing a turn
never waits on the embedding model; `remember` embeds them here, a batch at a time, before
compaction, and a backlog (a store written by an older version, an import) drains the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from bot.turn.events import ErrorEvent, Event
from compaction.events import CompactionEvent
from models.base import ModelError

if TYPE_CHECKING:
    from compaction.hooks import CompactionHooks
    from context.conversation import Conversation
    from context.ledger import Ledger
    from models.base import LLM, CallStats


class IdleWork:
    """The warm-up and idle-time compaction of one conversation."""

    def __init__(
        self,
        *,
        conv: Conversation,
        ledger: Ledger,
        llm: LLM,
        hooks: CompactionHooks,
        keep_head: Callable[[threading.Event | None], Awaitable[CallStats | None]],
        emit: Callable[[Event], None],
        compacted: Callable[[CompactionEvent], CompactionEvent],
        warm_up_enabled: bool,
        remember: Callable[[], bool] | None = None,
        wait_for: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self.conv = conv
        self.ledger = ledger
        self.llm = llm
        self.hooks = hooks
        self.keep_head = keep_head
        self.emit = emit
        self.compacted = compacted
        self.warm_up_enabled = warm_up_enabled
        # Embeds one batch of what was said (blocking); True while more is left.
        self.remember = remember
        # What idle work waits for first (the answer's first sound, where one is said).
        self.wait_for = wait_for
        self._task: asyncio.Task[None] | None = None
        self._stop = threading.Event()
        # Set until the warm-up has run to its end: a turn that stopped it leaves the rest to
        # the next idle time.
        self._warm_pending = False

    def schedule(self) -> None:
        """A turn ended: idle-time work runs in the background until the next one."""
        self._task = asyncio.create_task(self._run())

    async def cancel(self) -> None:
        """A turn begins (or the session ends): the background task stops now."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def run_now(self) -> None:
        await self.cancel()
        await self._run()

    async def wait(self) -> None:
        """Wait for the work scheduled after the last turn."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def stop(self) -> None:
        """Stop model work at its next batch; the rest waits for the next idle time."""
        self._stop.set()
        self.hooks.on_user_activity()

    def warm_up(self) -> None:
        """Evaluate the fixed head now, while the user has not spoken yet: otherwise the first
        turn prefills the system prompt, briefing and tool schemas before its first token."""
        if self.warm_up_enabled and not self.conv.items and self._task is None:
            self._warm_pending = True
            self._stop = threading.Event()
            self._task = asyncio.create_task(self._warm_up())

    async def _run(self) -> None:
        try:
            if self.wait_for is not None:
                await self.wait_for()
            if self._warm_pending:  # stopped for the user: the next turn should not pay it
                self._stop = threading.Event()
                await self._warm_up()
            if self.remember is not None:
                # A batch at a time: a turn that begins cancels the wait between batches.
                while await asyncio.to_thread(self.remember):
                    pass
            events = await self.hooks.on_idle(self.conv, self.ledger)
        except asyncio.CancelledError:
            return
        except Exception as exc:
            self.emit(ErrorEvent(f"idle compaction failed: {exc}", where="compaction"))
            return
        for ev in events:
            self.emit(self.compacted(ev))

    async def _warm_up(self) -> None:
        stop = self._stop
        prompt = self.ledger.prompt(self.conv, add_generation_prompt=False)
        try:
            # Shielded: a turn that arrives first cancels this wait, never the evaluation (a
            # job still queued behind another would be lost); `stop` ends it instead.
            # The shared head first (kept once per server, usually at start-up), so that
            # this session restores it and evaluates only its own briefing.
            head = await asyncio.shield(self.keep_head(stop))
            if head is not None:
                self.ledger.record_call(head, turn=self.conv.turn, label="shared head")
            stats = await asyncio.shield(self.llm.prefill(prompt, stop))
        except ModelError as exc:
            self._warm_pending = False  # the turn will say what is wrong; no retry loop
            self.emit(ErrorEvent(f"warming the model up failed: {exc}", where="model"))
            return
        self._warm_pending = stats.cancelled
        self.ledger.record_call(stats, turn=self.conv.turn, label="warm-up")
