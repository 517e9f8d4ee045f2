"""`bench hwu64`: requests people wrote for assistants in general, routed through Annie's chain.

HWU64 (Liu et al., 2019; github.com/xliuhw/NLU-Evaluation-Data) holds about 25,000 requests
crowd-workers wrote for a home assistant, in 64 intents. None was written for Annie. Each
intent is mapped to the stage that should answer it (`bench/hwu64/intents.tsv`): `state` (a
read of the user's own records or clock), `command` (a change), `model` (anything else). The
five intents that mix reads with knowledge questions ("when is Easter" sits beside "what's on
my calendar tomorrow") are labelled request by request (`bench/hwu64/labels.tsv`), by someone
who had not seen the state path's rules, before any change they measure.

Each request goes through the same chain a live turn uses, read only (`AnswerChain.place`),
in a fresh home with an empty store, and the bench prints, side by side:
- reads of the user's records answered from state (the state path's recall), by intent;
- other requests the state path took (it answered what it should not);
- commands taken as status reads (a change answered "you have three reminders").
Develop on the `train` fold (`--fold train`); the `test` fold is reported once, at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.runtime import Runtime
from config import load_settings

HELP = "HWU64's crowd-written assistant requests through the answer chain: state reads answered"
HERE = Path(__file__).with_name("hwu64")
# The cross-validation fold the figures use, inside the dataset's repository.
FOLD = (
    "CrossValidation/autoGeneFromRealAnno/autoGene_2018_03_22-13_01_25_169/CrossValidation/KFold_1"
)
STAGES = ("state", "command", "model")


class Hwu64Error(ValueError):
    """The data folder is not HWU64's fold layout, or a mapping file is malformed."""


@dataclass(frozen=True)
class Request:
    fold: str
    id: str
    intent: str
    text: str
    expected: str  # "state" | "command" | "model"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "data",
        type=Path,
        metavar="DIR",
        help="HWU64's KFold_1 folder (trainset/ and testset/csv/), or the repository holding it",
    )
    parser.add_argument("--fold", choices=("train", "test"), default="train")
    parser.add_argument("--misses", action="store_true", help="list every request routed wrong")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def fold_dir(data: Path) -> Path:
    """The fold folder, given it or the repository that holds it."""
    for candidate in (data, data / FOLD):
        if (candidate / "trainset").is_dir() and (candidate / "testset" / "csv").is_dir():
            return candidate
    raise Hwu64Error(
        f"{data}: not HWU64's fold layout (want trainset/ and testset/csv/ in it or in "
        f"{FOLD}); get it with: git clone https://github.com/xliuhw/NLU-Evaluation-Data"
    )


def read_tsv(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    if rows and not set(columns) <= set(rows[0]):
        raise Hwu64Error(f"{path}: wants columns {', '.join(columns)}")
    return rows


def load(data: Path, fold: str, here: Path = HERE) -> list[Request]:
    """Every request of `fold` with the stage that should answer it."""
    stages = {r["intent"]: r["stage"] for r in read_tsv(here / "intents.tsv", ("intent", "stage"))}
    labels = read_tsv(here / "labels.tsv", ("fold", "answerid", "intent", "stage", "text"))
    labelled = {(r["intent"], r["answerid"]): r["stage"] for r in labels if r["fold"] == fold}
    folder = fold_dir(data) / ("trainset" if fold == "train" else "testset/csv")
    requests: list[Request] = []
    for path in sorted(folder.glob("*.csv")):
        intent = path.stem
        stage = stages.get(intent)
        if stage is None:
            raise Hwu64Error(f"{path}: intent {intent!r} is not in {here / 'intents.tsv'}")
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter=";"):
                text = (row.get("answer_from_anno") or "").strip()
                rid = (row.get("answerid") or "").strip()
                if not text:
                    continue
                expected = labelled.get((intent, rid), "") if stage == "labelled" else stage
                if expected not in STAGES:
                    raise Hwu64Error(f"{intent} {rid}: no label in {here / 'labels.tsv'}")
                requests.append(Request(fold, rid, intent, text, expected))
    if not requests:
        raise Hwu64Error(f"{folder}: no requests")
    return requests


def measure(requests: list[Request]) -> tuple[dict[str, Any], list[str]]:
    """Route every request; the figures and the misses."""
    with tempfile.TemporaryDirectory(prefix="annie-hwu64-") as home:
        runtime = Runtime(load_settings(home=home))
        try:
            chain = runtime.answer_chain()
            chain.place("what time is it")  # loads the classifier outside the timings
            placed = []
            times = []
            for request in requests:
                t0 = time.perf_counter()
                placed.append(chain.place(request.text))
                times.append((time.perf_counter() - t0) * 1000.0)
        finally:
            asyncio.run(runtime.close())
    by_intent: dict[str, Counter[str]] = defaultdict(Counter)
    misses: list[str] = []
    for request, got in zip(requests, placed, strict=True):
        state = got.stage == "state"
        counts = by_intent[request.intent]
        counts[request.expected] += 1
        counts[f"{request.expected}->state"] += state
        wrong = state != (request.expected == "state")
        if wrong:
            what = f"{got.stage} {got.intent or ''}".strip()
            misses.append(f"{request.intent}\t{request.expected}\t{what}\t{request.text}")
    total: Counter[str] = Counter()
    for counts in by_intent.values():
        total.update(counts)
    times.sort()
    figures = {
        "fold": requests[0].fold,
        "requests": len(requests),
        "state_reads": total["state"],
        "state_reads_answered": total["state->state"],
        "others": total["model"] + total["command"],
        "others_taken": total["model->state"] + total["command->state"],
        "commands": total["command"],
        "commands_taken": total["command->state"],
        "route_ms_p50": times[len(times) // 2],
        "route_ms_p99": times[min(len(times) - 1, round(0.99 * (len(times) - 1)))],
        "by_intent": {
            intent: {k: v for k, v in counts.items() if v}
            for intent, counts in sorted(by_intent.items())
            if counts["state"]
        },
    }
    return figures, misses


def _cell(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "-"


def _print(f: dict[str, Any]) -> None:
    print(f"HWU64 {f['fold']} fold: {f['requests']:,} requests through the answer chain")
    print(f"  reads of the user's records answered from state: "
          f"{_cell(f['state_reads_answered'], f['state_reads'])}")  # fmt: skip
    print(f"  other requests taken by the state path:         "
          f"{_cell(f['others_taken'], f['others'])}")  # fmt: skip
    print(f"  of them commands answered as status reads:      "
          f"{_cell(f['commands_taken'], f['commands'])}")  # fmt: skip
    print(f"  routing per request: p50 {f['route_ms_p50']:.2f} ms  p99 {f['route_ms_p99']:.2f} ms")
    print("  by intent (state reads answered from state):")
    for intent, counts in f["by_intent"].items():
        print(f"    {intent:<18} {_cell(counts.get('state->state', 0), counts['state'])}")


def run(args: argparse.Namespace) -> int:
    try:
        requests = load(args.data, args.fold)
    except (Hwu64Error, OSError) as exc:
        print(f"error: {exc}")
        return 2
    figures, misses = measure(requests)
    if args.json:
        print(json.dumps(figures | ({"misses": misses} if args.misses else {})))
        return 0
    _print(figures)
    if args.misses:
        print("misses (intent, expected, routed, text):")
        for line in misses:
            print("  " + line)
    return 0
