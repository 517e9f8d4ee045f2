"""How a download shows itself to the person waiting for it: sizes and times in human units,
a progress bar redrawn in place on a terminal (a line per tenth in a log), and, once the speed
means something, one line saying how long the rest will take. `models.download` drives it; a
caller that prints model sizes (`models.fetch`) uses the same units.

Standard library only, like the downloader.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO


def human_size(n: float) -> str:
    """Decimal units, as download sizes are quoted: 5.68 GB, 41.3 MB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}" if unit == "GB" else f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def human_time(seconds: float) -> str:
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """A bar redrawn in place on a terminal; a line per tenth when the output is a log."""

    def __init__(
        self,
        out: TextIO,
        total: int | None,
        start: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out, self.total, self.clock = out, total, clock
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.restart(start)

    def restart(self, start: int) -> None:
        self.start = start
        self.done = start
        self.t0 = self.clock()
        self.shown_at = -1.0
        self.tenth = -1
        self.estimated = False

    def speed(self) -> float:
        elapsed = self.clock() - self.t0
        return (self.done - self.start) / elapsed if elapsed > 0 else 0.0

    def update(self, done: int) -> None:
        self.done = done
        now = self.clock()
        self._maybe_estimate(now)
        if self.tty:
            if now - self.shown_at >= 0.1 or done == self.total:
                self.shown_at = now
                self.out.write("\r" + self.line() + "\x1b[K")
                self.out.flush()
            return
        tenth = done * 10 // self.total if self.total else int((now - self.t0) // 30)
        if tenth > self.tenth:
            self.tenth = tenth
            self.out.write(self.line() + "\n")
            self.out.flush()

    def _maybe_estimate(self, now: float) -> None:
        # Once, when the speed means something: after 2 s, or 5% of what is left.
        if self.estimated or not self.total or self.done >= self.total:
            return
        got = self.done - self.start
        if now - self.t0 < 2.0 and got < (self.total - self.start) / 20:
            return
        self.estimated = True
        speed = self.speed()
        if speed > 0:
            left = self.total - self.done
            self.say(
                f"at the measured {human_size(speed)}/s the remaining {human_size(left)} "
                f"take about {human_time(left / speed)}"
            )

    def line(self) -> str:
        speed = self.speed()
        rate = f"{human_size(speed)}/s"
        if not self.total:
            return f"    {human_size(self.done)}  {rate}"
        frac = min(1.0, self.done / self.total)
        bar = "#" * int(frac * 24)
        eta = (self.total - self.done) / speed if speed > 0 else None
        left = f"  {human_time(eta)} left" if eta is not None and frac < 1 else ""
        return (
            f"    [{bar:<24}] {frac:4.0%}  {human_size(self.done)} / {human_size(self.total)}"
            f"  {rate}{left}"
        )

    def say(self, text: str) -> None:
        """A line of its own, above the bar on a terminal."""
        self.out.write(("\r\x1b[K" if self.tty else "") + f"    {text}\n")
        self.out.flush()

    def end(self) -> None:
        if self.tty:
            self.out.write("\n")
            self.out.flush()
