"""Raw clients for hostile input: HTTP over a bare socket, offers to mutate, odd audio tracks.

What a browser or aiohttp would never send has to be written by hand: a body dribbled one
byte a second, connections left half open, an SDP offer cut in half or stripped of its audio.
Each HTTP helper returns the status and the JSON reason (or what came back instead), so a
report can say exactly what was sent and what the server answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import json
import re
import time
from dataclasses import dataclass
from typing import Any

import av
import numpy as np
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

from testkit.peer import MicTrack


@dataclass
class Reply:
    status: int  # 0: the connection closed without an HTTP answer
    body: str
    seconds: float

    @property
    def reason(self) -> str:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            return str(json.loads(self.body).get("reason", ""))
        return ""

    def clear_error(self, *statuses: int) -> bool:
        """A refusal a page can show: the expected status with a JSON reason."""
        return self.status in statuses and bool(self.reason)

    def short(self) -> str:
        return f"HTTP {self.status} {self.body[:160]!r} after {self.seconds:.1f}s"


async def request(
    port: int,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    *,
    drip_s: float = 0.0,
    timeout: float = 15.0,
) -> Reply:
    """One HTTP/1.1 request on a fresh socket. With `drip_s`, the body goes one byte per
    `drip_s` seconds (a slow client) until the server answers or the body is sent."""
    t0 = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = {"Host": f"127.0.0.1:{port}", "Connection": "close", **(headers or {})}
    if body and "Content-Length" not in head:
        head["Content-Length"] = str(len(body))
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in head.items()), "", ""]
    try:
        writer.write("\r\n".join(lines).encode())
        if drip_s:
            answer = asyncio.ensure_future(reader.read())
            for byte in body:
                if answer.done():
                    break
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.wait({answer}, timeout=drip_s)
            raw = await asyncio.wait_for(answer, timeout)
        else:
            writer.write(body)
            await writer.drain()
            raw = await asyncio.wait_for(reader.read(), timeout)
    except (TimeoutError, ConnectionError):
        raw = b""
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    return _parse(raw, time.monotonic() - t0)


def _parse(raw: bytes, seconds: float) -> Reply:
    head, _, body = raw.partition(b"\r\n\r\n")
    match = re.match(rb"HTTP/1\.[01] (\d{3})", head)
    return Reply(int(match.group(1)) if match else 0, body.decode(errors="replace"), seconds)


async def half_open(port: int, count: int) -> list[asyncio.StreamWriter]:
    """`count` connections that send half a request line and then nothing."""
    writers = []
    for _ in range(count):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /api/offer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        await writer.drain()
        writers.append(writer)
    return writers


async def offer_sdp(audio: bool = True) -> str:
    """A real aiortc offer (with or without an audio section, always with a data channel)."""
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    try:
        if audio:
            pc.addTrack(MicTrack())
        pc.createDataChannel("events")
        await pc.setLocalDescription(await pc.createOffer())
        return str(pc.localDescription.sdp)
    finally:
        await pc.close()


class Offerer:
    """A real peer's offer posted by hand; `answer()` completes the connection, so that leaving
    the `async with` closes it the way a page does (the server frees its slot at once)."""

    def __init__(self) -> None:
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))

    async def offer(self) -> str:
        self.pc.addTrack(MicTrack())
        self.pc.createDataChannel("events")
        await self.pc.setLocalDescription(await self.pc.createOffer())
        return str(self.pc.localDescription.sdp)

    async def answer(self, body: str) -> None:
        data = json.loads(body)
        await self.pc.setRemoteDescription(RTCSessionDescription(data["sdp"], data["type"]))
        for _ in range(100):
            if self.pc.connectionState == "connected":
                return
            await asyncio.sleep(0.1)

    async def __aenter__(self) -> Offerer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.pc.close()


def mutations(sdp: str) -> dict[str, str]:
    """Offers a browser would never send, by name."""
    lines = sdp.splitlines()
    audio_at = next(i for i, ln in enumerate(lines) if ln.startswith("m=audio"))
    no_codecs = [
        ln
        for ln in lines
        if not ln.startswith(("a=rtpmap:", "a=fmtp:", "a=rtcp-fb:"))
        or not _in_audio(lines, ln, audio_at)
    ]
    fake = [
        re.sub(r"^(m=audio \d+ \S+) .*$", r"\1 96", ln) if ln.startswith("m=audio") else ln
        for ln in no_codecs
    ]
    fake.insert(audio_at + 1, "a=rtpmap:96 NOTACODEC/12345")
    junk = [f"a=x-junk-{i}:{'z' * 200}" for i in range(250)]  # ~50 KB, under the body cap
    return {
        "truncated": sdp[: len(sdp) // 2],
        "unsupported codecs": "\r\n".join(fake) + "\r\n",
        "huge": "\r\n".join(lines[: audio_at + 1] + junk + lines[audio_at + 1 :]) + "\r\n",
        "garbage lines": "v=0\r\n" + "this is not sdp\r\n" * 50,
    }


def _in_audio(lines: list[str], line: str, audio_at: int) -> bool:
    i = lines.index(line)
    nxt = next(
        (j for j in range(audio_at + 1, len(lines)) if lines[j].startswith("m=")), len(lines)
    )
    return audio_at < i < nxt


class ShapeTrack(MicTrack):
    """A microphone that sends its clips at another sample rate and channel layout."""

    def __init__(self, rate: int, layout: str) -> None:
        super().__init__()
        self.rate, self.layout = rate, layout

    async def recv(self) -> av.AudioFrame:
        frame = await super().recv()  # 20 ms at 48 kHz mono, paced
        mono = frame.to_ndarray().reshape(-1)
        n = self.rate // 50
        idx = np.linspace(0, mono.size - 1, n).astype(np.int64)
        samples = mono[idx].astype(np.int16)
        channels = 2 if self.layout == "stereo" else 1
        data = np.repeat(samples, channels).reshape(1, -1)
        out = av.AudioFrame.from_ndarray(data, format="s16", layout=self.layout)
        out.sample_rate = self.rate
        out.pts = int(frame.pts or 0) * self.rate // 48000
        out.time_base = fractions.Fraction(1, self.rate)
        return out


def noise(seconds: float, rate: int = 48000, seed: int = 0) -> np.ndarray:
    """Loud noise clipped at full scale: what a bad microphone or a knock sends."""
    rng = np.random.default_rng(seed)
    wave = rng.normal(0, 40000, int(seconds * rate))
    return np.clip(wave, -32768, 32767).astype(np.int16)


def json_junk() -> dict[str, Any]:
    """Data-channel messages that are JSON but not a message the page sends."""
    return {
        "object without type": '{"hello": 1}',
        "array": "[1, 2, 3]",
        "number": "42",
        "string": '"text"',
        "null": "null",
        "type null": '{"type": null}',
        "type list": '{"type": ["text"]}',
        "unknown type": '{"type": "shutdown"}',
        "text not a string": '{"type": "text", "text": 5}',
        "text empty": '{"type": "text", "text": "   "}',
        "approval bad decision": '{"type": "approval", "id": "x", "decision": 3}',
        "deep nesting": "[" * 5000 + "]" * 5000,
        "not json": "{type: text",
    }
