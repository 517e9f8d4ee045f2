"""Move blocking generation into a worker thread and its pieces back into asyncio.

Shared by the llama.cpp adapter and the scripted fake: one FIFO lock per event loop so that
calls on one model run one after another, a thread-side stop flag mirrored from the caller's
asyncio cancel event, and stop-string matching that never shows part of a stop string.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Executor
from typing import Any

Push = Callable[[str], None]
Worker = Callable[[threading.Event, Push], None]


class _Done:
    pass


_DONE = _Done()


class LoopLocks:
    """One asyncio.Lock per event loop (an asyncio lock cannot cross loops).

    asyncio.Lock wakes waiters in arrival order, so calls are served first come, first served.
    """

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[loop] = lock
        return lock


async def _mirror(cancel: asyncio.Event, flag: threading.Event) -> None:
    await cancel.wait()
    flag.set()


async def stream_from_thread(
    executor: Executor,
    lock: asyncio.Lock,
    worker: Worker,
    cancel: asyncio.Event | None,
) -> AsyncIterator[str]:
    """Run `worker(stop_flag, push)` on `executor`, yielding what it pushes.

    The stop flag is set when `cancel` is set or the consumer stops iterating; the worker
    checks it between tokens. The lock is held until the worker has really finished, so the
    next call never races a generation that is still winding down.
    """
    async with lock:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        flag = threading.Event()

        def push(item: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def run() -> None:
            try:
                worker(flag, push)
            except BaseException as exc:  # delivered to the consumer, not lost in the thread
                push(exc)
            finally:
                push(_DONE)

        watcher: asyncio.Task[None] | None = None
        if cancel is not None:
            if cancel.is_set():
                flag.set()
            watcher = asyncio.ensure_future(_mirror(cancel, flag))
        future = loop.run_in_executor(executor, run)
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            flag.set()
            if watcher is not None:
                watcher.cancel()
            await asyncio.wait([future])


async def call_in_thread(executor: Executor, lock: asyncio.Lock, fn: Callable[[], Any]) -> Any:
    """Run a blocking call on the model's thread, in turn with streams."""
    async with lock:
        return await asyncio.get_running_loop().run_in_executor(executor, fn)


class StopMatcher:
    """Hold back text that could be the start of a stop string; report when one matches."""

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = [s for s in stops if s]
        self._held = ""
        self.hit = False

    def feed(self, text: str) -> str:
        """Text that is safe to emit now; sets `hit` when a stop string has appeared."""
        if not self.stops:
            return text
        buf = self._held + text
        first = -1
        for stop in self.stops:
            at = buf.find(stop)
            if at >= 0 and (first < 0 or at < first):
                first = at
        if first >= 0:
            self.hit = True
            self._held = ""
            return buf[:first]
        keep = 0
        for stop in self.stops:
            for n in range(min(len(stop) - 1, len(buf)), 0, -1):
                if stop.startswith(buf[-n:]):
                    keep = max(keep, n)
                    break
        self._held = buf[len(buf) - keep :] if keep else ""
        return buf[: len(buf) - keep]

    def flush(self) -> str:
        """Text held back when generation ended without a stop string."""
        out, self._held = self._held, ""
        return out
