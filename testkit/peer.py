"""A scripted voice client: a real aiortc peer that talks to the server the way the page does.

It posts its offer to `/api/offer` over HTTP, plays recorded speech into its microphone track
(paced 20 ms frames, silence in between), collects the data-channel events, and measures the
audio it receives. The voice tests and `bench voice` use it; so can anyone checking a server
from a script.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import av
import numpy as np
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

from bot.voice.audio_convert import (
    Int16,
    OutputResampler,
    PacedAudioTrack,
    frame_rms,
    make_frame,
    split_frames,
)
from models.base import TTS

# Received frames louder than this count as speech (silence frames are exact zeros).
VOICED_RMS = 0.003


async def speak_48k(tts: TTS, text: str) -> Int16:
    """`text` spoken by the TTS voice, as 48 kHz mono int16 (what a microphone would send)."""
    chunks = [chunk async for chunk in tts.synthesize(text)]
    resampler = OutputResampler(tts.sample_rate)
    parts = [resampler.convert(c.pcm) for c in chunks] + [resampler.flush()]
    return np.concatenate(parts).astype(np.int16)


def mono(frame: av.AudioFrame) -> Int16:
    """A received frame's samples as one channel of int16 (aiortc decodes Opus to stereo)."""
    data = frame.to_ndarray().astype(np.float32)
    channels = len(frame.layout.channels)
    data = data.mean(axis=0) if frame.format.is_planar else data.reshape(-1, channels).mean(axis=1)
    return data.astype(np.int16)


class MicTrack(PacedAudioTrack):
    """Plays queued clips in real time, silence otherwise; records when each clip played."""

    def __init__(self) -> None:
        super().__init__()
        self._frames: deque[tuple[Int16, int]] = deque()
        self._clip = 0
        self.clip_started: dict[int, float] = {}
        self.clip_ended: dict[int, float] = {}
        # A speaker heard by this microphone without echo cancelling (`leak`).
        self._leak_gain = 0.0
        self._leaked = np.zeros(0, dtype=np.float32)

    def leak(self, gain: float, delay_ms: float = 60.0) -> None:
        """Mix what the client receives back into the microphone, `gain` times as loud
        (0.1 is -20 dB) and `delay_ms` later (the room and the capture); 0 stops it."""
        self._leak_gain = gain
        self._leaked = np.zeros(int(48 * delay_ms) if gain > 0 else 0, dtype=np.float32)

    def hear(self, samples: Int16) -> None:
        """Audio the client played (48 kHz mono): leaked into the microphone if leaking."""
        if self._leak_gain > 0:
            leaked = samples.astype(np.float32) * self._leak_gain
            self._leaked = np.concatenate([self._leaked, leaked])

    def play(self, samples: Int16) -> int:
        """Queue a clip; returns its number (see `clip_started` / `clip_ended`)."""
        self._clip += 1
        for frame in split_frames(samples):
            self._frames.append((frame, self._clip))
        return self._clip

    @property
    def busy(self) -> bool:
        return bool(self._frames)

    async def recv(self) -> av.AudioFrame:
        await self._pace()
        if not self._frames:
            return make_frame(self._with_leak(self._silence), self._pts)
        samples, clip = self._frames.popleft()
        now = time.monotonic()
        self.clip_started.setdefault(clip, now)
        if not self._frames or self._frames[0][1] != clip:
            self.clip_ended[clip] = now
        return make_frame(self._with_leak(samples), self._pts)

    def _with_leak(self, samples: Int16) -> Int16:
        if self._leak_gain <= 0 or self._leaked.size == 0:
            return samples
        n = min(samples.size, self._leaked.size)
        mixed = samples.astype(np.float32)
        mixed[:n] += self._leaked[:n]
        self._leaked = self._leaked[n:]
        return np.clip(mixed, -32768, 32767).astype(np.int16)


@dataclass
class HeardFrame:
    at: float
    rms: float


@dataclass
class VoiceClient:
    """Connects to `base_url`, plays speech, collects events and received audio."""

    base_url: str
    token: str = ""
    mic: MicTrack = field(default_factory=MicTrack)
    events: list[dict[str, Any]] = field(default_factory=list)
    heard: list[HeardFrame] = field(default_factory=list)
    session_id: str = ""

    def __post_init__(self) -> None:
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self._changed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._channel: Any = None
        self._open = asyncio.Event()

    async def connect(self, resume: str | None = None, timeout: float = 20.0) -> str:
        pc = self.pc
        pc.addTrack(self.mic)
        channel = pc.createDataChannel("events")
        self._channel = channel

        @channel.on("open")
        def _open() -> None:
            self._open.set()

        @channel.on("message")
        def _message(message: object) -> None:
            if isinstance(message, str):
                self.events.append(json.loads(message))
                self._changed.set()

        @pc.on("track")
        def _track(track: MediaStreamTrack) -> None:
            self._tasks.append(asyncio.create_task(self._listen(track)))

        await pc.setLocalDescription(await pc.createOffer())
        body: dict[str, Any] = {"sdp": pc.localDescription.sdp, "type": "offer"}
        if resume:
            body["resume"] = resume
        headers = {"X-Annie-Token": self.token} if self.token else {}
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{self.base_url}/api/offer", json=body, headers=headers) as response,
        ):
            data = await response.json()
            if response.status != 200:
                raise RuntimeError(f"offer refused: HTTP {response.status}: {data}")
        await pc.setRemoteDescription(RTCSessionDescription(sdp=data["sdp"], type=data["type"]))
        await asyncio.wait_for(self._open.wait(), timeout)
        self.session_id = str(data["session_id"])
        return self.session_id

    async def _listen(self, track: MediaStreamTrack) -> None:
        with contextlib.suppress(MediaStreamError):
            while True:
                frame = await track.recv()
                if isinstance(frame, av.AudioFrame):
                    self.heard.append(HeardFrame(time.monotonic(), frame_rms(frame)))
                    self.mic.hear(mono(frame))
                    self._changed.set()

    def send_text(self, text: str) -> None:
        self._channel.send(json.dumps({"type": "text", "text": text}))

    def send(self, message: dict[str, Any]) -> None:
        self._channel.send(json.dumps(message))

    async def wait_for(
        self, predicate: Callable[[VoiceClient], Any], timeout: float, what: str = "condition"
    ) -> Any:
        """Wait until `predicate(self)` is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate(self)
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                kinds = [e.get("type") for e in self.events]
                raise TimeoutError(f"timed out waiting for {what}; events so far: {kinds}")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.5))

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]

    def voiced_since(self, since: float) -> list[HeardFrame]:
        return [f for f in self.heard if f.at >= since and f.rms >= VOICED_RMS]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.mic.stop()
        await self.pc.close()
