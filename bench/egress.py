"""`python -m bot bench egress`: what the egress check costs each outgoing request.

A store in a temporary folder is given `--items` private notes (10,000 by default), written
like the things people ask to keep: a name, a number, a few ordinary and a few rare words
each, and as many ordinary notes beside them. Through `context.egress.Egress`, the store's one
check, the bench times the first check (which reads every private item and builds the index),
then `--requests` checks of web queries and URLs that hold nothing private, and as many that
each hold one item's number or name, in turns of three requests (the later ones are also
checked joined with the turn's earlier ones). It prints p50 and p99 of each against the
target (1 ms per request at 10,000 items), with the plain scan beside them: every private
item's text searched for each of the request's longer words, the check a first version would
make (and one that finds neither numbers split by separators nor names cut in two).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from context.egress import Egress, common_words, words
from memory.store import Store

HELP = "the egress check on 10,000 private items: ms per outgoing request, against 1 ms"
TARGET_MS = 1.0
SEED = 0
SCAN_REQUESTS = 50
NAMES = [
    "Okonkwo", "Rosalind", "Villanueva", "Abernathy", "Theodora", "Bartholomew", "Fairweather",
    "Ingrid", "Dmitri", "Colette", "Priya", "Gallagher", "Whitcombe", "Queensbury", "Keystone",
]  # fmt: skip
QUERIES = [
    "weather in {city} tomorrow",
    "how long to boil an egg",
    "train times to {city}",
    "best pizza in {city}",
    "https://news.example.com/{word}/today",
    "https://www.example.org/search?q={word}+{word2}&page=2",
    "how to fix a leaking {word}",
    "{word} recipe with {word2}",
]
CITIES = ["Paris", "London", "Rome", "Berlin", "Madrid", "Lisbon", "Vienna", "Prague"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--items", type=int, default=10_000, help="private notes (10,000)")
    parser.add_argument("--requests", type=int, default=1000, help="requests of each kind")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def _private(rng: random.Random, n: int, everyday: list[str]) -> tuple[str, str, str]:
    """One private note, its number and its name."""
    name = f"{rng.choice(NAMES)}{n}"
    number = str(rng.randrange(10_000, 99_999_999))
    filler = " ".join(rng.sample(everyday, 5))
    return f"{name} said the code for the {filler} is {number}", number, name


def _ordinary(rng: random.Random, everyday: list[str]) -> str:
    return rng.choice(QUERIES).format(
        city=rng.choice(CITIES), word=rng.choice(everyday), word2=rng.choice(everyday)
    )


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 4),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 4),
    }


def _timed(egress: Egress, requests: list[str]) -> tuple[list[float], int]:
    times, refused = [], 0
    for n, request in enumerate(requests):
        t0 = time.perf_counter()
        leak = egress.check(request, session_id="bench", turn_id=f"t{n // 3}")
        times.append((time.perf_counter() - t0) * 1000)
        refused += leak is not None
    return times, refused


def measure(items: int, requests: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    # Each refusal is logged; a thousand of them on the terminal would be timed too.
    logging.getLogger("context.egress").setLevel(logging.ERROR)
    # Ordinary words only: the rare ones would make every request a leak.
    everyday = [w for w in list(common_words())[200:3000] if w.isalpha() and len(w) > 3]
    with tempfile.TemporaryDirectory(prefix="annie-bench-egress-") as folder:
        store = Store(Path(folder) / "annie.db")
        secrets: list[tuple[str, str]] = []
        with store.db.atomic():
            for n in range(items):
                text, number, name = _private(rng, n, everyday)
                note = store.notes.add(text)
                store.provenance.stamp(note, sensitivity="private")
                store.notes.add(f"Remember to buy {' '.join(rng.sample(everyday, 4))}")
                secrets.append((number, name))
        egress = Egress(store)
        t0 = time.perf_counter()
        egress.check("first request", session_id="bench")
        first_ms = (time.perf_counter() - t0) * 1000
        clean = [_ordinary(rng, everyday) for _ in range(requests)]
        leaking = []
        for n in range(requests):
            number, name = secrets[rng.randrange(len(secrets))]
            leaking.append(f"look up {number}" if n % 2 else f"https://x.example/{name}/profile")
        clean_ms, false_refusals = _timed(egress, clean)
        leak_ms, caught = _timed(egress, leaking)
        # The plain scan: every private text (folded once, beforehand) searched for each of
        # the request's longer words, all of them, as a list of matches would need.
        texts = [t.casefold() for _, t in store.provenance.private_items()]
        scan_ms = []
        for request in clean[:SCAN_REQUESTS]:
            asked = [w for w in words(request) if len(w) > 3]
            t0 = time.perf_counter()
            sum(1 for text in texts for w in asked if w in text)
            scan_ms.append((time.perf_counter() - t0) * 1000)
        store.close()
    return {
        "items": items,
        "index_first_check_ms": round(first_ms, 1),
        "clean": {**_percentiles(clean_ms), "requests": requests, "refused": false_refusals},
        "leaking": {**_percentiles(leak_ms), "requests": requests, "refused": caught},
        "plain_scan": {**_percentiles(scan_ms), "requests": len(scan_ms)},
        "target_ms": TARGET_MS,
    }


def run(args: argparse.Namespace) -> int:
    figures = measure(args.items, args.requests)
    if args.json:
        print(json.dumps(figures))
        return 0
    clean, leaking, scan = figures["clean"], figures["leaking"], figures["plain_scan"]
    print(f"egress check, {figures['items']:,} private items (target p99 <= {TARGET_MS} ms)")
    print(
        f"  first check (reads the items, builds the index): {figures['index_first_check_ms']} ms"
    )
    for label, row in (("clean requests", clean), ("leaking requests", leaking)):
        print(
            f"  {label:17} p50 {row['p50_ms']:.3f} ms  p99 {row['p99_ms']:.3f} ms  "
            f"refused {row['refused']}/{row['requests']}"
        )
    ratio = scan["p50_ms"] / clean["p50_ms"] if clean["p50_ms"] else float("inf")
    print(
        f"  plain scan        p50 {scan['p50_ms']:.3f} ms  p99 {scan['p99_ms']:.3f} ms  "
        f"({ratio:.0f}x the check's p50)"
    )
    met = clean["p99_ms"] <= TARGET_MS and leaking["p99_ms"] <= TARGET_MS
    print(f"  target {'met' if met else 'NOT met'}")
    return 0
