"""Finding the gap on a voice connection to say reminders in, as Annie's own turn.

A reminder must never be said over the user or cut into Annie's own answer. `GapWaiter` is
told when reminders fall due (`request`, at the conversation's `RemindersDue`) and whenever
the line may have changed (`changed`: a turn began or ended, hearing reported something, the
page opened). It looks at the voice session's `busy()` test only then, never on a timer of its
own, and starts the announcement once the line has been quiet for `REMINDER_GAP_S`; a turn
that slips in first sends it back to wait for the next gap. The announcement itself is a
`SayReminders` turn of the conversation, sent by the voice session (`bot.voice.session`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

# Quiet needed before Annie speaks first.
REMINDER_GAP_S = 0.6


class GapWaiter:
    """Runs `start()` at the next gap; `start` returns False when it found the line busy."""

    def __init__(
        self,
        busy: Callable[[], bool],
        start: Callable[[], Awaitable[bool]],
        spawn: Callable[[Any], asyncio.Task[Any]],
        *,
        gap_s: float = REMINDER_GAP_S,
    ) -> None:
        self.busy = busy
        self.start = start
        self.spawn = spawn
        self.gap_s = gap_s
        self.wanted = False
        self.stopped = False
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        # Never busy yet: at the start of a connection, reminders that waited go first.
        self._last_busy = float("-inf")

    def request(self) -> None:
        """Reminders fell due: say them at the next gap."""
        if self.stopped:
            return
        self.wanted = True
        if self._task is None or self._task.done():
            self._task = self.spawn(self._wait())

    def changed(self) -> None:
        """The line may have changed: look again."""
        self._changed.set()

    async def _wait(self) -> None:
        while self.wanted and not self.stopped:
            # No await between the look and the clear: no change can slip in between.
            self._changed.clear()
            if self.busy():
                await self._changed.wait()
                self._last_busy = time.monotonic()  # busy until this change at least
                continue
            left = self.gap_s - (time.monotonic() - self._last_busy)
            if left > 0:
                # Quiet so far: a change within the rest of the gap is looked at first.
                # asyncio.timeout, not wait_for: see ReminderScheduler._run (a cancel lost).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(left):
                        await self._changed.wait()
                continue
            self.wanted = False
            if not await self.start():
                self.wanted = True  # a turn slipped in first: wait for the next gap
