"""`python -m bot bench cutoffs`: turns cut inside a mid-sentence pause, audio and words together.

The blind pause set (`tests/fixtures/pauses_blind/`: 200 requests with a pause in mid-sentence,
100 complete ones, written by someone who had not seen the detector) is rendered by Piper in
several voices (`--voices`: rate and prosody noise, with and without room noise; the shipped
voice has one speaker and espeak-ng is not installed, so voices differ by Piper's own
settings). A pause is rendered as `testkit.pause_fixtures` renders one: the whole sentence with
a comma where the speaker stops, cut inside Piper's comma pause, silence inserted to the
utterance's `pause_ms`, so the words before it keep the prosody they have mid-sentence.

Each pause is then decided as the runtime decides it, with its own engines: Smart Turn on the
audio up to each look (200 ms into the silence at its first bar, then 300, 400 and 500 ms at the
recheck bar), Whisper's transcript of the words before the pause, the words' model on it, and
`bot.voice.end_of_turn.decide`. A look inside the pause that ends the turn is a cut-off. Side
by side, in one run: Smart Turn alone, Smart Turn with the word rules (the runtime before the
words' model), and the three together. Also the false-cut rate of one decision taken at 300 ms
and at 600 ms of silence, and for complete requests the wait before the turn ends (the first
look that ends it; the longest pause, 1.5 s, when none does). Ids ending in an odd digit are
the calibration half; `--half held-out` is reported once.

It runs in real time per clip (about 4 s of CPU each on a 2-core box): tens of minutes for a
half in four voices. The suite plays the mechanism on two committed clips instead
(`tests/bot/voice/test_semantic_turns.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import statistics
import time
from typing import Any

import numpy as np

from bench.words import FIXTURE
from bot.voice.end_of_turn import decide
from bot.voice.endpoint import reads_unfinished
from config import Settings, load_settings
from config.settings import VadSettings
from models import load_end_of_turn_detector, load_end_of_turn_words, load_stt
from models.base import Pcm
from testkit.pause_fixtures import NOISE_LEVELS, VOICES, _synthesize, render
from testkit.turn_fixtures import RATE

HELP = "cut-offs in mid-sentence pauses on the blind set, Smart Turn alone and with the words"
# Where the runtime looks (ms of silence) and the bar each look uses (`vad` settings).
FIRST_LOOK_MS = 200
RECHECKS_MS = (300, 400, 500)
SINGLE_LOOKS_MS = (300, 600)
# The rendered voices: Piper's three settings, and the default with a fan nearby.
RENDERINGS: tuple[tuple[str, tuple[float, float, float], float], ...] = (
    ("piper default", VOICES[0], 0.0),
    ("piper quick, lively, quiet room", VOICES[1], NOISE_LEVELS[1]),
    ("piper slow, flat", VOICES[2], 0.0),
    ("piper default, fan nearby", VOICES[0], NOISE_LEVELS[2]),
)
MODES = ("audio alone", "audio + word rules", "audio + rules + words")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--half", choices=("calibration", "held-out"), default="calibration",
        help="which half of the blind set (calibration: ids ending in an odd digit)",
    )  # fmt: skip
    parser.add_argument("--voices", type=int, default=len(RENDERINGS), help="how many renderings")
    parser.add_argument("--limit", type=int, default=0, help="utterances per voice (0: all)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def _rows(half: str, limit: int) -> list[dict[str, str]]:
    with (FIXTURE / "utterances.tsv").open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    odd = half == "calibration"
    rows = [r for r in rows if (int(r["id"][1:]) % 2 == 1) == odd]
    return rows[:limit] if limit else rows


class _Engines:
    def __init__(self, settings: Settings) -> None:
        from piper import PiperVoice

        from models.resolver import resolve

        self.settings = settings
        self.voice = PiperVoice.load(str(resolve("tts", settings).path))
        self.stt = load_stt(settings)
        self.end_of_turn = load_end_of_turn_detector(settings)
        self.words = load_end_of_turn_words(settings)


def _speech_end(pcm: Pcm) -> int:
    """The sample after the last voiced 10 ms frame."""
    frame = RATE // 100
    rms = np.sqrt(np.mean(pcm[: len(pcm) // frame * frame].reshape(-1, frame) ** 2, axis=1))
    voiced = np.flatnonzero(rms > 0.01)
    return int((voiced[-1] + 1) * frame) if voiced.size else len(pcm)


def _clip(
    engines: _Engines, row: dict[str, str], scales: Any, noise: float, seed: int
) -> tuple[Pcm, int, float]:
    """The audio, where its silence starts, and how long the speaker stays silent (ms)."""
    if row["kind"] == "pause":
        first = row["first"].rstrip(" ,.")
        text = f"{first}, | {row['rest']}"
        pause_s = int(row["pause_ms"]) / 1000
        try:
            # The pause stretched is the comma at "|": a list's earlier commas pause too.
            which = first.count(",")
            pcm, at, _ = render(engines.voice, text, scales, pause_s, noise, seed, which)
            return pcm, at, float(row["pause_ms"])
        except ValueError:
            pass  # no comma pause heard: the first half alone, then the silence
        head = _synthesize(engines.voice, row["first"], scales)
        at = _speech_end(head)
        pcm = np.concatenate([np.zeros(RATE * 3 // 10, np.float32), head[:at]])
        silence = np.zeros(int(pause_s * RATE) + RATE, np.float32)
        return np.concatenate([pcm, silence]), len(pcm), float(row["pause_ms"])
    speech = _synthesize(engines.voice, row["first"], scales)
    at = _speech_end(speech)
    lead = np.zeros(RATE * 3 // 10, np.float32)
    pcm = np.concatenate([lead, speech[:at], np.zeros(RATE * 2, np.float32)])
    if noise > 0:
        rng = np.random.default_rng(seed)
        pcm = np.clip(pcm + rng.normal(0.0, noise, pcm.size).astype(np.float32), -1, 1)
    return pcm, len(lead) + at, 1e9


def observe(
    engines: _Engines, row: dict[str, str], scales: Any, noise: float, seed: int
) -> dict[str, Any]:
    """What the runtime would have at each look: Smart Turn's verdicts on the audio up to it,
    and Whisper's transcript of the words before the pause (taken at the first look)."""
    pcm, at, silent_ms = _clip(engines, row, scales, noise, seed)

    def upto(ms: int) -> Pcm:
        return pcm[: at + int(ms * RATE / 1000)]

    looks = {FIRST_LOOK_MS, *RECHECKS_MS, *SINGLE_LOOKS_MS}
    audio = {ms: engines.end_of_turn.complete_probability(upto(ms)) for ms in sorted(looks)}
    text = asyncio.run(engines.stt.transcribe(upto(FIRST_LOOK_MS))).text
    return {"audio": audio, "text": text, "silent_ms": silent_ms}


def verdicts(seen: dict[str, Any], words: float, vad: VadSettings, bar: float) -> dict[str, Any]:
    """Per mode, the look that ends the turn (the longest pause when none does), whether that
    cuts the speaker off, and what one decision at each single look would be."""
    audio, text = seen["audio"], seen["text"]
    looks = [(FIRST_LOOK_MS, bar)] + [(ms, vad.turn_recheck_threshold) for ms in RECHECKS_MS]

    def ends(mode: str, ms: int, at_bar: float) -> bool:
        if mode == "audio alone":
            return bool(audio[ms] > at_bar)
        if mode == "audio + word rules":
            return bool(audio[ms] > at_bar) and not reads_unfinished(text)
        return decide(audio[ms], text, words, at_bar, vad).decision == "end"

    out: dict[str, Any] = {}
    for mode in MODES:
        ended = next((ms for ms, b in looks if ends(mode, ms, b)), vad.turn_max_silence_ms)
        out[mode] = {
            "ended_ms": ended,
            "cut": ended < seen["silent_ms"],
            "single": {ms: ends(mode, ms, bar) for ms in SINGLE_LOOKS_MS},
        }
    return out


def _judge(
    engines: _Engines, row: dict[str, str], scales: Any, noise: float, seed: int
) -> dict[str, Any]:
    seen = observe(engines, row, scales, noise, seed)
    t0 = time.perf_counter()
    words = engines.words.finished_probability(seen["text"])
    words_ms = (time.perf_counter() - t0) * 1000
    vad = engines.settings.vad
    judged = verdicts(seen, words, vad, engines.end_of_turn.threshold)
    return {"text": seen["text"], "words": words, "words_ms": words_ms, **judged}


def measure(half: str, voices: int, limit: int) -> dict[str, Any]:
    settings = load_settings()
    engines = _Engines(settings)
    rows = _rows(half, limit)
    results: list[tuple[dict[str, str], str, dict[str, Any]]] = []
    for name, scales, noise in RENDERINGS[:voices]:
        for n, row in enumerate(rows):
            results.append((row, name, _judge(engines, row, scales, noise, seed=n)))
    pauses = [(r, v, j) for r, v, j in results if r["kind"] == "pause"]
    complete = [(r, v, j) for r, v, j in results if r["kind"] == "complete"]

    def share(flags: list[bool]) -> float:
        return round(sum(flags) / len(flags), 4) if flags else 0.0

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0

    figures: dict[str, Any] = {
        "half": half,
        "voices": [name for name, _, _ in RENDERINGS[:voices]],
        "pauses": len(pauses),
        "complete": len(complete),
        "modes": {},
        "words_ms": {
            "p50": round(statistics.median(j["words_ms"] for _, _, j in results), 1),
            "p95": round(pct([j["words_ms"] for _, _, j in results], 0.95), 1),
        },
    }
    for mode in MODES:
        waits = [float(j[mode]["ended_ms"]) for _, _, j in complete]
        figures["modes"][mode] = {
            "cut_offs": share([j[mode]["cut"] for _, _, j in pauses]),
            "false_cut_at_ms": {
                str(ms): share(
                    [j[mode]["single"][ms] for r, _, j in pauses if float(r["pause_ms"]) >= ms]
                )
                for ms in SINGLE_LOOKS_MS
            },
            "complete_wait_ms": {"p50": pct(waits, 0.5), "p95": pct(waits, 0.95)},
        }
    return figures


def run(args: argparse.Namespace) -> int:
    figures = measure(args.half, args.voices, args.limit)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(
        f"cut-offs, {figures['half']} half: {figures['pauses']} pauses and "
        f"{figures['complete']} complete requests in {len(figures['voices'])} voices"
    )
    print(f"  {'':<24}{'cut-offs':>10}{'false cut @300':>16}{'@600':>8}{'wait p50':>10}{'p95':>7}")
    for mode, f in figures["modes"].items():
        fc = f["false_cut_at_ms"]
        w = f["complete_wait_ms"]
        print(
            f"  {mode:<24}{f['cut_offs']:>10.1%}{fc['300']:>16.1%}{fc['600']:>8.1%}"
            f"{w['p50']:>8.0f}ms{w['p95']:>5.0f}ms"
        )
    print(
        f"  words' model per pause: p50 {figures['words_ms']['p50']} ms,"
        f" p95 {figures['words_ms']['p95']} ms"
    )
    return 0
