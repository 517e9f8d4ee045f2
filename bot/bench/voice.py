"""`python -m bot bench voice`: spoken turns through two real aiortc peers, end to end.

A scripted client peer speaks questions (synthesized by Piper) into the server exactly as the
page would, half of them status questions for the state path and half for the model. For
every turn the server's own clock gives the voice-to-voice latency (end of speech to first
answer frame sent) and its parts. Then the client talks over long answers to measure
barge-in: how long detection takes after the user starts speaking, and how long after the
decision Annie's audio stops arriving.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

HELP = "voice-to-voice latency over two aiortc peers (spoken turns) and barge-in stop time"

STATE_QUESTIONS = [
    "Are there any tasks pending on me?",
    "What time is it?",
    "How full is the context?",
    "What is on my schedule today?",
    "Do I have any reminders?",
]
MODEL_QUESTIONS = [
    "What is the capital of France?",
    "Say hello to me.",
    "Name a color.",
    "What is two plus two?",
    "Tell me a fun fact.",
]
LONG_QUESTION = "Tell me a long story about the sea."
INTERRUPTION = "Stop, please wait a moment."
# Model answers are cut off this long after their first audio, to keep the run short.
MAX_LISTEN_S = 6.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=20, help="spoken turns (default 20)")
    parser.add_argument("--barge-ins", type=int, default=5, help="barge-in trials (default 5)")
    parser.add_argument("--window", type=int, default=4096, help="context window (default 4096)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="annie-bench-voice-") as home:
        os.environ["ANNIE_HOME"] = home
        results = asyncio.run(_bench(args))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        _print(results)
    return 0 if results["turns"]["completed"] else 1


@dataclass
class _Barge:
    detect_ms: float
    stop_ms: float
    server_stop_ms: float
    dropped_frames: int


@dataclass
class _Collected:
    stages: dict[str, list[float]] = field(default_factory=dict)
    by_path: dict[str, list[float]] = field(default_factory=dict)
    transcripts: list[tuple[str, str]] = field(default_factory=list)
    failed: int = 0
    barges: list[_Barge] = field(default_factory=list)
    barge_misses: int = 0
    input_dropped_ms: float = 0.0


def _onset_s(samples: np.ndarray, rate: int = 48000) -> float:
    """Where speech starts in a clip (Piper leaves a little silence in front)."""
    loud = np.flatnonzero(np.abs(samples.astype(np.float32)) > 0.02 * 32768)
    return float(loud[0]) / rate if loud.size else 0.0


async def _bench(args: argparse.Namespace) -> dict[str, Any]:
    from aiohttp import web

    from bot.runtime import Runtime
    from bot.server import STATE, Engines, runtime_app
    from bot.voice_session import VoiceSession
    from config import load_settings
    from memory.store import Store
    from models import load_llm, load_stt, load_tts, load_vad
    from testkit.peer import VoiceClient, speak_48k

    settings = load_settings(context={"window": args.window})
    t_load = time.perf_counter()
    engines = Engines(load_stt(settings), load_tts(settings), load_vad(settings))
    llm = load_llm(settings, n_ctx=args.window)
    load_s = time.perf_counter() - t_load
    store = Store.open(settings)
    store.tasks.add("Send the quarterly invoice", pending="user")
    store.tasks.add("Book the dentist", pending="user")
    runtime = Runtime(settings, llm=llm, store=store)
    app = runtime_app(settings, engines, runtime)
    voices: list[VoiceSession] = []
    app[STATE].on_voice_session.append(voices.append)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    questions = [
        (STATE_QUESTIONS if i % 2 == 0 else MODEL_QUESTIONS)[(i // 2) % 5]
        for i in range(args.turns)
    ]
    clips = {q: await speak_48k(engines.tts, q) for q in {*questions, LONG_QUESTION}}
    interruption = await speak_48k(engines.tts, INTERRUPTION)
    got = _Collected()
    client = VoiceClient(f"http://127.0.0.1:{port}")
    t_run = time.perf_counter()
    try:
        await client.connect()
        voice = voices[0]
        for question in questions:
            await _one_turn(client, voice, clips[question], got)
        for _ in range(args.barge_ins):
            await _one_barge(client, voice, clips[LONG_QUESTION], interruption, got)
        got.input_dropped_ms = voice.input_dropped_ms
    finally:
        await client.close()
        await runner.cleanup()
        await runtime.close()
        store.close()
    return _summarize(args, got, load_s, time.perf_counter() - t_run, llm.label)


async def _wait_turn(client: Any, voice: Any, before: int, timeout: float) -> Any:
    """Wait for the turn started after `before` finished turns; cut long answers short."""
    deadline = time.monotonic() + timeout
    cut = False
    while len(voice.stats.turns) <= before:
        if time.monotonic() > deadline:
            return None
        clock = voice.active.clock if voice.active is not None else None
        if (
            not cut
            and clock is not None
            and clock.first_frame is not None
            and time.monotonic() - clock.first_frame > MAX_LISTEN_S
        ):
            client.send({"type": "interrupt"})
            cut = True
        await asyncio.sleep(0.05)
    return voice.stats.turns[before]


async def _one_turn(client: Any, voice: Any, clip: np.ndarray, got: _Collected) -> None:
    before = len(voice.stats.turns)
    finals = len([e for e in client.of_type("transcript") if e["final"]])
    client.mic.play(clip)
    clock = await _wait_turn(client, voice, before, 180.0)
    heard = [e["text"] for e in client.of_type("transcript") if e["final"]][finals:]
    if clock is None or clock.total_ms is None:
        got.failed += 1
        return
    got.transcripts.append((heard[0] if heard else "", clock.path))
    for name, value in clock.public_stages().items():
        got.stages.setdefault(name, []).append(value)
    got.by_path.setdefault(clock.path, []).append(clock.total_ms)
    await asyncio.sleep(0.3)


async def _one_barge(
    client: Any, voice: Any, clip: np.ndarray, interruption: np.ndarray, got: _Collected
) -> None:
    before = len(voice.stats.turns)
    barges = len(voice.stats.barge_ins)
    client.mic.play(clip)
    # Wait for a second of Annie's answer, then talk over her.
    deadline = time.monotonic() + 180.0
    while time.monotonic() < deadline:
        active = voice.active
        first = active.utterance.timing.first_frame_at if active is not None else None
        if first is not None and time.monotonic() - first > 1.0:
            break
        if len(voice.stats.turns) > before:
            break
        await asyncio.sleep(0.02)
    if voice.active is None:
        got.barge_misses += 1
        await _wait_turn(client, voice, before, 60.0)
        return
    number = client.mic.play(interruption)
    onset = _onset_s(interruption)
    while len(voice.stats.barge_ins) == barges and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    if len(voice.stats.barge_ins) == barges:
        got.barge_misses += 1
        return
    barge = voice.stats.barge_ins[-1]
    await asyncio.sleep(0.1)
    server_stop_ms = voice.output.last_stop_ms or 0.0
    await asyncio.sleep(0.9)
    spoke_at = client.mic.clip_started[number] + onset
    late = [f.at for f in client.voiced_since(barge.at - 0.5) if f.at < barge.at + 1.0]
    stop_ms = max(0.0, (max(late) - barge.at) * 1e3) if late else 0.0
    got.barges.append(
        _Barge(
            detect_ms=(barge.at - spoke_at) * 1e3,
            stop_ms=stop_ms,
            server_stop_ms=server_stop_ms,
            dropped_frames=barge.frames_dropped,
        )
    )
    # The interruption becomes a turn of its own; let it finish before the next trial.
    await _wait_turn(client, voice, before + 1, 180.0)
    await asyncio.sleep(0.3)


def _pct(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=np.float64)
    return {
        "n": int(arr.size),
        "p50": round(float(np.percentile(arr, 50)), 1),
        "p95": round(float(np.percentile(arr, 95)), 1),
        "mean": round(float(arr.mean()), 1),
    }


def _summarize(
    args: argparse.Namespace, got: _Collected, load_s: float, run_s: float, model: str
) -> dict[str, Any]:
    stages = {name: _pct(v) for name, v in got.stages.items() if v}
    return {
        "model": model,
        "window": args.window,
        "load_s": round(load_s, 1),
        "run_s": round(run_s, 1),
        "turns": {
            "asked": args.turns,
            "completed": sum(len(v) for v in got.by_path.values()),
            "failed": got.failed,
            "by_path": {path: _pct(v) for path, v in got.by_path.items() if v},
            "transcripts": got.transcripts,
            "input_dropped_ms": got.input_dropped_ms,
        },
        "stages": stages,
        "barge_in": {
            "trials": args.barge_ins,
            "missed": got.barge_misses,
            "detect_ms": _pct([b.detect_ms for b in got.barges]) if got.barges else None,
            "stop_ms": _pct([b.stop_ms for b in got.barges]) if got.barges else None,
            "server_stop_ms": _pct([b.server_stop_ms for b in got.barges]) if got.barges else None,
            "dropped_frames": [b.dropped_frames for b in got.barges],
        },
    }


def _print(r: dict[str, Any]) -> None:
    turns = r["turns"]
    print(
        f"voice bench: {turns['completed']}/{turns['asked']} spoken turns completed "
        f"({turns['failed']} failed), model {r['model']}, window {r['window']}, "
        f"engines loaded in {r['load_s']}s, run {r['run_s']}s"
    )
    print(f"{'stage (ms)':<28}{'p50':>9}{'p95':>9}{'mean':>9}{'n':>5}")
    order = ["endpoint", "stt", "state", "llm_first_token", "first_clause", "tts_first_chunk"]
    rows = [(name, r["stages"][name]) for name in order if name in r["stages"]]
    rows += [("voice_to_voice (all)", r["stages"].get("voice_to_voice"))]
    rows += [(f"voice_to_voice ({p})", s) for p, s in sorted(turns["by_path"].items())]
    for name, s in rows:
        if s:
            print(f"{name:<28}{s['p50']:>9.1f}{s['p95']:>9.1f}{s['mean']:>9.1f}{s['n']:>5}")
    b = r["barge_in"]
    print(f"barge-in: {b['trials']} trials, {b['missed']} missed")
    for key, label in [
        ("detect_ms", "detection (speech onset → decision)"),
        ("stop_ms", "stop (decision → last answer frame received)"),
        ("server_stop_ms", "stop (decision → first silent frame sent)"),
    ]:
        s = b[key]
        if s:
            print(f"  {label:<46} p50 {s['p50']:>7.1f}  p95 {s['p95']:>7.1f} ms")
    print("heard:", "; ".join(f"{t!r} → {p}" for t, p in turns["transcripts"]))
    print(f"microphone audio dropped by the server: {turns['input_dropped_ms']:.0f} ms")
