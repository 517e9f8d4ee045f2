"""The scheduler that fires reminders: it watches the table and tells the runtime what fell due.

`ReminderScheduler` runs beside the runtime's sessions. It sleeps until the earliest due time
in the reminders table, marks every reminder that has fallen due as fired (in the table, so a
restart loses nothing), and tells the runtime, which tells every open session. It wakes early
whenever this process writes a reminder (`store.reminders.listeners`) and looks again every
`poll_s` for writes by other processes (`python -m bot reminders add` beside a running
server). What a session then says is `bot.reminders.announcement`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from memory.db import StoreError
from memory.rows import ReminderRow, from_iso, utc_now
from memory.store import Store

log = logging.getLogger(__name__)

# How often the table is looked at for changes made by another process.
POLL_S = 2.0


class ReminderScheduler:
    """Fires reminders from the table on time; `start()` in a running loop, `stop()` after."""

    def __init__(
        self,
        store: Callable[[], Store],
        on_fired: Callable[[list[ReminderRow]], None],
        *,
        poll_s: float = POLL_S,
    ) -> None:
        self._store = store
        self.on_fired = on_fired
        self.poll_s = poll_s
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.fired: list[ReminderRow] = []  # everything this scheduler fired (tests, doctor)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self.running:
            return
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._store().reminders.listeners.append(self.kick)
        self._task = asyncio.create_task(self._run(), name="reminder-scheduler")

    def kick(self) -> None:
        """Look at the table again now (reminders changed). Safe from any thread."""
        loop, wake = self._loop, self._wake
        if loop is None or wake is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            wake.set()
        else:
            loop.call_soon_threadsafe(wake.set)

    async def stop(self) -> None:
        task, self._task = self._task, None
        with contextlib.suppress(ValueError, StoreError):
            self._store().reminders.listeners.remove(self.kick)
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def check(self) -> float:
        """Fire what is due now; returns how long to sleep before looking again."""
        reminders = self._store().reminders
        fired = reminders.fire_due()
        if fired:
            self.fired.extend(fired)
            log.info("reminders due: %s", ", ".join(r.id for r in fired))
            self.on_fired(fired)
        upcoming = reminders.next_due()
        if upcoming is None:
            return self.poll_s
        wait = (from_iso(upcoming) - utc_now()).total_seconds()
        return min(self.poll_s, max(0.0, wait))

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            # Cleared before reading the table, so a write during the read still wakes us.
            self._wake.clear()
            try:
                delay = self.check()
            except StoreError as exc:
                log.warning("cannot read reminders: %s", exc)
                delay = self.poll_s
            except Exception:
                log.exception("the reminder scheduler failed; retrying")
                delay = self.poll_s
            # asyncio.timeout, not wait_for: on Python 3.11 a wait_for whose event is set in the
            # step its task is cancelled returns instead of raising, so stop() waited for ever on
            # a loop that went on (a reminder that fires wakes this loop, and a test stopped it
            # right then: it hung 600 s with two processes busy beside it).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()
