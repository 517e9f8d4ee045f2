"""`bench state`, routing: the held-out half of the labelled status set, through the state path.

Runs on the benchmark's full store (10,000 tasks and notes by default) after adding the small
realistic set the status questions ask about (`testkit.status_set.seed`). Reports routing
(status questions the state path answered, near misses it wrongly took from the model),
first with the anchored rules alone, then with the embedding candidate stage; then what the
state path costs per turn, split by whether the question had to be embedded, since that is
where the time goes. Every turn is measured cold (no question vector reused).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from config import Settings
from context.intents import IntentIndex
from context.state import StateResolver
from memory.search import EmbedderLike
from memory.store import Store
from testkit import status_set

# Targets of the state path (issue: status questions in any phrasing).
RECALL_TARGET = 0.97
TAKEN_TARGET = 0.01
TURN_P99_TARGET_MS = 3.0


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _spread(values: list[float]) -> str:
    return f"p50 {pct(values, 50):.2f} ms  p99 {pct(values, 99):.2f} ms"


def run_routing(
    store: Store,
    settings: Settings,
    embedder: EmbedderLike | None,
    now: datetime,
    usage: Callable[[], tuple[int, int]],
    lines: list[str],
) -> bool:
    """The routing and per-turn figures, appended to `lines` (the benchmark prints them with
    its other figures); True when the routing and per-turn targets are all met."""
    say = lines.append
    status_set.seed(store, now)
    held = status_set.load("held_out")
    tuned = len(status_set.load("tune"))
    rules = status_set.evaluate(StateResolver(store, settings, usage), held, now)
    say(
        f"routing, held-out half ({rules.status} status questions, {rules.near_misses} near "
        f"misses; rules and examples tuned on the other {tuned}):"
    )
    say(
        f"  anchored rules alone: {rules.answered}/{rules.status} answered "
        f"({rules.recall:.1%}), {rules.taken}/{rules.near_misses} near misses taken"
    )
    if embedder is None:
        say("  no embedding model: the candidate stage is off; targets not measured")
        return False
    index = IntentIndex(lambda: embedder)
    t0 = time.perf_counter()
    index.warm()
    warm_s = time.perf_counter() - t0
    index.forget_recent()
    full = status_set.evaluate(StateResolver(store, settings, usage, intents=index), held, now)
    say(
        f"  rules + embedding candidates: {full.answered}/{full.status} answered "
        f"(recall {full.recall:.1%}, target >= {RECALL_TARGET:.0%}), "
        f"{full.taken}/{full.near_misses} near misses taken ({full.taken_rate:.1%}, target <= "
        f"{TAKEN_TARGET:.0%}), precision {full.precision:.1%}, right intent "
        f"{full.right_intent}/{full.answered}"
    )
    for item in full.missed[:8]:
        say(f"    missed ({item.label}): {item.text!r}")
    for item, intent in full.wrongly_taken[:8]:
        say(f"    taken as {intent}: {item.text!r}")
    say(f"  labelled examples embedded once at start: {warm_s:.2f} s")

    turns = full.turn_ms
    flags = list(zip(turns, full.embedded, full.near_miss, strict=True))
    to_model = [ms for ms, _, near in flags if near]
    to_model_embedded = [ms for ms, e, near in flags if near and e]
    answered = [ms for ms, _, near in flags if not near]
    answered_embedded = [ms for ms, e, near in flags if e and not near]
    say(f"state path per turn, {len(turns)} held-out turns, cold (no vector reused):")
    say(f"  all turns: {_spread(turns)}")
    say(
        f"  near misses, which go on to the model (what the state path adds to a model turn): "
        f"{_spread(to_model)}  (target p99 <= {TURN_P99_TARGET_MS:.0f} ms); "
        f"{len(to_model_embedded)} of {len(to_model)} "
        f"({len(to_model_embedded) / max(1, len(to_model)):.1%}) had to embed the question"
    )
    for item, was, ms in zip(held, full.embedded, turns, strict=True):
        if was and item.label == "none":
            say(f"    embedded, then sent to the model ({ms:.1f} ms): {item.text!r}")
    say(
        f"  status questions (the answer instead of a model turn): {_spread(answered)}; "
        f"{len(answered_embedded)} of {len(answered)} embedded the question: "
        f"{_spread(answered_embedded)}"
    )
    say(f"  one question embedding here: ~{index.last_embed_ms:.1f} ms (the last one measured)")
    met = pct(to_model, 99) <= TURN_P99_TARGET_MS
    say(
        f"  3 ms p99 added to a model turn: {'met' if met else 'MISSED'}; an embedded question "
        "costs one embedding more, and only questions whose every word is status vocabulary "
        "are embedded"
    )
    return full.recall >= RECALL_TARGET and full.taken_rate <= TAKEN_TARGET and met
