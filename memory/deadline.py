"""A deadline on a thread's own pure-Python work, for library calls that hostile input can keep
busy for hours: a recurrence rule that never matches is walked day by day to the year 9999.

`within(seconds)` arms a deadline for the calling thread. If the block is still running when it
passes, one watchdog thread raises `Overrun` in it (CPython's `PyThreadState_SetAsyncExc`, the
way a KeyboardInterrupt reaches a thread), and the caller catches it around the block. It lands
at the next bytecode the thread runs: it stops Python loops (dateutil, icalendar and
recurring_ical_events are pure Python), and reaches a thread waiting in C when that call
returns. Arming costs a lock and a dict entry, so the libraries run at full speed; a trace
function that looked at the clock slowed their loops 2.3 times.

`Overrun` is a BaseException, so a library's `except Exception` cannot swallow it. It is raised
at most once per arming, and one still pending when the block ends is cleared, so nothing lands
after `within` has returned; it can land while the block exits, so the caller's `try` must hold
the whole `with`.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Overrun(BaseException):
    """The work in a `within` block ran past its deadline."""


class _Watchdog:
    """One daemon thread, started on first use, that raises `Overrun` in threads past their
    deadlines."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._due: dict[int, float] = {}  # thread id -> its deadline (time.monotonic())
        self._thread: threading.Thread | None = None

    def arm(self, ident: int, deadline: float) -> None:
        with self._changed:
            if ident in self._due:
                raise RuntimeError("a deadline is already armed in this thread")
            self._due[ident] = deadline
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._watch, name="annie-deadline", daemon=True
                )
                self._thread.start()
            self._changed.notify()

    def disarm(self, ident: int) -> bool:
        """Forget the thread's deadline; True when it had already fired."""
        with self._changed:
            return self._due.pop(ident, None) is None

    def _watch(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                for ident, deadline in list(self._due.items()):
                    if deadline <= now:
                        del self._due[ident]
                        _raise_in(ident, Overrun)
                first = min(self._due.values(), default=None)
                self._changed.wait(None if first is None else max(0.0, first - now))


def _raise_in(ident: int, exc: type[BaseException] | None) -> None:
    """Raise `exc` in thread `ident` at its next bytecode; None clears one still pending."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(ident), ctypes.py_object(exc) if exc is not None else None
    )


_WATCHDOG = _Watchdog()


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Run the block, raising `Overrun` in it once `seconds` have passed (one level per thread)."""
    ident = threading.get_ident()
    _WATCHDOG.arm(ident, time.monotonic() + seconds)
    try:
        yield
    finally:
        if _WATCHDOG.disarm(ident):
            _raise_in(ident, None)
