"""`python -m bot bench compaction`: a 300-turn tool-heavy session at 32,768 and 4,096 tokens.

For each window it plays the generated trace (testkit.trace) through the real turn (a
`Session` whose scripted model emits the recorded messages, testkit.sim) on a fresh SQLite
file, and prints: peak usage, overflows (must be 0), compactions per tier, compaction
re-prefill tokens per turn as the compactor predicts them (cut to end) and as the idle-time
re-prefill calls evaluated them, beside a naive runtime that recomputes the whole prompt after
every edit; prompt tokens the user's calls evaluated per turn with prefix reuse and without
(all read off the ledger's model calls); and for each of 20 planted facts whether it is still
in the final context or the persisted checkpoint (exact match). The summarizer is the
session's scripted model (real tokenizer, scripted text) unless `--real-summarizer` asks for
the small real model (which then takes the re-prefill too, out of the session model's sight).
With `--ask-model` (the default on a GPU box) the real model is then asked each fact's question
after the final context of the largest window it can hold, and its answers are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from config import Settings, load_settings
from context.conversation import Conversation
from memory.store import Store
from models import LLM, ModelError, load_llm, load_tokenizer
from models.resolver import detect_device
from testkit.sim import SimResult, simulate, simulator
from testkit.trace import PlantedFact, generate

HELP = "300-turn tool-heavy session at 32k and 4k windows: usage, tiers, re-prefill, facts"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--windows", default="32768,4096", help="comma-separated windows")
    parser.add_argument("--seed", type=int, default=7, help="trace generator seed")
    parser.add_argument(
        "--real-summarizer",
        action="store_true",
        help="summarize with the small real model (slow on CPU) instead of the scripted one",
    )
    parser.add_argument(
        "--ask-model",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="ask the real model each planted fact's question (default: on with a GPU)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _stats(values: list[int]) -> dict[str, float]:
    return {"mean": statistics.fmean(values) if values else 0.0, "max": max(values, default=0)}


def _facts(result: SimResult, store: Store, planted: list[PlantedFact]) -> list[dict[str, Any]]:
    final = result.prompt()
    saved = store.checkpoints.latest(result.session_id)
    saved_text = json.dumps(saved.data, ensure_ascii=False) if saved else ""
    return [
        {
            "turn": f.turn,
            "category": f.category,
            "needle": f.needle,
            "in_context": f.needle in final,
            "in_checkpoint": f.needle in saved_text,
        }
        for f in planted
    ]


async def ask_facts(
    llm: LLM, conv: Conversation, facts: list[PlantedFact], *, max_tokens: int = 48
) -> list[dict[str, Any]]:
    """The model's answer to each fact's question, asked as the next user turn of `conv`."""
    out = []
    for fact in facts:
        messages = [*conv.messages(), {"role": "user", "content": fact.question}]
        prompt = llm.render(messages, conv.prefix.tools or None)
        if fact is facts[0]:
            # The context up to the question, evaluated once: each question resumes from it.
            await llm.prefill(prompt[: prompt.rfind(fact.question)])
        raw = "".join([piece async for piece in llm.stream(prompt, max_tokens=max_tokens)])
        answer = llm.parse(raw).text.strip() or raw.strip()
        out.append({"turn": fact.turn, "answer": answer, "recalled": fact.recalled(answer)})
    return out


def _load_answerer(settings: Settings, windows: list[int]) -> dict[int, LLM]:
    """{window: the real model} at the largest window it can hold; a failed load tries the next."""
    error = ModelError("no window to load the model at")
    for window in sorted(set(windows), reverse=True):
        try:
            return {window: load_llm(settings, n_ctx=window)}
        except ModelError as exc:
            error = exc
    raise error


async def _one(
    window: int,
    turns: int,
    seed: int,
    summarizer: LLM | None,
    tokenizer: Any,
    home: Path,
    ask: LLM | None,
) -> dict[str, Any]:
    settings = load_settings(context={"window": window})
    store = Store(home / f"bench-{window}.db")
    records, planted = generate(turns, seed=seed)
    options: dict[str, Any] = {"summarizer": summarizer} if summarizer else {}
    player = simulator(records, settings, tokenizer=tokenizer, store=store, **options)
    t0 = time.perf_counter()
    result = await simulate(player)
    elapsed = time.perf_counter() - t0
    per_turn = result.stats
    out = {
        "window": window,
        "output_reserve_tokens": settings.context.output_reserve_tokens,
        "fixed_overhead": result.ledger.prefix_cost(result.conv.prefix).total,
        "turns": len(per_turn),
        "peak_used": result.peak,
        "peak_fraction": result.peak / window,
        "overflows": result.overflows,
        "assembler_trims": result.trimmed,
        "tier1": result.count(1),
        "tier2": result.count(2),
        "tier3": result.count(3),
        "forced": sum(1 for e in result.events if "forced" in e.detail),
        "tier2_cancelled": result.compactor.tier2_cancelled,
        "reprefill_per_turn": _stats([t.reprefill for t in per_turn]),
        "reprefill_evaluated_per_turn": _stats([t.reprefill_evaluated for t in per_turn]),
        "reprefill_per_turn_naive": _stats([t.reprefill_naive for t in per_turn]),
        "evaluated_per_turn": _stats([t.evaluated for t in per_turn]),
        "evaluated_per_turn_naive": _stats([t.naive for t in per_turn]),
        "facts": _facts(result, store, planted),
        "seconds": elapsed,
    }
    if ask is not None:
        out["model"] = ask.path.name
        out["answers"] = await ask_facts(ask, result.conv, planted)
    store.close()
    return out


def _print(report: dict[str, Any]) -> None:
    print(
        f"compaction bench: {report['turns']} tool-heavy turns, summarizer {report['summarizer']}"
    )
    rows = [
        ("fixed overhead (tokens)", lambda r: f"{r['fixed_overhead']:,}"),
        ("output reserve", lambda r: f"{r['output_reserve_tokens']:,}"),
        ("peak usage", lambda r: f"{r['peak_used']:,} ({r['peak_fraction']:.1%})"),
        ("overflows (must be 0)", lambda r: str(r["overflows"])),
        ("assembler trims", lambda r: str(r["assembler_trims"])),
        ("tier 1 / 2 / 3", lambda r: f"{r['tier1']} / {r['tier2']} / {r['tier3']}"),
        ("forced before a call", lambda r: str(r["forced"])),
        (
            "re-prefill/turn mean, max",
            lambda r: "{:,.0f}, {:,}".format(*r["reprefill_per_turn"].values()),
        ),
        (
            "  re-prefill calls evaluated",
            lambda r: "{:,.0f}, {:,}".format(*r["reprefill_evaluated_per_turn"].values()),
        ),
        (
            "  naive: whole prompt per edit",
            lambda r: "{:,.0f}, {:,}".format(*r["reprefill_per_turn_naive"].values()),
        ),
        (
            "evaluated/turn mean, max",
            lambda r: "{:,.0f}, {:,}".format(*r["evaluated_per_turn"].values()),
        ),
        (
            "  naive: no prefix reuse",
            lambda r: "{:,.0f}, {:,}".format(*r["evaluated_per_turn_naive"].values()),
        ),
        (
            "planted facts kept (of 20)",
            lambda r: str(sum(f["in_context"] or f["in_checkpoint"] for f in r["facts"])),
        ),
        ("seconds", lambda r: f"{r['seconds']:.1f}"),
    ]
    runs = report["runs"]
    print(f"{'':32}" + "".join(f"{'window ' + format(r['window'], ','):>22}" for r in runs))
    for label, fmt in rows:
        print(f"{label:32}" + "".join(f"{fmt(r):>22}" for r in runs))
    print("\nplanted facts (exact match): in final context / in tier-3 checkpoint, per window")
    for i, fact in enumerate(runs[0]["facts"]):
        marks = "  ".join(
            ("ctx" if r["facts"][i]["in_context"] else "---")
            + "/"
            + ("ckpt" if r["facts"][i]["in_checkpoint"] else "----")
            for r in runs
        )
        print(f"  t{fact['turn']:<4} {fact['category']:<10} {fact['needle'][:44]:<46} {marks}")
    for r in (r for r in runs if "answers" in r):
        print(f"\nmodel answers ({r['model']}) after the final context at window {r['window']:,}")
        for fact, a in zip(r["facts"], r["answers"], strict=True):
            mark, answer = "yes" if a["recalled"] else "no", " ".join(a["answer"].split())
            print(f"  t{a['turn']:<4} {mark:<4} {fact['needle'][:30]:<32} {answer[:60]}")
        print(f"model recalled {sum(a['recalled'] for a in r['answers'])}/{len(r['answers'])}")


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    tokenizer = load_tokenizer(settings)
    windows = [int(w) for w in str(args.windows).split(",") if w.strip()]
    summarizer: LLM | None = None
    kind = "scripted (real tokenizer, the session's model)"
    if args.real_summarizer:
        summarizer = load_llm(settings, n_ctx=4096)
        kind = f"real ({summarizer.path.name}, n_ctx 4096)"
    on = detect_device(settings) == "cuda" if args.ask_model is None else args.ask_model
    ask = _load_answerer(settings, windows) if on else {}
    with tempfile.TemporaryDirectory(prefix="annie-bench-") as tmp:
        runs = [
            asyncio.run(
                _one(w, args.turns, args.seed, summarizer, tokenizer, Path(tmp), ask.get(w))
            )
            for w in windows
        ]
    report = {"turns": args.turns, "summarizer": kind, "runs": runs}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    return 0 if all(r["overflows"] == 0 for r in runs) else 1
