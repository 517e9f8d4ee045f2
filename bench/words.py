"""`python -m bot bench words`: the words' end-of-turn signal on the blind pause set.

`tests/fixtures/pauses_blind/utterances.tsv` was written by someone who had not seen the
detector: 200 requests with a pause in mid-sentence (the words before it are the "first" part)
and 100 complete short requests. For each, the words' model (`models.end_of_turn_words`) reads the
words before the pause, as the recognizer would hand them over at the pause, and the decision
(`bot.voice.end_of_turn.decide`, with an audio verdict that alone would end the turn) says
whether the words hold it. The bench reports, side by side in one run, for the model and for the
word rules alone (`reads_unfinished`): the share of mid-sentence pauses held (a cut-off avoided)
and of complete requests held (a wait added), by where the pause falls, and the model's time per
sentence. Ids ending in an odd digit are the calibration half (the bar was chosen there);
`--half held-out` scores the other half, which is reported once.

It is text only: how the audio and the words decide together on recordings in many voices is
the voice bench's (`docs/voice.md`).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bot.voice.end_of_turn import decide
from bot.voice.endpoint import reads_unfinished
from config import load_settings
from models import load_end_of_turn_words

HELP = "the words' end-of-turn model on the blind pause set: pauses held, complete ones held, ms"
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "pauses_blind"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--half", choices=("calibration", "held-out"), default="calibration",
        help="which half of the blind set (calibration: ids ending in an odd digit)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def _rows(half: str) -> list[dict[str, str]]:
    with (FIXTURE / "utterances.tsv").open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    odd = half == "calibration"
    return [r for r in rows if (int(r["id"][1:]) % 2 == 1) == odd]


def measure(half: str) -> dict[str, Any]:
    settings = load_settings()
    bar = settings.vad.turn_words_hold
    model = load_end_of_turn_words(settings)
    held: dict[str, list[bool]] = defaultdict(list)
    rules: dict[str, list[bool]] = defaultdict(list)
    times: list[float] = []
    for row in _rows(half):
        t0 = time.perf_counter()
        p = model.finished_probability(row["first"])
        times.append((time.perf_counter() - t0) * 1000)
        key = row["where"] if row["kind"] == "pause" else "complete"
        hold = decide(1.0, row["first"], p, 0.5, settings.vad).decision == "hold"
        held[key].append(hold)
        rules[key].append(reads_unfinished(row["first"]))

    def share(groups: dict[str, list[bool]], keys: list[str]) -> float:
        flags = [f for k in keys for f in groups[k]]
        return round(sum(flags) / len(flags), 3) if flags else 0.0

    pauses = [k for k in held if k != "complete"]
    ordered = sorted(times)
    return {
        "half": half,
        "bar": bar,
        "pauses": sum(len(held[k]) for k in pauses),
        "complete": len(held["complete"]),
        "pauses_held": share(held, pauses),
        "complete_held": share(held, ["complete"]),
        "rules_alone": {
            "pauses_held": share(rules, pauses),
            "complete_held": share(rules, ["complete"]),
        },
        "by_where": {k: share(held, [k]) for k in sorted(pauses)},
        "ms": {
            "p50": round(statistics.median(ordered), 1),
            "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
        },
    }


def run(args: argparse.Namespace) -> int:
    figures = measure(args.half)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"words' end-of-turn model, {figures['half']} half, bar {figures['bar']}")
    print(
        f"  mid-sentence pauses held: {figures['pauses_held']:.1%} of {figures['pauses']}"
        f" (word rules alone: {figures['rules_alone']['pauses_held']:.1%})"
    )
    print(
        f"  complete requests held:   {figures['complete_held']:.1%} of {figures['complete']}"
        f" (word rules alone: {figures['rules_alone']['complete_held']:.1%})"
    )
    for where, share in figures["by_where"].items():
        print(f"    {where:<12} {share:.1%}")
    print(f"  ms per sentence: p50 {figures['ms']['p50']}, p95 {figures['ms']['p95']}")
    return 0
