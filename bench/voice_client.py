"""What `bench voice` measures at the client: spoken turns, cut-offs and barge-ins, as heard.

Every figure here is taken where a user sits: at the client peer, from when its microphone
track sent a sample to when an audible frame of Annie's came back. Voice-to-voice runs from
the last voiced sample of the question (the clip's start time plus that sample's offset in
the clip) to the first frame louder than VOICED_RMS after it, so endpointing and the
transport both ways are inside it. The server's `latency` event for the same turn gives the
stages, and the difference between the two totals is the transport.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.pcm import resample
from testkit.peer import VOICED_RMS, VoiceClient
from testkit.turn_fixtures import RATE

MIC_RATE = 48000
# Louder than this (of full scale, over 10 ms) is speech in a clip; the noise added to the
# pause fixtures stays below it.
_CLIP_VOICED = 0.02
# Annie has gone silent after this long without an audible frame.
_QUIET_S = 0.5
# She is audible now: her last audible frame came within this long (two 20 ms frames).
_AUDIBLE_NOW_S = 0.04
# The final transcript of an utterance that ends in the fixture's last word comes within
# this long after the clip: the longest pause a turn may wait (1.5 s) plus recognition,
# which takes seconds on a busy CPU.
_LATE_FINAL_S = 5.0


class TimedEvents(list[dict[str, Any]]):
    """The client's event list, with when each event arrived (`at`, monotonic seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[float] = []

    def append(self, item: dict[str, Any]) -> None:
        self.at.append(time.monotonic())
        super().append(item)


def timed_client(url: str) -> VoiceClient:
    return VoiceClient(url, events=TimedEvents())


def _arrivals(client: VoiceClient) -> list[float]:
    events = client.events
    return events.at if isinstance(events, TimedEvents) else [0.0] * len(events)


def voiced_span_s(clip: np.ndarray, rate: int = MIC_RATE) -> tuple[float, float]:
    """Offsets (s) of the first voiced sample and just past the last one, by 10 ms frames."""
    frame = rate // 100
    n = len(clip) // frame
    frames = clip[: n * frame].astype(np.float64).reshape(n, frame) / 32768.0
    loud = np.flatnonzero(np.sqrt((frames**2).mean(axis=1)) > _CLIP_VOICED)
    if loud.size == 0:
        return 0.0, len(clip) / rate
    return float(loud[0] * frame) / rate, float((loud[-1] + 1) * frame) / rate


def to_mic(pcm16k: np.ndarray) -> np.ndarray:
    """16 kHz float32 PCM as the 48 kHz int16 a microphone track sends."""
    up = resample(pcm16k, RATE, MIC_RATE)
    return np.clip(np.round(up * 32767.0), -32768, 32767).astype(np.int16)


@dataclass
class TurnSample:
    """One spoken turn: `client_ms` is voice-to-voice as heard, `stages` the server's."""

    first: bool
    path: str
    client_ms: float
    stages: dict[str, float] = field(default_factory=dict)
    # Whether the answer was prepared in the user's pause: "hit", "miss" or "".
    prepared: str = ""

    @property
    def server_ms(self) -> float:
        return float(self.stages.get("voice_to_voice", 0.0))


@dataclass
class CutSample:
    """One utterance with a pause: `cut` when the turn was ended inside the pause."""

    name: str
    pause_ms: float
    finals: int
    early: bool
    missing_rest: bool
    heard: list[str]

    @property
    def cut(self) -> bool:
        return self.early or self.finals > 1 or self.missing_rest


def _last_voiced(client: VoiceClient) -> float:
    for frame in reversed(client.heard):
        if frame.rms >= VOICED_RMS:
            return frame.at
    return 0.0


async def settle(client: VoiceClient, timeout: float = 30.0) -> None:
    """Press stop and wait until Annie has been silent a while and the microphone is idle."""
    client.send({"type": "interrupt"})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = time.monotonic()
        if not client.mic.busy and now - _last_voiced(client) >= _QUIET_S:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)


async def _clip_time(client: VoiceClient, number: int, ended: bool = False) -> float:
    marks = client.mic.clip_ended if ended else client.mic.clip_started
    while number not in marks:
        await asyncio.sleep(0.01)
    return marks[number]


def _new_latency(client: VoiceClient, since: float, seen: set[str]) -> dict[str, Any] | None:
    for event, at in zip(client.events, _arrivals(client), strict=False):
        if (
            event.get("type") == "latency"
            and at >= since
            and event.get("turn_id") not in seen
            and "voice_to_voice" in event.get("stages", {})
        ):
            return event
    return None


async def spoken_turn(
    client: VoiceClient, clip: np.ndarray, *, first: bool, listen_s: float, timeout: float
) -> TurnSample | None:
    """Speak `clip`, measure the wait for Annie's voice, listen `listen_s`, then stop her."""
    seen = {str(e.get("turn_id")) for e in client.of_type("latency")}
    _, end_s = voiced_span_s(clip)
    number = client.mic.play(clip)
    speech_end = await _clip_time(client, number) + end_s
    try:
        latency = await client.wait_for(
            lambda c: _new_latency(c, speech_end, seen), timeout, "the turn's latency event"
        )
        heard = await client.wait_for(
            lambda c: c.voiced_since(speech_end), 15.0, "an audible answer frame"
        )
    except TimeoutError:
        await settle(client)
        return None
    stages = {k: float(v) for k, v in latency["stages"].items()}
    path = "state" if "state" in stages else "model" if "llm_first_token" in stages else "other"
    sample = TurnSample(first, path, (heard[0].at - speech_end) * 1e3, stages)
    sample.prepared = str(latency.get("prepared", ""))
    # One machine, one monotonic clock: the transport's two hops apart.
    if latency.get("speech_end_at") and latency.get("first_frame_at"):
        sample.stages["transport_in"] = (float(latency["speech_end_at"]) - speech_end) * 1e3
        sample.stages["transport_out"] = (heard[0].at - float(latency["first_frame_at"])) * 1e3
    # Listen like a person for a while (the small model rambles), unless she stops first.
    until = time.monotonic() + listen_s
    while time.monotonic() < until and time.monotonic() - _last_voiced(client) < _QUIET_S:
        await asyncio.sleep(0.05)
    await settle(client)
    return sample


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


async def cutoff_trial(
    client: VoiceClient, name: str, text: str, pcm16k: np.ndarray, pause_at: int, pause_n: int
) -> CutSample:
    """Play one pause fixture; count the final transcripts it makes and when they came."""
    start_index = len(client.events)
    number = client.mic.play(to_mic(pcm16k))
    started = await _clip_time(client, number)
    resumed = started + (pause_at + pause_n) / RATE
    ended = await _clip_time(client, number, ended=True)

    def finals() -> list[tuple[float, str]]:
        pairs = zip(client.events[start_index:], _arrivals(client)[start_index:], strict=False)
        return [
            (at, str(e.get("text", "")))
            for e, at in pairs
            if e.get("type") == "transcript" and e.get("final")
        ]

    deadline = ended + _LATE_FINAL_S
    while time.monotonic() < deadline and len(finals()) < 2:
        await asyncio.sleep(0.05)
    got = finals()
    rest = _words(text.split("|")[1]) - _words(text.split("|")[0])
    missing = len(got) == 1 and not (_words(got[0][1]) & rest)
    sample = CutSample(
        name=name,
        pause_ms=round(pause_n * 1000.0 / RATE, 1),
        finals=len(got),
        early=any(at < resumed for at, _ in got),
        missing_rest=missing,
        heard=[t for _, t in got],
    )
    await settle(client)
    return sample


async def _long_answer_playing(client: VoiceClient, question: np.ndarray, timeout: float) -> bool:
    """Ask `question` and wait until a second of the answer has played and she is audible
    now; False (the client settled again) if there was nothing to talk over."""
    number = client.mic.play(question)
    asked = await _clip_time(client, number, ended=True)
    try:
        frames = await client.wait_for(lambda c: c.voiced_since(asked), timeout, "an answer")
        began = frames[0].at
        await client.wait_for(
            lambda c: time.monotonic() - began > 1.0, 5.0, "a second of the answer"
        )
    except TimeoutError:
        await settle(client)
        return False
    # Talk over her voice, not into the pause between two of her sentences: a sound that lands
    # in a pause has nothing audible to stop, and would time the pause.
    try:
        await client.wait_for(
            lambda c: time.monotonic() - _last_voiced(c) < _AUDIBLE_NOW_S, 2.0, "her voice"
        )
    except TimeoutError:
        await settle(client)
        return False  # the answer was over
    return True


async def barge_trial(
    client: VoiceClient, question: np.ndarray, interruption: np.ndarray, timeout: float
) -> float | None:
    """Ask for a long answer, talk over it after a second, and return how long after the
    onset of the interruption Annie's last audible frame arrived (ms); None if she had
    nothing to talk over."""
    if not await _long_answer_playing(client, question, timeout):
        return None
    onset, _ = voiced_span_s(interruption)
    spoke = await _clip_time(client, client.mic.play(interruption)) + onset
    await asyncio.sleep(2.5)
    last = spoke
    for frame in client.voiced_since(spoke):
        if frame.at - last > _QUIET_S:
            break  # silence, then the answer to the interruption
        last = frame.at
    await settle(client)
    return (last - spoke) * 1e3


def false_alarm_sounds(rate: int = MIC_RATE) -> dict[str, np.ndarray]:
    """Sounds that must not stop Annie, as a microphone would send them (48 kHz int16), the
    same on every run (seeded): a cough (a 180 ms burst of noise, fast attack, fast decay) and
    two clicks 100 ms apart. Her own voice coming back is `echo_trial`'s."""
    rng = np.random.default_rng(12)
    n = int(0.18 * rate)
    envelope = np.minimum(1.0, np.arange(n) / (0.01 * rate)) * np.exp(-np.arange(n) / (0.05 * rate))
    noise = np.convolve(rng.standard_normal(n), np.ones(8) / 8, mode="same")
    cough = 0.5 * envelope * noise / np.max(np.abs(noise))
    clicks = np.zeros(int(0.25 * rate))
    for at in (0, int(0.1 * rate)):
        clicks[at : at + int(0.003 * rate)] = 0.6
    return {
        name: (np.clip(x, -1, 1) * 32767).astype(np.int16)
        for name, x in (("cough", cough), ("clicks", clicks))
    }


async def echo_trial(client: VoiceClient, question: np.ndarray, timeout: float) -> bool | None:
    """A speaker without echo cancelling: everything the client plays goes back into its
    microphone at -20 dB, 60 ms later, from the question on; True if her own voice stopped
    Annie within three seconds of her answer, None if she had nothing to say for that long."""
    client.mic.leak(0.1)
    try:
        n = len(client.events)
        if not await _long_answer_playing(client, question, timeout):
            return None
        await asyncio.sleep(2.0)
        return any(
            e.get("type") == "voice_state" and e.get("state") == "interrupted"
            for e in client.events[n:]
        )
    finally:
        client.mic.leak(0.0)
        await settle(client)


async def false_alarm_trial(
    client: VoiceClient, question: np.ndarray, sound: np.ndarray, timeout: float
) -> bool | None:
    """Ask for a long answer, play `sound` over it after a second; True if that stopped
    Annie (a false stop), None if she had nothing to talk over."""
    if not await _long_answer_playing(client, question, timeout):
        return None
    n = len(client.events)
    client.mic.play(sound)
    await asyncio.sleep(2.0)
    stopped = any(
        e.get("type") == "voice_state" and e.get("state") == "interrupted"
        for e in client.events[n:]
    )
    await settle(client)
    return stopped
