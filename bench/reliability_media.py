"""Hostile audio and a failing disk: each case counted handled or not, like the others.

Audio: long silence (no turn may start, and the next question is still answered), loud
clipped noise, a microphone track that stops and is replaced, and clips sent at other sample
rates and channel layouts mid-stream; handled means the server stays up and answers the next
spoken question. Storage: the disk fills (RLIMIT_FSIZE on the server process, so every write
fails with EFBIG) and the database is locked by another process (an EXCLUSIVE transaction held
by this process); each must give an error event the page shows, the server must carry on once
the fault is gone, and no turn the client was told is complete may be missing afterwards.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable

import numpy as np
from aiortc import RTCRtpSender

from bench.reliability_hostile import Case, first_error, guarded, responsive
from testkit import reliability_raw as raw
from testkit import reliability_store as rs
from testkit.peer import MicTrack, VoiceClient
from testkit.reliability import ServerProcess, Speech, connect, no_sessions, turn

QUESTION = "What time is it?"


async def audio_cases(server: ServerProcess, speech: Speech, silence_s: float) -> list[Case]:
    clip = await speech.clip(QUESTION)
    await no_sessions(server)
    client = await connect(server.url)
    cases = []
    try:
        cases.append(await guarded("audio", "silence", _silence(server, client, clip, silence_s)))
        cases.append(await guarded("audio", "clipped noise", _noise(server, client, clip)))
        cases.append(await guarded("audio", "track restart", _restart_track(server, client, clip)))
    finally:
        await client.close()
    # aiortc's Opus encoder is set up by a track's first frame and refuses a frame of another
    # rate or layout, so a change of format is a new connection here; G.711 makes the server
    # decode 8 kHz audio instead of Opus's 48 kHz.
    for rate, layout, codec in [
        (16000, "mono", ""),
        (44100, "stereo", ""),
        (48000, "mono", "PCMU"),
    ]:
        name = f"{rate} Hz {layout} {codec or 'Opus'}"
        cases.append(await guarded("audio", name, _reshaped(server, clip, rate, layout, codec)))
    return cases


async def _answered(server: ServerProcess, client: VoiceClient, clip: np.ndarray) -> str:
    """'' when the next spoken question is answered and the server is responsive; else why."""
    try:
        await turn(client, clip, timeout=60.0, listen_s=1.5)
    except TimeoutError as exc:
        return f"the next question was not answered: {exc}"
    return "" if await responsive(server) else "/healthz did not answer within 1 s"


async def _silence(
    server: ServerProcess, client: VoiceClient, clip: np.ndarray, seconds: float
) -> Case:
    n = len(client.events)
    cpu0 = server.stats().cpu_s
    await asyncio.sleep(seconds)  # the mic track sends exact-zero frames between clips
    cpu = (server.stats().cpu_s - cpu0) / seconds
    started = [e for e in client.events[n:] if e["type"] in ("transcript", "assistant_done")]
    problem = f"{len(started)} turns or transcripts from silence" if started else ""
    problem = problem or await _answered(server, client, clip)
    got = problem or f"no turn; server CPU {cpu:.2f} s/s while silent; then answered"
    return Case("audio", f"{seconds:.0f} s of silence", not problem, "silence", got)


async def _noise(server: ServerProcess, client: VoiceClient, clip: np.ndarray) -> Case:
    n = len(client.events)
    client.mic.play(raw.noise(3.0))
    await asyncio.sleep(5.0)
    heard = [e["text"] for e in client.events[n:] if e["type"] == "transcript" and e["final"]]
    problem = await _answered(server, client, clip)
    got = problem or f"server up, then answered (noise transcribed as {heard!r})"
    return Case("audio", "3 s of clipped noise", not problem, "full-scale noise", got)


async def _restart_track(server: ServerProcess, client: VoiceClient, clip: np.ndarray) -> Case:
    sender = next(s for s in client.pc.getSenders() if s.track is not None)
    sender.replaceTrack(None)  # the microphone stops (RTP stops flowing)
    await asyncio.sleep(3.0)
    client.mic = MicTrack()
    sender.replaceTrack(client.mic)  # and comes back as a new track
    problem = await _answered(server, client, clip)
    got = problem or "answered on the new track"
    return Case("audio", "track stops and restarts", not problem, "replaceTrack", got)


async def _reshaped(
    server: ServerProcess, clip: np.ndarray, rate: int, layout: str, codec: str
) -> Case:
    await no_sessions(server)
    client = VoiceClient(server.url, mic=raw.ShapeTrack(rate, layout))
    if codec:
        # A transceiver made first is the one connect()'s addTrack takes over.
        transceiver = client.pc.addTransceiver("audio")
        caps = RTCRtpSender.getCapabilities("audio").codecs
        transceiver.setCodecPreferences([c for c in caps if c.mimeType == f"audio/{codec}"])
    try:
        await client.connect()
        problem = await _answered(server, client, clip)
    finally:
        await client.close()
    name = f"{rate} Hz {layout} {codec or 'Opus'}"
    return Case("audio", name, not problem, f"speech as {name}", problem or "answered")


async def storage_cases(server: ServerProcess) -> list[Case]:
    await no_sessions(server)
    client = await connect(server.url)
    try:
        await turn(client, QUESTION, listen_s=1.0)
        full = await guarded(
            "storage", "full disk", _fault(server, client, "full disk", _fill(server))
        )
        locked = await guarded(
            "storage", "database locked", _fault(server, client, "database locked", _lock(server))
        )
        told = sorted({e["turn_id"] for e in client.of_type("assistant_done")})
    finally:
        await client.close()
    server.stop()
    server.start()  # what was committed must be there after a restart too
    lost = rs.missing_turns(server.db_path, told)
    for case in (full, locked):
        if lost:
            case.handled = False
            case.got += f"; turns lost after restart: {lost}"
    return [full, locked]


class _Fault:
    """Switches a fault on and off again."""

    def __init__(self, on: Callable[[], None], off: Callable[[], None]) -> None:
        self.on, self.off = on, off


def _fill(server: ServerProcess) -> _Fault:
    return _Fault(lambda: server.limit_file_size(0), lambda: server.limit_file_size(None))


def _lock(server: ServerProcess) -> _Fault:
    holder = sqlite3.connect(server.db_path, timeout=1.0, isolation_level=None)

    def on() -> None:
        holder.execute("BEGIN EXCLUSIVE")

    def off() -> None:
        holder.execute("ROLLBACK")
        holder.close()

    return _Fault(on, off)


async def _fault(server: ServerProcess, client: VoiceClient, name: str, fault: _Fault) -> Case:
    """Under the fault a typed question must give an error event; after it, an answer."""
    n = len(client.events)
    fault.on()
    try:
        client.send_text("Do I have any reminders?")
        got, ok = await first_error(client, n, 30.0)
    finally:
        fault.off()
    up = await responsive(server)
    try:
        await turn(client, "How full is the context?", timeout=60.0, listen_s=1.0)
        after = "answered once the fault was gone"
    except TimeoutError as exc:
        after, ok = f"no answer once the fault was gone: {exc}", False
    return Case("storage", name, ok and up, name, f"{got}; {after}")
