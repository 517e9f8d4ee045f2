"""`bench state`, routing: the labelled held-out half and a blind set, side by side.

Runs on the benchmark's full store (10,000 tasks and notes by default) after adding the small
realistic set the status questions ask about (`testkit.status_set.seed`). For each set it
reports status questions answered from state, near misses wrongly taken from the model, and
the ones the classifier was unsure of (they go to the model with the Work Index snapshot):
first with the anchored rules alone, then with the classifier. Then what routing costs per
turn, cold (no question vector reused): with the embedding stage, and rule-only. The same
questions also go through `python -m bot ask`'s `Asker` and a live session's chain
(`bench.state_front_ends`), which must route every one identically. The blind set
(`--blind PATH`, `label<TAB>question`) is written by someone who never saw the rules, the
examples or the labelled set; the targets are judged on it when it is given.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from config import Settings
from context.intents import IntentIndex
from context.state import StateResolver
from memory.search import EmbedderLike
from memory.store import Store
from testkit import status_set
from testkit.status_set import Labelled, Routing

# Targets of the state path (issue: status questions in words nobody wrote down).
RECALL_TARGET = 0.97
TAKEN_TARGET = 0.01
EMBEDDED_P99_TARGET_MS = 15.0
RULES_P99_TARGET_MS = 3.0
# Questions embedded by each model when the two are timed side by side.
SIDE_BY_SIDE = 200


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def spread(values: list[float]) -> str:
    return f"p50 {pct(values, 50):.2f} ms  p99 {pct(values, 99):.2f} ms"


def _embed_ms(
    models: tuple[EmbedderLike, EmbedderLike], questions: list[str]
) -> tuple[list[float], list[float]]:
    """Each question embedded by one model, then the other: the same noise falls on both."""
    out: tuple[list[float], list[float]] = ([], [])
    for text in questions:
        for model, times in zip(models, out, strict=True):
            t0 = time.perf_counter()
            model.embed([text])
            times.append((time.perf_counter() - t0) * 1000.0)
    return out


def _cell(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "-"


def sets_to_run(blind: Path | None) -> dict[str, list[Labelled]]:
    """The held-out half, and the blind set when one is given."""
    sets = {"held-out half": status_set.load("held_out")}
    if blind is not None:
        sets[f"blind {blind.name}"] = status_set.load_file(blind)
    return sets


def run_routing(
    store: Store,
    settings: Settings,
    embedder: EmbedderLike | None,
    now: datetime,
    usage: Callable[[], tuple[int, int]],
    lines: list[str],
    blind: Path | None = None,
) -> tuple[bool, dict[str, Routing]]:
    """The routing and per-turn figures, appended to `lines` (the benchmark prints them with
    its other figures); True when the targets are met (on the blind set when given), and the
    classifier's routing of each set."""
    say = lines.append
    status_set.seed(store, now)
    sets = sets_to_run(blind)
    rules = {name: status_set.evaluate(StateResolver(store, settings, usage), items, now)
             for name, items in sets.items()}  # fmt: skip
    if embedder is None:
        say("routing: no embedding model, so the classifier is off; targets not measured")
        return False, {}
    index = IntentIndex(lambda: embedder)
    t0 = time.perf_counter()
    index.warm()
    warm_s = time.perf_counter() - t0
    full: dict[str, Routing] = {}
    for name, items in sets.items():
        index.forget_recent()
        full[name] = status_set.evaluate(
            StateResolver(store, settings, usage, intents=index), items, now
        )
    names = list(sets)
    width = 30
    say(f"routing ({len(status_set.load('tune'))} tune-half questions set the rules and bars):")
    say(" " * 36 + "".join(f"{n:<{width}}" for n in names))
    rows: list[tuple[str, Callable[[str], str]]] = [
        ("status answered, rules alone", lambda n: _cell(rules[n].answered, rules[n].status)),
        ("status answered, + classifier", lambda n: _cell(full[n].answered, full[n].status)),
        ("  of which the right intent", lambda n: _cell(full[n].right_intent, full[n].answered)),
        ("  unsure, went to the model",
         lambda n: _cell(len(full[n].unsure_status), full[n].status)),
        ("near misses taken, rules alone", lambda n: _cell(rules[n].taken, rules[n].near_misses)),
        ("near misses taken, + classifier", lambda n: _cell(full[n].taken, full[n].near_misses)),
        ("  unsure, went to the model",
         lambda n: _cell(len(full[n].unsure_near), full[n].near_misses)),
    ]  # fmt: skip
    for label, cell in rows:
        say(f"  {label:<34}" + "".join(f"{cell(n):<{width}}" for n in names))
    for name in names:
        for item in full[name].missed[:10]:
            say(f"    {name}, missed ({item.label}): {item.text!r}")
        for item, intent in full[name].wrongly_taken[:10]:
            say(f"    {name}, taken as {intent}: {item.text!r}")
    built = "trained" if index.train_s else "loaded from the cache"
    say(f"  classifier ready in {warm_s:.2f} s ({built}; embedder already loaded)")

    say("routing cost per turn, cold (no question vector reused), every set together:")
    embedded_ms = [ms for r in full.values() for ms in r.route_ms]
    rules_ms = [ms for r in rules.values() for ms in r.route_ms]
    flags = [e for r in full.values() for e in r.embedded]
    say(
        f"  with the embedding stage: {spread(embedded_ms)}  (target p99 <= "
        f"{EMBEDDED_P99_TARGET_MS:.0f} ms); {sum(flags)} of {len(flags)} turns embedded"
    )
    embedded_only = [ms for ms, e in zip(embedded_ms, flags, strict=True) if e]
    say(f"    turns that embedded the question: {spread(embedded_only)}")
    say(f"  rule-only: {spread(rules_ms)}  (target p99 <= {RULES_P99_TARGET_MS:.0f} ms)")
    say(f"  one question embedding here: ~{index.last_embed_ms:.1f} ms (the last one measured)")
    fast = index.model()
    if fast is not None and fast is not embedder:
        questions = [i.text for items in sets.values() for i in items][:SIDE_BY_SIDE]
        floats, ints = _embed_ms((embedder, fast), questions)
        say(
            f"  one question's embedding, side by side ({len(questions)} each, alternating): "
            f"the float model {spread(floats)}; the classifier's int8 copy {spread(ints)} "
            f"({pct(floats, 50) / max(pct(ints, 50), 1e-9):.1f}x at p50)"
        )
    answers = [ms for r in full.values() for ms in r.turn_ms]
    say(
        f"  the whole answer, routing and reading the records: {spread(answers)} (a question "
        "about a note may search the notes by meaning: one embedding by the notes' model)"
    )

    judged = full[names[-1]]
    met = (
        judged.recall >= RECALL_TARGET
        and judged.taken_rate <= TAKEN_TARGET
        and pct(embedded_ms, 99) <= EMBEDDED_P99_TARGET_MS
        and pct(rules_ms, 99) <= RULES_P99_TARGET_MS
    )
    say(f"  targets judged on the {names[-1]}: {'met' if met else 'MISSED'}")
    return met, full
