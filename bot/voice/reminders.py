"""Reminders on a voice connection: waiting for a gap, then saying them as Annie's own turn.

A reminder must never be said over the user or cut into Annie's own answer. `GapWaiter`
watches a `busy()` test (the voice session's: someone speaking, an utterance being
transcribed, a turn being answered or spoken, no page listening) and starts the
announcement only after the line has been quiet for `REMINDER_GAP_S`; a turn that slips in
first sends it back to wait for the next gap. `say_reminders` is the announcement itself:
the session's `announce()` events go to the page, their text to the utterance, sentence by
sentence.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bot.turn.events import ErrorEvent, Event, ReminderEvent
from bot.voice.chunker import SentenceChunker
from bot.voice.types import ActiveTurn, TurnSession

log = logging.getLogger(__name__)

# Quiet needed before Annie speaks first, and how often it is checked.
REMINDER_GAP_S = 0.6
GAP_POLL_S = 0.05


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
        # Never busy yet: at the start of a connection, reminders that waited go first.
        self._last_busy = float("-inf")

    def request(self) -> None:
        if self.stopped:
            return
        self.wanted = True
        if self._task is None or self._task.done():
            self._task = self.spawn(self._wait())

    async def _wait(self) -> None:
        while self.wanted and not self.stopped:
            now = time.monotonic()
            if self.busy():
                self._last_busy = now
            elif now - self._last_busy >= self.gap_s:
                self.wanted = False
                if not await self.start():
                    self.wanted = True  # a turn slipped in first: wait for the next gap
                continue
            await asyncio.sleep(GAP_POLL_S)


async def say_reminders(
    session: TurnSession, active: ActiveTurn, send: Callable[[Event], None]
) -> bool:
    """Announce what is waiting as the turn `active` and speak it to the end (unless the user
    cuts in); False when nothing was said. A failure goes to the page, never up."""
    utterance = active.utterance
    try:
        events = await session.announce(active.clock.turn_id)
        for event in events:
            send(event)
            if isinstance(event, ReminderEvent) and not active.interrupted:
                chunker = SentenceChunker()
                for piece in [*chunker.feed(event.text + " "), *chunker.flush()]:
                    utterance.add(piece)
        utterance.close()
        await utterance.done()
    except asyncio.CancelledError:
        utterance.stop()
        raise
    except Exception as exc:
        log.exception("announcing reminders failed")
        utterance.stop()
        send(ErrorEvent(f"saying a reminder failed: {exc}", where="reminders"))
    return bool(utterance.pieces)
