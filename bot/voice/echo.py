"""Telling Annie's own voice, come back through the user's microphone, from the user's.

The page asks the browser for echo cancellation, but a speaker without it (or a canceller
still adapting) sends her voice back, and the voice activity detector cannot tell whose voice
it hears. The server knows what it sent: echo is that audio again, later and quieter, so its
loudness rises and falls with what was sent a fixed delay before. `EchoCheck` keeps the level
of what went out (every 10 ms) and of what came in (every 16 ms). Over the last 0.4 s of the
microphone it finds the delay (up to 0.8 s: the network, the client's playout buffer, the
capture) at which the difference of the two level curves varies least; within a couple of dB
while Annie was audible, the microphone hears mostly her, and that fit teaches the echo's loss.
Once a loss is known, a voice no louder than the loudest echo it allows (plus a margin) is hers
too. The user's voice has its own rhythm and, talking over her, rises above her echo: the
barge-in goes ahead.
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from models.base import Pcm

_SENT_HOP_S = 0.010
_HEARD_HOP_S = 0.016
_FLOOR_DB = -60.0
# Sent audio quieter than this at the matching delay was a gap in Annie's speech.
_AUDIBLE_DB = -35.0
# Quieter microphone frames hold no voice of the user's to tell from echo.
_QUIET_DB = -50.0


def _db(x: np.ndarray) -> np.ndarray:
    rms = np.sqrt(np.mean(np.square(x.astype(np.float32)), axis=-1))
    return np.maximum(20.0 * np.log10(rms + 1e-9), _FLOOR_DB)


class EchoCheck:
    """Per connection: `sent` for each outgoing frame, `heard` for each microphone frame."""

    def __init__(
        self,
        threshold: float = 2.0,
        window_s: float = 0.4,
        max_delay_s: float = 0.8,
        margin_db: float = 6.0,
    ) -> None:
        self.threshold = threshold
        self.window = max(4, round(window_s / _HEARD_HOP_S))
        self.max_delay_s = max_delay_s
        keep_sent = round((max_delay_s + window_s + 0.5) / _SENT_HOP_S)
        self._sent_t: deque[float] = deque(maxlen=keep_sent)
        self._sent_db: deque[float] = deque(maxlen=keep_sent)
        self._heard_t: deque[float] = deque(maxlen=self.window)
        self._heard_db: deque[float] = deque(maxlen=self.window)
        # Wall-clock time of the microphone stream's sample 0: the earliest mapping seen, since
        # processing can only make a frame late, never early (a restarted track resets it).
        self._anchor: float | None = None
        self.last_score = float("inf")
        # (delay s, loss dB) of the echo path, once a clear fit has shown one.
        self.path: tuple[float, float] | None = None
        self.margin_db = margin_db
        # How long into her answer every delay's fit has a full window of it to compare.
        self.settle_ms = (max_delay_s + self.window * _HEARD_HOP_S) * 1000.0

    def sent(self, samples: np.ndarray | None, at: float | None = None) -> None:
        """An outgoing frame (int16 at any rate; None: silence) left at `at` (monotonic)."""
        at = time.monotonic() if at is None else at
        if samples is None or samples.size == 0:
            levels = np.full(2, _FLOOR_DB)
        else:
            halves = samples[: samples.size - samples.size % 2].reshape(2, -1) / 32768.0
            levels = _db(halves)
        for i, level in enumerate(levels):
            self._sent_t.append(at + i * _SENT_HOP_S)
            self._sent_db.append(float(level))

    def heard(self, frame: Pcm, stream_ms: float, now: float | None = None) -> None:
        """A microphone frame (16 kHz float32) that ends at `stream_ms` into the stream."""
        now = time.monotonic() if now is None else now
        start = now - stream_ms / 1000.0
        if self._anchor is None or start < self._anchor or start - self._anchor > 1.0:
            self._anchor = start
        end = self._anchor + stream_ms / 1000.0
        halves = frame[: frame.size - frame.size % 2].reshape(2, -1)
        for i, level in enumerate(_db(halves)):
            self._heard_t.append(end - (1 - i) * _HEARD_HOP_S)
            self._heard_db.append(float(level))

    def _fit(self) -> tuple[float, float, float, float] | None:
        """The delay where the window's microphone levels follow what was sent most closely:
        (spread dB, delay s, loss dB, share of the window Annie was audible), or None."""
        if len(self._heard_db) < self.window or len(self._sent_db) < 4:
            return None
        heard_t = np.asarray(self._heard_t)
        heard = np.asarray(self._heard_db)
        sent_t = np.asarray(self._sent_t)
        sent = np.asarray(self._sent_db)
        best: tuple[float, float, float, float] | None = None
        for delay in np.arange(0.0, self.max_delay_s + 1e-9, _SENT_HOP_S):
            times = heard_t - delay
            if times[0] < sent_t[0]:
                break  # older than what is kept
            ref = np.interp(times, sent_t, sent)
            loud = ref > _AUDIBLE_DB
            share = float(np.mean(loud))
            if share < 0.4:
                continue  # Annie was mostly silent then: nothing of hers to hear now
            residual = heard[loud] - ref[loud]
            spread = float(np.std(residual))
            if best is None or spread < best[0]:
                best = (spread, float(delay), float(np.mean(residual)), share)
        return best

    def score(self) -> float:
        """How far the microphone's level strays from what was sent, at the delay where it
        strays least (dB, standard deviation over the window; inf when there is nothing to
        compare). Echo is the sent audio at a fixed loss, so it strays by a few dB; a voice
        of its own does not follow Annie's loudness at any delay."""
        fit = self._fit()
        self.last_score = float("inf") if fit is None else fit[0]
        if fit is not None and fit[0] <= self.threshold and fit[3] >= 0.6:
            # A clear fit over most of the window: learn the loss (smoothed) and the delay.
            loss = fit[2] if self.path is None else 0.7 * self.path[1] + 0.3 * fit[2]
            self.path = (fit[1], loss)
        return self.last_score

    def _above_echo_db(self) -> float:
        """How far the last microphone frames rise above the loudest echo the learned loss
        allows: the loudest of what was sent within the longest delay, less the loss (dB).
        Taking the loudest over every delay makes it indifferent to a delay that moves
        (playout buffers grow and shrink) or wobbles (packets come in bursts)."""
        assert self.path is not None
        loss = self.path[1]
        sent_t = np.asarray(self._sent_t)
        sent = np.asarray(self._sent_db)
        rise = -np.inf
        for t, level in list(zip(self._heard_t, self._heard_db, strict=True))[-3:]:
            if level < _QUIET_DB:
                continue  # no voice in it to rise: the detector's memory of a sound gone
            near = (sent_t >= t - self.max_delay_s) & (sent_t <= t)
            loudest = float(sent[near].max()) if near.any() else _FLOOR_DB
            rise = max(rise, level - (loudest + loss))
        return float(rise)

    def is_echo(self) -> bool:
        """Whether the microphone's voice now is Annie's echo: a window that follows what was
        sent closely at some delay (`score`); or, once a clear fit has shown an echo path and
        its loss, a voice no more than `margin_db` above the loudest echo that loss allows
        (the user talking over her rises above it). With no echo shown (the browser's
        canceller works), only the first applies, so a quiet user is never taken for echo."""
        if self.score() <= self.threshold:
            return True
        return self.path is not None and self._above_echo_db() <= self.margin_db
