"""`python -m bot bench voice`: voice-to-voice latency as a user hears it, per endpointing mode.

For each endpointing mode ("silence", the fixed 500 ms window; "semantic", the Smart Turn
detector) the real server runs in a child process (`python -m bot serve`) and a scripted
WebRTC client talks to it the way the page does (voice_client.py measures). Fresh
connections speak a question at once (the first turn after connecting), then one connection
goes on with later turns, half status questions for the state path and half for the model.
Then it plays the recorded utterances with a mid-sentence pause (tests/fixtures/pauses/) and
counts how often the turn is ended inside the pause, talks over long answers to time
barge-in, and plays a cough and clicks over them, and her own answer back into the microphone
at -20 dB (a speaker without echo cancelling), counting the times that stopped her (false
stops); each of those trials asks for its long answer on a fresh connection. The figures print
beside their targets; they are benchmarks, not assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from bench.voice_client import (
    CutSample,
    TurnSample,
    barge_trial,
    cutoff_trial,
    echo_trial,
    false_alarm_sounds,
    false_alarm_trial,
    settle,
    spoken_turn,
    timed_client,
)
from bench.voice_report import print_report, summarize_mode, targets
from testkit import pause_fixtures
from testkit.peer import VoiceClient
from testkit.reliability import (
    INTERRUPTION,
    LONG_QUESTION,
    MODEL_QUESTIONS,
    STATE_QUESTIONS,
    WINDOW,
    ServerProcess,
    Speech,
    no_sessions,
)

HELP = "voice-to-voice as heard by a WebRTC client of the real server, per endpointing mode"
MODES = ("silence", "semantic")
TURN_TIMEOUT_S = 120.0
_T = TypeVar("_T")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=20, help="later turns per mode (20)")
    parser.add_argument(
        "--first", type=int, default=10, help="fresh connections per mode, one turn each (10)"
    )
    parser.add_argument(
        "--false-alarms",
        type=int,
        default=3,
        help="trials of each sound that must not stop Annie (cough, clicks, echo; 3)",
    )
    parser.add_argument(
        "--cutoffs", type=int, default=None, help="pause fixtures per mode (default all)"
    )
    parser.add_argument("--barge-ins", type=int, default=5, help="barge-ins per mode (5)")
    parser.add_argument(
        "--modes", default=",".join(MODES), help="endpointing modes, comma-separated"
    )
    parser.add_argument("--listen", type=float, default=1.5, help="seconds of each answer heard")
    parser.add_argument("--window", type=int, default=WINDOW, help="context window (4096)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = set(modes) - set(MODES)
    if unknown:
        raise SystemExit(f"unknown endpointing modes: {sorted(unknown)} (have {list(MODES)})")
    with tempfile.TemporaryDirectory(prefix="annie-bench-voice-") as home:
        results = asyncio.run(bench(Path(home), args, modes))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print_report(results)
    done = all(r["turns"]["completed"] for r in results["modes"].values())
    return 0 if done else 1


def question(i: int) -> str:
    """State and model questions in turn, cycling through each list."""
    pool = STATE_QUESTIONS if i % 2 == 0 else MODEL_QUESTIONS
    return pool[(i // 2) % len(pool)]


async def bench(home: Path, args: argparse.Namespace, modes: list[str]) -> dict[str, Any]:
    """Every mode in turn, each on its own server; the figures per mode and the targets."""
    speech = Speech(home / "speech")
    texts = {question(i) for i in range(max(args.first, 1) + args.turns)}
    clips = {t: await speech.clip(t) for t in sorted(texts | {LONG_QUESTION, INTERRUPTION})}
    fixtures = pause_fixtures.load()
    if args.cutoffs is not None:
        fixtures = _spread(fixtures, args.cutoffs)
    recorded = {c.name: pause_fixtures.read(c) for c in fixtures}
    results: dict[str, Any] = {"modes": {}}
    for mode in modes:
        t0 = time.monotonic()
        got = await _one_mode(home / mode, mode, args, clips, fixtures, recorded)
        got["run_s"] = round(time.monotonic() - t0, 1)
        results["modes"][mode] = got
    results["targets"] = targets(results["modes"])
    return results


async def _fresh(server: ServerProcess, trial: Callable[[VoiceClient], Awaitable[_T]]) -> _T:
    """`trial` on a new connection, closed (its session too) before this returns."""
    client = timed_client(server.url)
    try:
        await client.connect()
        return await trial(client)
    finally:
        await client.close()
        with contextlib.suppress(OSError, ValueError):
            await no_sessions(server)


def _false_alarm(
    question: np.ndarray, sound: np.ndarray | None
) -> Callable[[VoiceClient], Awaitable[bool | None]]:
    """The trial of `sound` over the answer to `question` (None: her own echo)."""

    async def trial(client: VoiceClient) -> bool | None:
        if sound is None:
            return await echo_trial(client, question, TURN_TIMEOUT_S)
        return await false_alarm_trial(client, question, sound, TURN_TIMEOUT_S)

    return trial


def _spread(clips: list[pause_fixtures.PauseClip], n: int) -> list[pause_fixtures.PauseClip]:
    """`n` fixtures spread over the list (so a few still cover the voices and pauses)."""
    if n >= len(clips):
        return clips
    picks = np.linspace(0, len(clips) - 1, max(n, 0)).round().astype(int)
    return [clips[i] for i in picks]


async def _one_mode(
    home: Path,
    mode: str,
    args: argparse.Namespace,
    clips: dict[str, np.ndarray],
    fixtures: list[pause_fixtures.PauseClip],
    recorded: dict[str, np.ndarray],
) -> dict[str, Any]:
    env = {"ANNIE_VAD__TURN_DETECTION": mode}
    samples: list[TurnSample] = []
    cuts: list[CutSample] = []
    barges: list[float] = []
    false_stops: dict[str, list[int]] = {}  # sound -> [stops, trials]
    failed = 0
    barge_misses = 0
    with ServerProcess(home, window=args.window, env=env) as server:
        load_s = server.start()
        # A server evaluates the head every session shares when it starts (15 s of prompt on
        # this CPU, a fraction of a second on a GPU); the figures are for a server that has,
        # as one has by the time its page is opened and spoken to. How long it took is printed.
        head_s = server.wait_head()
        connections = max(args.first, 1)
        for i in range(connections):
            client = timed_client(server.url)
            try:
                await client.connect()
                turns = [question(i)]
                if i == connections - 1:
                    turns += [question(connections + j) for j in range(args.turns)]
                for n, text in enumerate(turns):
                    sample = await spoken_turn(
                        client,
                        clips[text],
                        first=n == 0,
                        listen_s=args.listen,
                        timeout=TURN_TIMEOUT_S,
                    )
                    if sample is None:
                        failed += 1
                    else:
                        samples.append(sample)
                if i == connections - 1:
                    for clip in fixtures:
                        cuts.append(
                            await cutoff_trial(
                                client,
                                clip.name,
                                clip.text,
                                recorded[clip.name],
                                clip.pause_at,
                                clip.pause_samples,
                            )
                        )
                    await settle(client)
            finally:
                await client.close()
            with contextlib.suppress(OSError, ValueError):
                await no_sessions(server)
        # Each sound over an answer on a connection of its own: in one long conversation the
        # small model answers the same request after its interrupted answers with a word or
        # two ("[interrupted: ...]" copied), and there is nothing left to talk over.
        long_question, interruption = clips[LONG_QUESTION], clips[INTERRUPTION]
        for _ in range(args.barge_ins):
            stop = await _fresh(
                server, lambda c: barge_trial(c, long_question, interruption, TURN_TIMEOUT_S)
            )
            if stop is None:
                barge_misses += 1
            else:
                barges.append(stop)
        sounds = false_alarm_sounds()
        for _ in range(args.false_alarms):
            for name in (*sounds, "echo"):
                stopped = await _fresh(server, _false_alarm(long_question, sounds.get(name)))
                if stopped is not None:
                    got = false_stops.setdefault(name, [0, 0])
                    got[0] += stopped
                    got[1] += 1
        alive = server.alive()
        log_tail = "" if alive else server.log()
    summary = summarize_mode(samples, cuts, barges)
    summary.update(
        mode=mode,
        load_s=round(load_s, 1),
        head_s=round(head_s, 1),
        failed=failed,
        barge_misses=barge_misses,
        false_stops=false_stops,
        server_alive=alive,
    )
    if log_tail:
        summary["server_log"] = log_tail
    return summary
