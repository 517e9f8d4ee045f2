"""`python -m bot bench stt`: where speech recognition's time goes, option by option.

Every recorded utterance with known words in `tests/fixtures` (the pause clips, the turn
clips and the two status-question recordings: 1.4-4.5 s each) is transcribed once with every
decoding option, the options taking turns clip by clip so that a busy machine slows them
alike. Each option reports its milliseconds per utterance (p50, p95, and p50 by length), its
word error rate against the known words, how many transcripts match the default's word for
word, and its ratio to the default. Noise-only clips (faint white noise, and digital silence)
count words heard where nobody spoke and show the tail that Whisper's retries cost there.
`--damaged` adds every third recording with noise at 10 and 5 dB SNR and low-passed at 3 kHz
(as `bench hearing` damages its clips), scored apart.

The stages lines split one default transcription into its steps (the log-Mel features, the
encoder over its 30 s window and over a 10 s one, the decoder), over every third clip, for
all of them and for the short and the long ones apart.
"""

from __future__ import annotations

import argparse
import json
import time
import wave
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.hearing import low_pass, with_noise, word_errors, words
from config import Settings, load_settings
from models import resolve
from models.base import Pcm
from models.pcm import resample
from models.stt import FASTER_WHISPER, Decoding, WhisperSTT
from testkit import pause_fixtures, turn_fixtures

HELP = "Whisper ms per utterance and word error rate for each decoding option, side by side"

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
RATE = 16000
# Utterances shorter than this are "short" in the by-length figures.
SHORT_S = 2.5


@dataclass(frozen=True)
class Option:
    """One way to transcribe: a decoding, on a model loaded with `cpu_threads` (0: the
    engine's own choice)."""

    name: str
    label: str
    decoding: Decoding
    cpu_threads: int = 0


def options(settings: Settings) -> dict[str, Option]:
    """Every option, the configured default first."""
    default = Decoding(window_s=settings.models.stt_window_s)
    return {
        o.name: o
        for o in (
            Option("default", "Annie's default", default),
            Option("library", "faster-whisper's defaults", FASTER_WHISPER),
            Option("no_timestamps", "without timestamps", Decoding(timestamps=False)),
            Option("window_20", "encoder window 20 s", Decoding(window_s=20.0)),
            Option("window_10", "encoder window 10 s", Decoding(window_s=10.0)),
            Option("threads_1", "1 CPU thread", default, cpu_threads=1),
            Option("threads_2", "2 CPU threads", default, cpu_threads=2),
        )
    }


def recordings() -> list[tuple[str, str, Pcm]]:
    """(name, words said, 16 kHz PCM) for every recorded utterance with known words."""
    out = [
        (c.name, " ".join(c.text.replace("|", " ").split()), pause_fixtures.read(c))
        for c in pause_fixtures.load()
    ]
    out += [(c.name, c.spoken, turn_fixtures.read_clip(c)) for c in turn_fixtures.CLIPS]
    for name in ("pending_question", "pending_fragile"):
        with wave.open(str(FIXTURES / f"{name}.wav"), "rb") as w:
            rate, data = w.getframerate(), w.readframes(w.getnframes())
        pcm = np.frombuffer(data, "<i2").astype(np.float32) / 32768.0
        out.append((name, "Are there any tasks pending on me?", resample(pcm, rate, RATE)))
    return out


def noise_clips(count: int, seed: int) -> list[Pcm]:
    """Digital silence (1.5 s) and faint white noise at -35 to -59 dBFS (1-2 s)."""
    rng = np.random.default_rng(seed)
    clips = [np.zeros(int(1.5 * RATE), np.float32)]
    for i in range(max(0, count - 1)):
        level = 10 ** (-(35 + (i * 7) % 25) / 20)
        clips.append(rng.normal(0.0, level, RATE + 1600 * i).astype(np.float32))
    return clips[:count]


def _pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 1) if values else 0.0


@dataclass
class Tally:
    ms: list[float] = field(default_factory=list)
    short_ms: list[float] = field(default_factory=list)
    long_ms: list[float] = field(default_factory=list)
    errors: int = 0
    words: int = 0
    exact: int = 0
    same: int = 0
    misheard: list[str] = field(default_factory=list)
    noise_ms: list[float] = field(default_factory=list)
    phantom: int = 0


def _stages(stt: WhisperSTT, clips: list[tuple[str, str, Pcm]]) -> dict[str, dict[str, float]]:
    """Median ms of each step of one default transcription: over all `clips`, and over the
    short and the long ones apart."""
    how = stt.decoding
    steps: dict[str, dict[str, list[float]]] = {}
    for _, _, pcm in clips:
        duration = len(pcm) / RATE
        t0 = time.perf_counter()
        feats = stt.features(pcm)
        t1 = time.perf_counter()
        encoded = stt.encode(feats)
        t2 = time.perf_counter()
        stt.decode(encoded, duration, how)
        t3 = time.perf_counter()
        stt.encode(stt.features(pcm, 10.0))
        t4 = time.perf_counter()
        stt.transcribe_blocking(pcm)
        t5 = time.perf_counter()
        for bucket in ("all", "short" if duration < SHORT_S else "long"):
            for name, seconds in (
                ("features_ms", t1 - t0),
                ("encoder_30s_ms", t2 - t1),
                ("decoder_ms", t3 - t2),
                ("encoder_10s_ms", t4 - t3),
                ("transcribe_ms", t5 - t4),
            ):
                steps.setdefault(bucket, {}).setdefault(name, []).append(seconds * 1000)
    return {
        bucket: {"clips": len(found["features_ms"])}
        | {name: _pct(values, 50) for name, values in found.items()}
        for bucket, found in steps.items()
    }


def damaged(clips: list[tuple[str, str, Pcm]], seed: int) -> list[tuple[str, str, Pcm]]:
    """Every third recording with broadband noise at 10 and 5 dB SNR, and low-passed at
    3 kHz (the damage `bench hearing` uses)."""
    rng = np.random.default_rng(seed)
    out = []
    for name, said, pcm in clips[::3]:
        out.append((f"{name} noise 10 dB", said, with_noise(pcm, 10, rng)))
        out.append((f"{name} noise 5 dB", said, with_noise(pcm, 5, rng)))
        out.append((f"{name} low-pass", said, low_pass(pcm, 3000)))
    return out


def _run_clips(
    chosen: list[Option], engines: dict[int, WhisperSTT], clips: list[tuple[str, str, Pcm]]
) -> dict[str, Tally]:
    """Every clip through every option, the options taking turns at going first."""
    tallies = {o.name: Tally() for o in chosen}
    for i, (_, said, pcm) in enumerate(clips):
        heard: dict[str, str] = {}
        for option in chosen[i % len(chosen) :] + chosen[: i % len(chosen)]:
            out = engines[option.cpu_threads].transcribe_blocking(pcm, option.decoding)
            tally, ms = tallies[option.name], out.elapsed_s * 1000
            tally.ms.append(ms)
            (tally.short_ms if len(pcm) / RATE < SHORT_S else tally.long_ms).append(ms)
            tally.errors += word_errors(said, out.text)
            tally.words += len(words(said))
            tally.exact += words(said) == words(out.text)
            heard[option.name] = out.text
            if words(said) != words(out.text) and len(tally.misheard) < 4:
                tally.misheard.append(out.text)
        for name, text in heard.items():
            tallies[name].same += words(text) == words(heard["default"])
    return tallies


def measure(
    settings: Settings,
    names: list[str],
    clip_count: int,
    noise_count: int,
    seed: int,
    with_damage: bool = False,
) -> dict[str, Any]:
    every = options(settings)
    unknown = [n for n in names if n not in every]
    if unknown:
        raise SystemExit(f"unknown options {unknown}; choose from {', '.join(every)}")
    chosen = [every[n] for n in dict.fromkeys(["default", *names])]
    resolved = resolve("stt", settings)
    engines: dict[int, WhisperSTT] = {}
    for option in chosen:
        if option.cpu_threads not in engines:
            engines[option.cpu_threads] = WhisperSTT(resolved, settings, option.cpu_threads)
    clips = recordings()
    if clip_count:
        # Spread over the lengths: every k-th clip rather than the first few.
        clips = clips[:: max(1, len(clips) // clip_count)][:clip_count]
    # In a shuffled order, a machine that grows busier mid-run slows short and long alike.
    order = np.random.default_rng(seed).permutation(len(clips))
    clips = [clips[i] for i in order]
    for engine in engines.values():  # the first call pays one-time costs
        engine.transcribe_blocking(clips[0][2])
    tallies = _run_clips(chosen, engines, clips)
    hurt = _run_clips(chosen, engines, damaged(clips, seed)) if with_damage else None
    for pcm in noise_clips(noise_count, seed):
        for option in chosen:
            out = engines[option.cpu_threads].transcribe_blocking(pcm, option.decoding)
            tallies[option.name].noise_ms.append(out.elapsed_s * 1000)
            tallies[option.name].phantom += bool(out.text)
    base = tallies["default"]
    figures: dict[str, Any] = {}
    for option in chosen:
        t = tallies[option.name]
        figures[option.name] = {
            "label": option.label,
            "decoding": asdict(option.decoding),
            "cpu_threads": option.cpu_threads,
            "ms_p50": _pct(t.ms, 50),
            "ms_p95": _pct(t.ms, 95),
            "ms_p50_short": _pct(t.short_ms, 50),
            "ms_p50_long": _pct(t.long_ms, 50),
            "wer": round(t.errors / max(1, t.words), 4),
            "exact": t.exact,
            "same_words_as_default": t.same,
            "ratio_p50": round(_pct(t.ms, 50) / max(_pct(base.ms, 50), 1e-9), 3),
            "ratio_p95": round(_pct(t.ms, 95) / max(_pct(base.ms, 95), 1e-9), 3),
            "noise_ms_p50": _pct(t.noise_ms, 50),
            "noise_ms_max": round(max(t.noise_ms, default=0.0), 1),
            "noise_phantom": t.phantom,
            "misheard_examples": t.misheard,
        }
        if hurt is not None:
            h = hurt[option.name]
            figures[option.name]["damaged"] = {
                "clips": len(h.ms),
                "ms_p50": _pct(h.ms, 50),
                "wer": round(h.errors / max(1, h.words), 4),
                "exact": h.exact,
                "same_words_as_default": h.same,
                "misheard_examples": h.misheard,
            }
    seconds = [len(pcm) / RATE for _, _, pcm in clips]
    return {
        "model": str(resolved.path),
        "device": engines[chosen[0].cpu_threads].device,
        "clips": len(clips),
        "words": base.words,
        "seconds_min": round(min(seconds), 2),
        "seconds_max": round(max(seconds), 2),
        "short_under_s": SHORT_S,
        "noise_clips": len(base.noise_ms),
        "damaged_clips": len(hurt["default"].ms) if hurt is not None else 0,
        "options": figures,
        "stages": _stages(engines[chosen[0].cpu_threads], clips[::3]),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = ",".join(options(load_settings()))
    parser.add_argument("--options", default=names, help=f"comma-separated, from {names}")
    parser.add_argument("--clips", type=int, default=0, help="recorded clips to use (0: all)")
    parser.add_argument("--noise-clips", type=int, default=4, help="noise-only clips")
    parser.add_argument(
        "--damaged", action="store_true", help="also every third clip with noise or low-pass"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.options.split(",") if n.strip()]
    out = measure(load_settings(), names, args.clips, args.noise_clips, args.seed, args.damaged)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"Speech to text: {out['clips']} recorded utterances ({out['seconds_min']}-"
        f"{out['seconds_max']} s, {out['words']} words), {out['noise_clips']} noise-only clips, "
        f"on {out['device']}"
    )
    print(
        f"  {'option':28}{'p50 ms':>8}{'p95 ms':>8}{'ratio':>7}{'<2.5s':>7}{'>=2.5s':>7}"
        f"{'WER':>7}{'same':>6}{'noise max ms':>13}{'phantom':>8}"
    )
    for f in out["options"].values():
        print(
            f"  {f['label']:28}{f['ms_p50']:>8.0f}{f['ms_p95']:>8.0f}{f['ratio_p50']:>7.2f}"
            f"{f['ms_p50_short']:>7.0f}{f['ms_p50_long']:>7.0f}{f['wer']:>7.3f}"
            f"{f['same_words_as_default']:>6}{f['noise_ms_max']:>13.0f}{f['noise_phantom']:>8}"
        )
    if out["damaged_clips"]:
        print(f"  damaged copies ({out['damaged_clips']} clips): WER, same words as the default")
        for f in out["options"].values():
            d = f["damaged"]
            print(f"  {f['label']:28}{d['wer']:>7.3f}{d['same_words_as_default']:>6}")
    for bucket, label in (("all", "all"), ("short", f"under {SHORT_S} s"), ("long", "longer")):
        if bucket not in out["stages"]:
            continue
        s = out["stages"][bucket]
        print(
            f"  one default transcription, {label} ({s['clips']} clips), p50 ms: features "
            f"{s['features_ms']:.0f}, encoder {s['encoder_30s_ms']:.0f} (30 s window; "
            f"{s['encoder_10s_ms']:.0f} for 10 s), decoder {s['decoder_ms']:.0f}, "
            f"whole {s['transcribe_ms']:.0f}"
        )
    for f in out["options"].values():
        if f["misheard_examples"]:
            print(f"  misheard ({f['label']}): " + " | ".join(f["misheard_examples"][:3]))
    return 0
