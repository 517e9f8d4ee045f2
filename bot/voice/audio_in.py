"""The microphone side: read the incoming WebRTC track, resample, run the VAD frame by frame.

Two small tasks per connection. The reader does nothing but `recv()` and resample, so frames
never pile up inside aiortc's unbounded receive queue. The processor cuts 16 kHz audio into
the VAD's 512-sample frames and hands each frame with its speech probability to a callback
(endpointing and barge-in). If processing ever falls more than `max_backlog_ms` behind, the
oldest audio is dropped and counted rather than queued without bound: late audio is worth
less than a responsive endpoint. A change of sample rate or channel layout mid-stream
starts a fresh resampler instead of ending the input.

Before any of that, aiortc's receiver holds each audio packet until four more have arrived
(its jitter buffer's prefetch), 80 ms of delay on every word the user says, which the
endpointer then sees late. Nothing here plays the audio out on a clock, so there is nothing
for that prefetch to smooth: `prompt_receiver` makes it hand each packet on as soon as the
next one shows it complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import av
import numpy as np
from aiortc import MediaStreamTrack, RTCRtpReceiver
from aiortc.jitterbuffer import JitterBuffer
from aiortc.mediastreams import MediaStreamError

from bot.voice.audio_convert import InputResampler
from bot.voice.endpoint import FRAME_SAMPLES, SAMPLE_RATE
from models.base import Pcm, VADStream

log = logging.getLogger(__name__)

FrameCallback = Callable[[Pcm, float], None]

# aiortc keeps the buffer in a private attribute of the receiver (name-mangled); if a version
# moves it, the receiver keeps its default and the server says so once.
_BUFFER_ATTR = "_RTCRtpReceiver__jitter_buffer"
_AUDIO_CAPACITY = 16  # packets, as aiortc's own audio buffer


def prompt_receiver(receiver: RTCRtpReceiver) -> JitterBuffer | None:
    """Give an audio receiver a jitter buffer that hands each packet on when the next one
    arrives (1 packet of prefetch instead of 4); the buffer, or None where aiortc has none to
    replace. Call before any packet arrives (right after the offer is applied)."""
    if not isinstance(getattr(receiver, _BUFFER_ATTR, None), JitterBuffer):
        log.warning("aiortc's receiver has no audio jitter buffer to shorten; it keeps 80 ms")
        return None
    buffer = JitterBuffer(capacity=_AUDIO_CAPACITY, prefetch=1)
    setattr(receiver, _BUFFER_ATTR, buffer)
    return buffer


@dataclass
class InputStats:
    frames_received: int = 0
    vad_frames: int = 0
    samples_dropped: int = 0


class AudioInput:
    """Consumes one incoming audio track until it ends or `stop()` is called."""

    def __init__(
        self,
        track: MediaStreamTrack,
        vad: VADStream,
        on_frame: FrameCallback,
        *,
        max_backlog_ms: int = 1000,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self.track = track
        self.vad = vad
        self.on_frame = on_frame
        self.on_end = on_end
        self.max_backlog = SAMPLE_RATE * max_backlog_ms // 1000
        self.stats = InputStats()
        self._resampler = InputResampler(SAMPLE_RATE)
        self._pending: deque[Pcm] = deque()
        self._pending_samples = 0
        self._carry = np.zeros(0, dtype=np.float32)
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._read(), name="audio-in-read"),
            asyncio.create_task(self._process(), name="audio-in-vad"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def _read(self) -> None:
        try:
            while True:
                frame = await self.track.recv()
                self.stats.frames_received += 1
                if not isinstance(frame, av.AudioFrame):
                    continue
                pcm = self._convert(frame)
                if pcm.size:
                    self._pending.append(pcm)
                    self._pending_samples += pcm.size
                    self._drop_backlog()
                    self._wake.set()
                # recv() does not suspend while aiortc has frames queued: yield, so a burst
                # (after the loop was busy) is processed as it is read, not dropped.
                await asyncio.sleep(0)
        except MediaStreamError:
            log.info("incoming audio track ended")
        finally:
            self._pending.append(np.zeros(0, dtype=np.float32))  # end marker
            self._wake.set()

    def _convert(self, frame: av.AudioFrame) -> Pcm:
        try:
            return self._resampler.convert(frame)
        except ValueError:
            # The sender changed rate or channel layout mid-stream (a renegotiated codec, a
            # swapped device); a resampler is fixed to the first format it sees, so start a
            # new one rather than let the microphone go deaf for the rest of the session.
            log.info(
                "incoming audio changed to %d Hz, %s; resampling afresh",
                frame.sample_rate,
                frame.layout.name,
            )
            self._resampler = InputResampler(SAMPLE_RATE)
            return self._resampler.convert(frame)

    def _drop_backlog(self) -> None:
        dropped = 0
        while self._pending_samples > self.max_backlog and len(self._pending) > 1:
            old = self._pending.popleft()
            self._pending_samples -= old.size
            dropped += old.size
        if dropped:
            self.stats.samples_dropped += dropped
            log.warning("audio processing fell behind; dropped %d ms of input", dropped // 16)

    async def _process(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                chunk = self._pending.popleft()
                if chunk.size == 0:
                    if self.on_end is not None:
                        self.on_end()
                    return
                self._pending_samples -= chunk.size
                self._feed(chunk)
            # Let the reader and the rest of the loop run between batches.
            await asyncio.sleep(0)

    def _feed(self, chunk: Pcm) -> None:
        data = np.concatenate([self._carry, chunk]) if self._carry.size else chunk
        whole = data.size - data.size % FRAME_SAMPLES
        for start in range(0, whole, FRAME_SAMPLES):
            frame = data[start : start + FRAME_SAMPLES]
            probability = float(self.vad.probability(frame))
            self.stats.vad_frames += 1
            self.on_frame(frame, probability)
        self._carry = data[whole:].copy()
