"""`python -m bot bench hearing`: how well Annie hears her own questions on a poor microphone.

Piper speaks each phrase; the clip is then damaged the way a laptop microphone and a browser's
noise suppressor damage speech: a hiss burst on a word's onset (the "s" that turns "tasks
pending" into "tasks spending"), broadband noise at 10 and 5 dB SNR, and a 3 kHz low-pass.
Every clip is transcribed twice in the same run, with and without the vocabulary prompt
(`models.stt_prompt`), and scored three ways: the exact words, the word error rate, and
whether the transcript reaches the same state-path rule as the words actually spoken (what
decides if "are there any tasks pending on me?" gets its millisecond answer). Noise-only
clips count how often each setting hears words that nobody said.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import signal

from config import Settings, load_settings
from context.state_rules import match
from models import load_stt, load_tts
from models.base import STT, TTS, Transcript
from models.pcm import resample

HELP = "STT accuracy on damaged speech, with and without the vocabulary prompt"

PHRASES = [
    "Are there any tasks pending on me?",
    "What is pending on me?",
    "What's on my list?",
    "Do I have any reminders today?",
    "What's on my schedule tomorrow?",
    "How full is your context?",
    "Remind me to buy milk.",
    "What did we decide about the pending invoice?",
]
RATE = 16000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--renditions", type=int, default=3, help="Piper renditions of each phrase")
    parser.add_argument("--bursts", type=int, default=4, help="hiss bursts per rendition")
    parser.add_argument("--noise-clips", type=int, default=10, help="noise-only clips")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split()


def word_errors(said: str, heard: str) -> int:
    """Word-level edit distance (substitutions, insertions and deletions)."""
    ref, hyp = words(said), words(heard)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def hiss_burst(
    pcm: np.ndarray, at_s: float, dur_s: float, level: float, rng: np.random.Generator
) -> np.ndarray:
    """`pcm` with a windowed 4-7.9 kHz noise burst (an "s") added at `at_s`."""
    b, a = signal.butter(4, [4000 / 8000, 7900 / 8000], btype="band")
    burst = signal.lfilter(b, a, rng.normal(0.0, 1.0, int(dur_s * RATE)))
    burst *= level / (float(np.std(burst)) + 1e-9) * np.hanning(burst.size)
    out = pcm.copy()
    start = max(0, int(at_s * RATE))
    end = min(out.size, start + burst.size)
    out[start:end] += burst[: end - start].astype(np.float32)
    return out


def with_noise(pcm: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    power = float(np.mean(pcm**2)) / 10 ** (snr_db / 10)
    return (pcm + rng.normal(0.0, np.sqrt(power), pcm.size)).astype(np.float32)


def low_pass(pcm: np.ndarray, cutoff_hz: float) -> np.ndarray:
    b, a = signal.butter(6, cutoff_hz / (RATE / 2))
    return signal.lfilter(b, a, pcm).astype(np.float32)


def speak_16k(tts: TTS, text: str) -> np.ndarray:
    pcm = np.concatenate([c.pcm for c in tts.synthesize_iter(text)])
    return resample(pcm, tts.sample_rate, RATE)


def word_onsets(stt: STT, pcm: np.ndarray) -> list[float]:
    """Where each word starts in `pcm` (the damage lands on word onsets)."""
    from models.stt import WhisperSTT

    if not isinstance(stt, WhisperSTT):
        raise TypeError("word onsets need the faster-whisper engine")
    return stt.word_starts(pcm)


def damaged(
    pcm: np.ndarray, onsets: list[float], bursts: int, rng: np.random.Generator
) -> Iterator[tuple[str, np.ndarray]]:
    """The damaged versions of one clip, each with the name of its damage."""
    for _ in range(bursts):
        at = float(rng.choice(onsets[1:] or onsets)) + float(rng.uniform(-0.06, 0.06))
        dur, level = float(rng.uniform(0.03, 0.12)), float(rng.uniform(0.02, 0.1))
        yield "hiss burst", hiss_burst(pcm, at, dur, level, rng)
    yield "noise 10 dB", with_noise(pcm, 10, rng)
    yield "noise 5 dB", with_noise(pcm, 5, rng)
    yield "low-pass 3 kHz", low_pass(pcm, 3000)


@dataclass
class Score:
    clips: int = 0
    exact: int = 0
    errors: int = 0
    words: int = 0
    routed: int = 0
    routed_by_damage: dict[str, list[int]] = field(default_factory=dict)  # [same, of]
    phantom: int = 0
    seconds: list[float] = field(default_factory=list)
    misheard: list[str] = field(default_factory=list)

    def add(self, said: str, heard: Transcript, damage: str) -> None:
        self.seconds.append(heard.elapsed_s)
        self.clips += 1
        exact = words(said) == words(heard.text)
        self.exact += exact
        self.errors += word_errors(said, heard.text)
        self.words += len(words(said))
        same = match(said) == match(heard.text)
        self.routed += same
        tally = self.routed_by_damage.setdefault(damage, [0, 0])
        tally[0] += same
        tally[1] += 1
        if not exact and len(self.misheard) < 8:
            self.misheard.append(heard.text)

    def figures(self) -> dict[str, Any]:
        return {
            "clips": self.clips,
            "exact": self.exact,
            "wer": round(self.errors / max(1, self.words), 4),
            "same_state_route": self.routed,
            "same_state_route_by_damage": self.routed_by_damage,
            "phantom_on_noise": self.phantom,
            "transcribe_ms_p50": round(float(np.percentile(self.seconds, 50)) * 1000, 1),
            "transcribe_ms_p95": round(float(np.percentile(self.seconds, 95)) * 1000, 1),
            "misheard_examples": self.misheard,
        }


async def measure(
    settings: Settings, renditions: int, bursts: int, noise_clips: int, seed: int
) -> dict[str, Any]:
    tts = load_tts(settings)
    with_prompt = load_stt(settings)
    without = load_stt(load_settings(models={"stt_prompt": ""}))
    scores = {"prompt": Score(), "none": Score()}
    rng = np.random.default_rng(seed)
    # Piper samples prosody afresh on every call: some renditions of the same phrase are far
    # more fragile than others, so each phrase is spoken several times.
    for said in PHRASES:
        for _ in range(renditions):
            clean = speak_16k(tts, said)
            onsets = word_onsets(without, clean)
            for damage, pcm in [("clean", clean), *damaged(clean, onsets, bursts, rng)]:
                for key, stt in (("prompt", with_prompt), ("none", without)):
                    scores[key].add(said, await stt.transcribe(pcm), damage)
    for i in range(noise_clips):
        level = 10 ** (-(35 + i % 25) / 20)
        noise = rng.normal(0.0, level, RATE + 800 * i).astype(np.float32)
        for key, stt in (("prompt", with_prompt), ("none", without)):
            scores[key].phantom += bool((await stt.transcribe(noise)).text)
    return {
        "prompt": settings.models.stt_prompt,
        "phrases": len(PHRASES),
        "renditions": renditions,
        "noise_clips": noise_clips,
        "with_prompt": scores["prompt"].figures(),
        "without_prompt": scores["none"].figures(),
    }


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    out = asyncio.run(measure(settings, args.renditions, args.bursts, args.noise_clips, args.seed))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    a, b = out["with_prompt"], out["without_prompt"]
    print(
        f"Hearing benchmark: {a['clips']} clips ({out['phrases']} phrases x "
        f"{out['renditions']} renditions, clean and damaged)"
    )
    print(f"  prompt: {out['prompt']!r}")
    print(f"  {'':26}{'with prompt':>14}{'without':>10}")
    print(f"  {'exact transcripts':26}{a['exact']:>14}{b['exact']:>10}")
    print(f"  {'word error rate':26}{a['wer']:>14.3f}{b['wer']:>10.3f}")
    print(f"  {'same state-path route':26}{a['same_state_route']:>14}{b['same_state_route']:>10}")
    for damage, (same, of) in a["same_state_route_by_damage"].items():
        other = b["same_state_route_by_damage"][damage][0]
        label = f"  {damage} (of {of})"
        print(f"  {label:26}{same:>14}{other:>10}")
    noise = f"words heard in {out['noise_clips']} noise clips"
    print(f"  {noise:26}{a['phantom_on_noise']:>14}{b['phantom_on_noise']:>10}")
    for label, key in (
        ("transcribe p50 ms", "transcribe_ms_p50"),
        ("transcribe p95 ms", "transcribe_ms_p95"),
    ):
        print(f"  {label:26}{a[key]:>14}{b[key]:>10}")
    ratio = (b["wer"] / a["wer"]) if a["wer"] else float("inf")
    print(f"  word errors without the prompt: {ratio:.2f}x those with it")
    for key, label in (("with_prompt", "with"), ("without_prompt", "without")):
        if out[key]["misheard_examples"]:
            print(f"  misheard {label}: " + " | ".join(out[key]["misheard_examples"][:4]))
    return 0
