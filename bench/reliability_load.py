"""Soak and concurrency: many spoken turns on one server, and `max_sessions` clients at once.

The soak speaks recorded questions (state path and model path in turn) for M minutes, talks
over some answers (barge-in) and reconnects now and then (resuming the session as the page
does), after a minute of the same mix unmeasured (warm-up), sampling the server process from
/proc: resident memory, open descriptors, threads, asyncio tasks and peers after warm-up and at
the end, both with the server at rest (no client connected). Latency is the server's own
voice-to-voice figure from each turn's latency event, compared between the first and the last
five minutes of a run of 25 minutes or more (the first and last fifth of the turns otherwise).

Concurrency opens `max_sessions` clients that each speak a different status question at the
same moment; each must hear its own answer only (transcript, answer text and the store's
per-session user events), and one client more must get 503 with a reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from testkit import reliability_store as rs
from testkit.peer import VoiceClient
from testkit.reliability import (
    INTERRUPTION,
    LONG_QUESTION,
    MODEL_QUESTIONS,
    STATE_QUESTIONS,
    ProcStats,
    ServerProcess,
    Speech,
    connect,
    done_turns,
    latencies,
    no_sessions,
    pct,
    turn,
    wait,
)

# Every 7th action talks over an answer and every 10th reconnects, offset so that even a
# one-minute run has one of each.
BARGE_EVERY, BARGE_AT = 7, 3
RECONNECT_EVERY, RECONNECT_AT = 10, 5
SAMPLE_EVERY_S = 15.0
WARM_UP_S = 60.0
# How long a person listens before pressing stop: the small model rambles for minutes.
LISTEN_S = 2.5
REST_READINGS = 8


@dataclass
class _Soak:
    turns: int = 0
    failed: list[str] = field(default_factory=list)
    barge_ins: int = 0
    barge_misses: int = 0
    reconnects: int = 0
    # (run time s, ms, "state" or "model"): drift is judged path by path, since a window of
    # a short run may hold more of one path than the other.
    latency: list[tuple[float, float, str]] = field(default_factory=list)
    samples: list[tuple[float, ProcStats]] = field(default_factory=list)


async def run_soak(
    server: ServerProcess,
    speech: Speech,
    minutes: float,
    warm_up_s: float = WARM_UP_S,
    min_actions: int = 0,
    listen_s: float = LISTEN_S,
) -> dict[str, Any]:
    """The soak's figures: `minutes` of the mix after `warm_up_s` of it, and at least
    `min_actions` actions measured however long they take (ten hold a reconnect, a barge-in and
    spoken turns on both paths), so a slow machine makes a short soak longer, never thinner.
    Each answer is listened to for up to `listen_s`, then stopped."""
    questions = [q for pair in zip(STATE_QUESTIONS, MODEL_QUESTIONS, strict=True) for q in pair]
    clips = [await speech.clip(q) for q in questions]
    barge = _Barge(await speech.clip(LONG_QUESTION), await speech.clip(INTERRUPTION), listen_s)
    got = _Soak()
    client = await connect(server.url)
    try:
        # Warm-up: a minute of the same mix, unmeasured (the suite's short form takes less).
        # The first turns of each kind, the first long answer and the first reconnects pay for
        # loading and first-time memory (allocator arenas, the engines' scratch buffers, the
        # first saved model states); in runs so far resident memory rose for about 40 s and
        # then held level.
        warm = _Soak()
        t0 = time.monotonic()
        i = 0
        while time.monotonic() - t0 < warm_up_s:
            i += 1
            client = await _act(i, client, server.url, clips, barge, warm, 0.0)
        # Both ends are read with no client connected and the server at rest, so that the
        # start and the end compare like with like (a connected peer holds its decoder thread).
        previous = client.session_id
        await client.close()
        start = await _at_rest(server)
        client = await connect(server.url, resume=previous)
        t0 = time.monotonic()
        got.samples.append((0.0, start))
        measured = 0
        while time.monotonic() - t0 < minutes * 60 or measured < min_actions:
            i += 1
            measured += 1
            at = time.monotonic() - t0
            client = await _act(i, client, server.url, clips, barge, got, at)
            if time.monotonic() - got.samples[-1][0] - t0 >= SAMPLE_EVERY_S:
                got.samples.append((time.monotonic() - t0, server.stats()))
        run_s = time.monotonic() - t0
    finally:
        await client.close()
    got.samples.append((run_s, await _at_rest(server)))
    return _soak_summary(got, run_s)


async def _at_rest(server: ServerProcess) -> ProcStats:
    """The server with no session left (tier 3 done, the peer torn down), read several times
    over a few seconds, keeping the reading with the fewest threads: llama.cpp starts its
    compute threads for each model call and ends them after, so one reading taken while the
    last session's tier-3 polish runs counts them as if they stayed."""
    await no_sessions(server)
    readings = [server.stats()]
    for _ in range(REST_READINGS - 1):
        await asyncio.sleep(0.5)
        readings.append(server.stats())
    return min(readings, key=lambda r: (r.threads, r.fds))


async def _act(
    i: int,
    client: VoiceClient,
    url: str,
    clips: list[np.ndarray],
    barge: _Barge,
    got: _Soak,
    at: float,
) -> VoiceClient:
    """The i-th action of the mix: a reconnect, a barge-in or a spoken turn."""
    if i % RECONNECT_EVERY == RECONNECT_AT:
        return await _reconnect(client, url, got)
    if i % BARGE_EVERY == BARGE_AT:
        await _barge(client, barge, got)
    else:
        await _spoken_turn(client, clips[i % len(clips)], got, at, barge.listen_s)
    return client


async def _spoken_turn(
    client: VoiceClient, clip: np.ndarray, got: _Soak, at: float, listen_s: float
) -> None:
    before = len(client.of_type("latency"))
    try:
        await turn(client, clip, timeout=120.0, listen_s=listen_s)
        got.turns += 1
    except TimeoutError as exc:
        got.failed.append(str(exc)[:160])
        return
    paths = {e["turn_id"]: e["path"] for e in done_turns(client)}
    got.latency += [
        (at, float(e["stages"]["voice_to_voice"]), paths.get(e["turn_id"], "?"))
        for e in client.of_type("latency")[before:]
        if "voice_to_voice" in e.get("stages", {})
    ]


@dataclass(frozen=True)
class _Barge:
    """What a barge-in plays (a question with a long answer, then words over it) and how long
    any answer is listened to."""

    long_clip: np.ndarray
    stop: np.ndarray
    listen_s: float


async def _barge(client: VoiceClient, barge: _Barge, got: _Soak) -> None:
    """Ask for a long answer, talk over it once it is being spoken, then let the new turn end."""
    n = len(client.events)
    client.mic.play(barge.long_clip)
    try:
        await wait(
            client,
            lambda c: any(e.get("state") == "speaking" for e in c.events[n:]),
            120.0,
            "the long answer spoken",
        )
        await asyncio.sleep(1.0)
        await turn(client, barge.stop, timeout=120.0, listen_s=barge.listen_s)
    except TimeoutError as exc:
        got.failed.append(str(exc)[:160])
        return
    interrupted = any(e.get("state") == "interrupted" for e in client.events[n:])
    got.barge_ins += interrupted
    got.barge_misses += not interrupted


async def _reconnect(client: VoiceClient, url: str, got: _Soak) -> VoiceClient:
    """Leave and come back as the page does after a reload: a new peer resuming the session."""
    previous = client.session_id
    await client.close()
    got.reconnects += 1
    return await connect(url, resume=previous)


def _windows(
    values: list[tuple[float, float, str]], run_s: float
) -> tuple[list[float], list[float]]:
    """The first and the last five minutes of a long run; of a short one, the first and last
    fifth of its turns (at least two each)."""
    if run_s >= 1500:
        return (
            [ms for at, ms, _ in values if at < 300.0],
            [ms for at, ms, _ in values if at >= run_s - 300.0],
        )
    k = max(2, len(values) // 5)
    return [ms for _, ms, _ in values[:k]], [ms for _, ms, _ in values[-k:]]


def no_drift(first: dict[str, Any], last: dict[str, Any]) -> bool | None:
    """Whether the last window's median is within noise of the first's (None: too few turns):
    at most half again, plus 300 ms for the short runs' small counts."""
    if not first["n"] or not last["n"]:
        return None
    return bool(last["p50"] <= 1.5 * first["p50"] + 300)


def _figures(values: list[float]) -> dict[str, Any]:
    return {"n": len(values), "p50": pct(values, 50), "p95": pct(values, 95)}


def _soak_summary(got: _Soak, run_s: float) -> dict[str, Any]:
    first, last = _windows(got.latency, run_s)
    by_path = {}
    for path in ("state", "model"):
        a, b = _windows([v for v in got.latency if v[2] == path], run_s)
        by_path[path] = {"first": _figures(a), "last": _figures(b)}
    start, end = got.samples[0][1], got.samples[-1][1]
    peak = max(s.rss_kb for _, s in got.samples)
    return {
        "minutes": round(run_s / 60, 1),
        "turns": got.turns,
        "failed": len(got.failed),
        "failures": got.failed[:3],
        "barge_ins": got.barge_ins,
        "barge_misses": got.barge_misses,
        "reconnects": got.reconnects,
        "rss_mb_start": round(start.rss_kb / 1024, 1),
        "rss_mb_end": round(end.rss_kb / 1024, 1),
        "rss_mb_peak": round(peak / 1024, 1),
        "rss_growth_mb": round((end.rss_kb - start.rss_kb) / 1024, 1),
        # The saved model states grow with the conversation up to models.llm_checkpoints of
        # them, by design; what grows beyond them is what could be a leak.
        "cache_mb": [start.health.get("llm_cache_mb"), end.health.get("llm_cache_mb")],
        "rss_growth_less_cache_mb": round(
            (end.rss_kb - start.rss_kb) / 1024
            - (end.health.get("llm_cache_mb") or 0.0)
            + (start.health.get("llm_cache_mb") or 0.0),
            1,
        ),
        # The C heap at both ends: growth in "allocated" is data something keeps, growth in
        # "free_held" is freed memory the allocator did not give back.
        "heap_mb": [start.health.get("heap_mb"), end.health.get("heap_mb")],
        "fds": [start.fds, end.fds],
        "threads": [start.threads, end.threads],
        # The Python threads among them by kind (a pool's workers under its name): a kept
        # connection would leave its audio-decoder here.
        "thread_kinds": [start.health.get("threads"), end.health.get("threads")],
        "sessions_after": end.health.get("sessions"),
        "tasks": [start.health.get("tasks"), end.health.get("tasks")],
        "peers": [start.health.get("peers"), end.health.get("peers")],
        "latency_first": _figures(first),
        "latency_last": _figures(last),
        "latency_by_path": by_path,
        "samples": [
            (round(t), s.rss_kb // 1024, s.health.get("llm_cache_mb"), s.fds, s.threads)
            for t, s in got.samples
        ],
    }


@dataclass
class _Seat:
    question: str
    client: VoiceClient
    heard: str = ""
    answer: str = ""
    latency_ms: float | None = None
    stored: list[str] = field(default_factory=list)
    cross_talk: list[str] = field(default_factory=list)


async def run_concurrency(server: ServerProcess, speech: Speech) -> dict[str, Any]:
    limit = int(server.health()["max_sessions"])
    questions = STATE_QUESTIONS[:limit] if limit <= len(STATE_QUESTIONS) else STATE_QUESTIONS
    clips = {q: await speech.clip(q) for q in questions}
    await no_sessions(server)
    single = await _single(server, clips[questions[0]])
    await no_sessions(server)
    seats: list[_Seat] = []
    try:
        for i in range(limit):
            q = questions[i % len(questions)]
            seats.append(_Seat(q, await connect(server.url)))
        # Everyone speaks at once; each waits for its own answer.
        await asyncio.gather(*(_ask(s, clips[s.question]) for s in seats))
        extra = await _one_more(server.url)
        for seat in seats:
            seat.stored = rs.session_events(server.db_path, seat.client.session_id)
            _cross_talk(seat, seats)
    finally:
        for seat in seats:
            with contextlib.suppress(Exception):
                await seat.client.close()
    return {
        "max_sessions": limit,
        "single_ms": single,
        "sessions": [
            {k: v for k, v in asdict(s).items() if k != "client"} | {"id": s.client.session_id}
            for s in seats
        ],
        "cross_talk": sum(len(s.cross_talk) for s in seats),
        "refused": extra,
    }


async def _single(server: ServerProcess, clip: np.ndarray) -> float | None:
    client = await connect(server.url)
    try:
        await turn(client, clip, listen_s=2.0)
        return _last(latencies(client))
    finally:
        await client.close()


async def _ask(seat: _Seat, clip: np.ndarray) -> None:
    try:
        done = await turn(seat.client, clip, timeout=120.0, listen_s=3.0)
    except TimeoutError as exc:
        seat.cross_talk.append(f"no answer: {exc}")
        return
    finals = [e["text"] for e in seat.client.of_type("transcript") if e.get("final")]
    seat.heard = finals[-1] if finals else ""
    seat.answer = done["text"]
    seat.latency_ms = _last(latencies(seat.client))


def _last(values: list[float]) -> float | None:
    return values[-1] if values else None


def _words(text: str) -> set[str]:
    return {w.strip("?.,!").lower() for w in text.split() if len(w.strip("?.,!")) > 3}


def _cross_talk(seat: _Seat, seats: list[_Seat]) -> None:
    """Another client's question in this client's transcript or stored user events."""
    mine = _words(seat.question)
    for other in seats:
        if other is seat:
            continue
        theirs = _words(other.question) - mine
        for where, text in [("transcript", seat.heard), *(("store", t) for t in seat.stored)]:
            if theirs and len(theirs & _words(text)) >= max(1, len(theirs) // 2):
                seat.cross_talk.append(f"{where} has {other.question!r}: {text!r}")
    if not seat.stored:
        seat.cross_talk.append("no user event stored for this session")


async def _one_more(url: str) -> dict[str, Any]:
    """One client past the cap: the offer must be refused with 503 and a reason."""
    client = VoiceClient(url)
    try:
        await client.connect(timeout=10.0)
    except RuntimeError as exc:
        return {"refused": "HTTP 503" in str(exc), "message": str(exc)[:200]}
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    return {"refused": False, "message": "connected past max_sessions"}
