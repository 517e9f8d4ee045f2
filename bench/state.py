"""`python -m bot bench state`: the state path and hybrid search at 10,000 tasks and notes.

Builds a fresh store in a temporary folder (or `--db`), fills it with synthetic tasks,
reminders and notes (embedded once, in batches), then times, side by side in one run:
state-path answers (target p99 < 5 ms), hybrid search (target p95 < 30 ms, query embedding
included), routing on the held-out half of the labelled status set and on a blind set
(`--blind PATH`) side by side with per-turn cost (`bench.state_routing`), the same questions
through `ask` and a live session (`bench.state_front_ends`), the unsure band's two ways out
(`bench.state_ways_out`), and the same status question answered by the small language model
from the rendered work index, as a ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from bench.state_front_ends import run_front_ends
from bench.state_routing import run_routing, sets_to_run
from bench.state_ways_out import run_ways_out
from config import Settings, load_settings
from context.recall import recall
from context.state import StateResolver
from memory.rows import WorkIndex
from memory.store import Store
from models.base import LLM
from testkit.status_set import Routing

HELP = "state-path and hybrid-search latency at 10,000 tasks and notes, beside the small model"

STATE_QUESTIONS = [
    "Are there any tasks pending on me?",
    "What's on my list?",
    "What's on my schedule today?",
    "Any reminders for tomorrow?",
    "What time is it?",
    "How full is the context?",
]
SEARCH_QUERIES = [
    "when is the dentist",
    "INV-40213",
    "what did the accountant say about the budget",
    "garage door code",
    "flight to Lisbon terminal",
    "which supplier delivers mulch",
    "boiler service booking",
    "passport renewal photos",
    "wifi password guest network",
    "notes about the quarterly review",
]
MODEL_QUESTIONS = [
    "Are there any tasks pending on me?",
    "Is anything pending on me?",
    "What's waiting on me?",
    "Do I have anything pending?",
]

_SUBJECTS = [
    "dentist",
    "budget",
    "garage",
    "Lisbon flight",
    "mulch",
    "boiler",
    "passport",
    "wifi",
    "quarterly review",
    "school run",
    "insurance",
    "car service",
    "landlord",
    "birthday party",
    "tax return",
    "gym",
    "plumber",
    "vet",
    "library books",
    "bank",
]
_VERBS = [
    "moved to",
    "confirmed for",
    "discussed on",
    "postponed until",
    "booked for",
    "cancelled on",
    "paid on",
    "reviewed on",
    "noted on",
    "agreed on",
]
_PEOPLE = ["the accountant", "the landlord", "the plumber", "the teacher", "the vet", "the builder"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", type=int, default=10_000, help="tasks to create (10000)")
    parser.add_argument("--notes", type=int, default=10_000, help="notes to embed (10000)")
    parser.add_argument("--repeat", type=int, default=200, help="timed state answers per question")
    parser.add_argument("--searches", type=int, default=100, help="timed hybrid searches")
    parser.add_argument("--n-ctx", type=int, default=2048, help="small-model window (2048)")
    parser.add_argument("--no-model", action="store_true", help="skip the language-model run")
    parser.add_argument(
        "--no-routing", action="store_true", help="skip routing on the held-out status set"
    )
    parser.add_argument(
        "--blind",
        type=Path,
        default=None,
        help="a blind set (label<TAB>question, # comments) reported beside the held-out half",
    )
    parser.add_argument(
        "--no-front-ends",
        action="store_true",
        help="skip routing the sets through ask and a live session",
    )
    parser.add_argument(
        "--db", type=Path, default=None, help="database file, reused if filled (default: temp)"
    )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _fill_tasks(store: Store, n: int, rng: random.Random, now: datetime) -> None:
    rows = []
    for i in range(n):
        status = rng.choices(["open", "blocked", "done"], [70, 10, 20])[0]
        pending = rng.choices(["none", "user", "assistant", "external"], [88, 5, 4, 3])[0]
        due = now + timedelta(hours=rng.randint(-240, 720)) if rng.random() < 0.2 else None
        subject = rng.choice(_SUBJECTS)
        rows.append(
            {"title": f"{subject} item {i}", "status": status, "pending": pending, "due": due}
        )
    store.tasks.add_many(rows)
    for i in range(n // 20):
        store.reminders.add(
            f"reminder {i} about the {rng.choice(_SUBJECTS)}",
            now + timedelta(minutes=rng.randint(-600, 60 * 24 * 30)),
        )


def _note_text(i: int, rng: random.Random) -> str:
    subject, verb, person = rng.choice(_SUBJECTS), rng.choice(_VERBS), rng.choice(_PEOPLE)
    day = rng.randint(1, 28)
    return (
        f"{person.capitalize()} said the {subject} was {verb} the {day}th; "
        f"reference INV-{40000 + i}, follow up with {rng.choice(_PEOPLE)} next week."
    )


def _fill_notes(store: Store, settings: Settings, n: int, rng: random.Random) -> float:
    if n <= 0:
        return 0.0
    from models import load_embedder

    embedder = load_embedder(settings)
    store.notes.embedder = embedder
    batch = 512
    t0 = time.perf_counter()
    for start in range(0, n, batch):
        texts = [_note_text(i, rng) for i in range(start, min(n, start + batch))]
        store.notes.add_many([{"text": t, "kind": "note", "source": "bench"} for t in texts])
        done = min(n, start + batch)
        print(f"\r  embedded {done:,}/{n:,} notes", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return time.perf_counter() - t0


def render_index(index: WorkIndex) -> str:
    """The work index as the model path would see it: compact lines, ids kept."""
    lines = [f"Work index as of {index.as_of}"]
    for label, rows, count in (
        ("pending on the user", index.pending_user, index.pending_user_count),
        ("pending on others", index.pending_others, index.pending_others_count),
        ("blocked", index.blocked, index.blocked_count),
        ("active", index.active, index.active_count),
    ):
        lines.append(f"{label} ({count}): " + "; ".join(f"{t.id} {t.title}" for t in rows))
    lines.append("next: " + "; ".join(f"{s.id} {s.text} at {s.due}" for s in index.next_scheduled))
    return "\n".join(lines)


async def _model_answer(llm: LLM, store: Store) -> list[float]:
    system = (
        "You are Annie. Answer the status question in one short spoken sentence, from the work "
        "index only. Pending means pending is not none. If nothing is pending, say "
        "'Nothing needs you right now.'"
    )
    times: list[float] = []
    for question in MODEL_QUESTIONS:
        t0 = time.perf_counter()
        index = store.projections.work_index()
        prompt = llm.render(
            [
                {"role": "system", "content": system + "\n\n" + render_index(index)},
                {"role": "user", "content": question},
            ]
        )
        async for _ in llm.stream(prompt, max_tokens=40):
            pass
        times.append((time.perf_counter() - t0) * 1000.0)
    return times


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    rng = random.Random(7)
    now = datetime.now().astimezone()
    with tempfile.TemporaryDirectory(prefix="annie-bench-") as tmp:
        path = args.db or Path(tmp) / "annie.db"
        store = Store(path)
        have = store.conn.execute(
            "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM notes)"
        ).fetchone()
        t0 = time.perf_counter()
        if have[0] < args.tasks:
            _fill_tasks(store, args.tasks - have[0], rng, now)
        fill_s = time.perf_counter() - t0
        # An existing --db file is topped up, so a second run skips the slow embedding.
        embed_s = _fill_notes(store, settings, max(0, args.notes - have[1]), rng)
        if args.notes and store.notes.embedder is None:
            from models import load_embedder

            store.notes.embedder = load_embedder(settings)
        resolver = StateResolver(store, settings, lambda: (13_760, settings.context.window))

        state_ms: dict[str, list[float]] = {q: [] for q in STATE_QUESTIONS}
        for _ in range(args.repeat):
            for q in STATE_QUESTIONS:
                t = time.perf_counter()
                result = resolver.resolve(q)
                state_ms[q].append((time.perf_counter() - t) * 1000.0)
                assert result is not None, q
        every = [v for values in state_ms.values() for v in values]
        pending_ms = state_ms[STATE_QUESTIONS[0]]

        search_ms: list[float] = []
        embed_ms: list[float] = []
        retrieve_ms: list[float] = []
        recall_ms: list[float] = []
        recalled = 0
        if args.notes and store.notes.embedder is not None:
            store.notes.search("warm up the vectors")
            for i in range(args.searches):
                query = SEARCH_QUERIES[i % len(SEARCH_QUERIES)]
                t = time.perf_counter()
                vector = store.notes.embedder.embed([query])[0]
                t_embedded = time.perf_counter()
                store.notes.search(query, limit=10, vector=vector)
                t_done = time.perf_counter()
                embed_ms.append((t_embedded - t) * 1000.0)
                retrieve_ms.append((t_done - t_embedded) * 1000.0)
                search_ms.append((t_done - t) * 1000.0)
            # What a model turn pays before the prompt is built: the same search behind the
            # similarity floor, plus the "any notes at all?" check.
            embedder = store.notes.embedder
            for i in range(args.searches):
                query = SEARCH_QUERIES[i % len(SEARCH_QUERIES)]
                t = time.perf_counter()
                recalled += bool(recall(store, query, settings, lambda: embedder))
                recall_ms.append((time.perf_counter() - t) * 1000.0)

        routing_ok = True
        routing: list[str] = []
        full: dict[str, Routing] = {}
        if not args.no_routing:
            if store.notes.embedder is None:
                from models import load_embedder

                store.notes.embedder = load_embedder(settings)
            window = settings.context.window
            routing_ok, full = run_routing(
                store,
                settings,
                store.notes.embedder,
                now,
                lambda: (13_760, window),
                routing,
                args.blind,
            )
            if not args.no_front_ends:
                sets = sets_to_run(args.blind)
                routing_ok = run_front_ends(settings, sets, now, routing) and routing_ok

        model_ms: list[float] = []
        if not args.no_model:
            from models import load_llm

            llm = load_llm(settings, n_ctx=args.n_ctx)
            try:
                if not args.no_routing:
                    unsure = [(r.unsure_status, r.unsure_near) for r in full.values()]
                    run_ways_out(llm, store, unsure, routing)
                model_ms = asyncio.run(_model_answer(llm, store))
            finally:
                llm.close()
        store.close()

    print(f"store: {args.tasks:,} tasks, {args.notes:,} notes (+ reminders)")
    print(f"  load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"  fill tasks {fill_s:.2f} s; embed+store new notes {embed_s:.1f} s")
    print(
        f"state path, all intents ({len(every):,} answers): "
        f"p50 {_pct(every, 50):.3f} ms  p99 {_pct(every, 99):.3f} ms  (target p99 < 5 ms)"
    )
    print(
        f"state path, pending on me: p50 {_pct(pending_ms, 50):.3f} ms  "
        f"p99 {_pct(pending_ms, 99):.3f} ms"
    )
    if search_ms:
        print(
            f"hybrid search ({len(search_ms)} queries, query embedding included): "
            f"p50 {_pct(search_ms, 50):.2f} ms  p95 {_pct(search_ms, 95):.2f} ms  "
            "(target p95 < 30 ms)"
        )
        print(
            f"  of which query embedding p50 {_pct(embed_ms, 50):.2f} ms  "
            f"p95 {_pct(embed_ms, 95):.2f} ms; FTS + cosine + fusion p50 "
            f"{_pct(retrieve_ms, 50):.2f} ms  p95 {_pct(retrieve_ms, 95):.2f} ms"
        )
    if recall_ms:
        print(
            f"per-turn recall (search behind the {settings.context.evidence_min_similarity} "
            f"similarity floor): p50 {_pct(recall_ms, 50):.2f} ms  "
            f"p95 {_pct(recall_ms, 95):.2f} ms; {recalled} of {len(recall_ms)} queries "
            "recalled a note"
        )
    for line in routing:
        print(line)
    if model_ms:
        later = model_ms[1:] or model_ms
        ratio = statistics.median(later) / max(_pct(pending_ms, 50), 1e-6)
        print(
            f"same question through the small model (n_ctx {args.n_ctx}, <=40 tokens): "
            f"first {model_ms[0]:.0f} ms, later median {statistics.median(later):.0f} ms  "
            f"= {ratio:,.0f}x the state path p50"
        )
    ok = _pct(every, 99) < 5.0 and (not search_ms or _pct(search_ms, 95) < 30.0) and routing_ok
    print("targets met" if ok else "targets MISSED")
    return 0 if ok else 1
