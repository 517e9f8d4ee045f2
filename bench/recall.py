"""`python -m bot bench recall`: Recall@k of per-turn recall over weeks of generated notes.

A generated memory (`bench/recall_memory.py`: thousands of everyday notes, a few hundred
planted facts, some tied to a day or an event) is written to a real store in a temporary
folder, and each question goes through the live turn's own recall (`context.recall.recall`)
and the evidence lane's admission (`context.admission.admit_turn`), with the lane holding
five notes. Figures: Recall@1/@3/@5 of the right note in the lane (by kind of question), the
lane's tokens, recall latency p50/p95 (embedding the question included, and without it), and
false certainty.

False certainty: the lane is not empty, recall was sure of it (`context.certainty`; a lane it
was not sure of says in every note that it is only related), and none of its notes is the
right note: the model is handed wrong notes as the answer and nothing in the lane says the
answer is missing. Beside it: how many lanes were sure, sure with the right note first, and
sure but led by a wrong note. Questions of kind `absent` (note `-`) ask what no note says; a
sure lane for one is false certainty too, counted apart.

The notes' embeddings are cached in the temporary folder by the hash of their texts, so a
second run at the same size embeds only the questions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.recall_memory import Memory, Question, generate
from config import Settings, load_settings
from context.admission import admit_turn
from context.conversation import Conversation, Prefix
from context.inputs import Request
from context.ledger import Ledger
from context.recall import Asked, recall
from memory.search import EmbedderLike
from memory.store import Store

HELP = "Recall@1/@5, tokens, latency and false certainty of recall over generated notes"
ABSENT = "absent"  # a question's kind when no note answers it (its note column is "-")
LANE = 5
CACHE = Path(tempfile.gettempdir()) / "annie-bench-recall"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--notes", type=int, default=5000, help="notes in memory (5000)")
    parser.add_argument("--facts", type=int, default=300, help="planted facts asked about (300)")
    parser.add_argument("--seed", type=int, default=2, help="the generated memory's seed (2)")
    parser.add_argument(
        "--blind",
        type=Path,
        metavar="TSV",
        help="ask these questions (kind, question, note; written blind) instead of the "
        "generated ones, over the same memory",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def load_questions(path: Path) -> list[Question]:
    """Questions from a TSV of kind, question and the right note's text (# starts a comment)."""
    out: list[Question] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise ValueError(f"{path}:{number}: expected kind, question and note, tab-separated")
        kind, text, answer = (p.strip() for p in parts)
        if (kind == ABSENT) != (answer == "-"):
            raise ValueError(f"{path}:{number}: a question of kind {ABSENT} has the note -")
        out.append(Question(text, answer, kind))
    return out


def _embeddings(
    embedder: EmbedderLike, texts: Sequence[str], cache: Path
) -> npt.NDArray[np.float32]:
    """The texts' embeddings, from the cache when this set of texts was embedded before."""
    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = cache / f"{key}-{embedder.dim}.npy"
    if path.exists():
        cached = np.load(path)
        if cached.shape == (len(texts), embedder.dim):
            return np.asarray(cached, np.float32)
    matrix = np.vstack(
        [embedder.embed(list(texts[i : i + 256])) for i in range(0, len(texts), 256)]
    )
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, matrix)
    return matrix


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _rate(hits: int, total: int) -> float:
    return round(hits / total, 4) if total else 0.0


def measure(
    notes: int,
    facts: int,
    *,
    seed: int = 2,
    settings: Settings | None = None,
    embedder: EmbedderLike | None = None,
    tokenizer: object | None = None,
    cache: Path = CACHE,
    questions: list[Question] | None = None,
) -> dict[str, Any]:
    """Build the memory, ask every question, and return the figures (see the module doc).

    The engines are loaded when not given; `cache` keeps the notes' embeddings between runs.
    `questions` replace the generated ones; each one's note must be in the memory.
    """
    settings = (settings or load_settings()).model_copy(deep=True)
    settings.context.evidence_hits = LANE
    if embedder is None:
        from models import load_embedder

        embedder = load_embedder(settings)
    if tokenizer is None:
        from models import load_tokenizer

        tokenizer = load_tokenizer(settings)
    start = time.perf_counter()
    memory = generate(notes, facts, seed)
    if questions is not None:
        texts = {n.text for n in memory.notes}
        absent = [q.answer for q in questions if q.kind != ABSENT and q.answer not in texts]
        if absent:
            raise ValueError(
                f"{len(absent)} questions' notes are not in the memory of {notes:,} notes, "
                f"seed {seed} (the first: {absent[0]!r}); use the --notes and --seed they "
                "were written for"
            )
        memory.questions = questions
    matrix = _embeddings(embedder, [n.text for n in memory.notes], cache)
    t_embedded = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="annie-recall-") as folder:
        store = Store(Path(folder) / "annie.db", embedder=embedder)
        try:
            ids = store.notes.add_many(
                [{"text": n.text, "created_at": n.at} for n in memory.notes], matrix
            )
            t_written = time.perf_counter()
            figures = _ask(store, memory, ids, settings, embedder, tokenizer)
        finally:
            store.close()
    figures.update(
        notes=len(memory.notes),
        facts=len(memory.questions),
        seed=seed,
        embed_notes_s=round(t_embedded - start, 1),
        write_s=round(t_written - t_embedded, 1),
        total_s=round(time.perf_counter() - start, 1),
    )
    return figures


def _ask(
    store: Store,
    memory: Memory,
    ids: list[str],
    settings: Settings,
    embedder: EmbedderLike,
    tokenizer: object,
) -> dict[str, Any]:
    by_text = {n.text: note_id for n, note_id in zip(memory.notes, ids, strict=True)}
    ledger = Ledger(tokenizer, window=settings.context.window)
    store.notes.search("warm up the in-memory vectors", vector=embedder.embed(["warm up"])[0])
    latency: list[float] = []
    searching: list[float] = []
    tokens: list[int] = []
    ranks: dict[str, list[int]] = {}
    false_certain = 0
    sure: dict[str, int] = {"lanes": 0, "right_first": 0, "wrong_first": 0, "held_back": 0}
    unanswerable = {"questions": 0, "sure": 0, "hedged": 0, "empty": 0}
    for i, q in enumerate(memory.questions):
        t = time.perf_counter()
        evidence = recall(store, q.text, settings, lambda: embedder, now=memory.now)
        latency.append((time.perf_counter() - t) * 1000.0)
        # The same again without embedding the question: what the store's side costs.
        vector, focus = Asked.of(store, q.text, memory.now).embed(embedder)
        t = time.perf_counter()
        Asked.of(store, q.text, memory.now).search(
            store, vector, focus, limit=LANE, floor=settings.context.evidence_min_similarity
        )
        searching.append((time.perf_counter() - t) * 1000.0)
        conv = Conversation(f"recall-{i}", Prefix(""))
        admitted = admit_turn(
            conv,
            Request(q.text, f"t{i}", f"q{i}"),
            None,
            evidence,
            ledger=ledger,
            ctx=settings.context,
        )
        lane = [item for item in admitted.items if item.lane == "evidence"]
        tokens.append(sum(ledger.item_tokens(item) for item in lane))
        shown = [item.source_ids[0] for item in lane]
        certain = bool(lane) and all(item.meta.get("certain", True) for item in lane)
        if q.kind == ABSENT:
            unanswerable["questions"] += 1
            unanswerable["sure" if certain else "hedged" if lane else "empty"] += 1
            continue
        right = by_text[q.answer]
        rank = shown.index(right) + 1 if right in shown else 0
        ranks.setdefault(q.kind, []).append(rank)
        false_certain += certain and rank == 0
        sure["lanes"] += certain
        sure["right_first"] += certain and rank == 1
        sure["wrong_first"] += certain and rank != 1
        sure["held_back"] += not certain and rank > 0

    def at(k: int, kinds: Sequence[str] | None = None) -> float:
        rs = [r for kind, values in ranks.items() if kinds is None or kind in kinds for r in values]
        return _rate(sum(1 for r in rs if 0 < r <= k), len(rs))

    total = sum(len(v) for v in ranks.values())
    return {
        "questions": total,
        "recall_at_1": at(1),
        "recall_at_3": at(3),
        "recall_at_5": at(5),
        "by_kind": {
            kind: {"questions": len(ranks[kind]), "at_1": at(1, [kind]), "at_5": at(5, [kind])}
            for kind in sorted(ranks)
        },
        "false_certainty": _rate(false_certain, total),
        "sure": _rate(sure["lanes"], total),
        "sure_right_first": _rate(sure["right_first"], total),
        "sure_wrong_first": _rate(sure["wrong_first"], total),
        "hedged_holding_right": _rate(sure["held_back"], total),
        "absent": unanswerable,
        "lane_tokens_mean": round(statistics.fmean(tokens), 1) if tokens else 0.0,
        "lane_tokens_p95": _pct([float(t) for t in tokens], 0.95),
        "recall_ms_p50": round(_pct(latency, 0.50), 1),
        "recall_ms_p95": round(_pct(latency, 0.95), 1),
        "search_ms_p50": round(_pct(searching, 0.50), 1),
        "search_ms_p95": round(_pct(searching, 0.95), 1),
        "floor": settings.context.evidence_min_similarity,
        "lane": LANE,
    }


def _print(f: dict[str, Any]) -> None:
    asked = f" from {f['questions_from']}" if "questions_from" in f else ""
    print(
        f"recall over {f['notes']:,} notes, {f['questions']} questions{asked} (seed {f['seed']}, "
        f"lane of {f['lane']} notes, floor {f['floor']})"
    )
    print(
        f"  Recall@1 {f['recall_at_1']:.1%}  Recall@3 {f['recall_at_3']:.1%}  "
        f"Recall@5 {f['recall_at_5']:.1%}  false certainty {f['false_certainty']:.1%}"
    )
    print(
        f"  lanes recall was sure of {f['sure']:.1%}: right note first "
        f"{f['sure_right_first']:.1%}, a wrong note first {f['sure_wrong_first']:.1%}; "
        f"hedged but holding the right note {f['hedged_holding_right']:.1%}"
    )
    a = f["absent"]
    if a["questions"]:
        print(
            f"  {a['questions']} questions no note answers: lane sure (false certainty) "
            f"{a['sure']}, hedged {a['hedged']}, empty {a['empty']}"
        )
    for kind, k in f["by_kind"].items():
        print(f"  {kind:<6} {k['questions']:>4} questions  @1 {k['at_1']:.1%}  @5 {k['at_5']:.1%}")
    print(
        f"  lane tokens mean {f['lane_tokens_mean']:.0f}, p95 {f['lane_tokens_p95']:.0f};  "
        f"recall p50 {f['recall_ms_p50']:.1f} ms, p95 {f['recall_ms_p95']:.1f} ms "
        f"(without embedding the question: p50 {f['search_ms_p50']:.1f}, "
        f"p95 {f['search_ms_p95']:.1f} ms)"
    )
    print(
        f"  run time {f['total_s']:.1f} s (embedding notes {f['embed_notes_s']:.1f} s, "
        f"writing {f['write_s']:.1f} s)"
    )


def run(args: argparse.Namespace) -> int:
    if args.notes < 1 or args.facts < 1:
        print("error: --notes and --facts must be at least 1")
        return 2
    try:
        questions = load_questions(args.blind) if args.blind is not None else None
        figures = measure(args.notes, args.facts, seed=args.seed, questions=questions)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}")
        return 2
    if args.blind is not None:
        figures["questions_from"] = str(args.blind)
    if args.json:
        print(json.dumps(figures))
    else:
        _print(figures)
    return 0
