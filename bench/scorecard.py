"""`python -m bot bench scorecard`: each competency's figure on one page, small and quick.

One line per competency of the seed's evaluation gate, each measured here at a small size by
the benchmark that owns it, and naming the command that gives its full figures:
- status: the state path's routing of the labelled set's held-out half (`bench.gate`);
- corrections, approvals, long tasks: the errands trace at an 8,192-token window (compaction
  fires several times) with an open task and a pending approval in its store, as
  `tests/compaction/test_long_session.py` plays it: the planted corrections and the other
  planted facts in the final prompt or the tier-3 checkpoint, and the approval's exact
  parameters and the task in the prompt after every compaction;
- tool discovery: tool-schema tokens on the first call of each turn, and how many first
  calls left a group out with the call that loads it (whether a real model then loads the
  right group needs that model: not measured here);
- retrieval: Recall@1/@5 and false certainty over a small generated memory (`bench.recall`);
- tokens: first-call input tokens p50/p95 and overflows over the gate's three traces.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from bench import gate
from bench.state_routing import RECALL_TARGET, TAKEN_TARGET
from bench.token_log import read_calls, report
from compaction.events import CompactionEvent
from config import load_settings
from context.intents import IntentIndex
from memory.approvals import params_text
from memory.store import Store
from models import Embedder, Tokenizer
from testkit import errands
from testkit.sim import after_compaction, simulate, simulator

HELP = "every competency's figure on one page: status, corrections, approvals, tokens, ..."
TURNS = 150
WINDOW = 8192
TASK = "Send the signed lease to Marta"
PARAMS = {"to": "landlord@example.org", "subject": "Lease", "amount_eur": 1250}
RECALL_SIZE = (600, 60)  # notes, planted facts: a small memory (the bench's is 5,000 / 300)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")


async def long_session(tokenizer: Tokenizer, db: Path) -> dict[str, Any]:
    """The errands trace at a small window with a task and an approval open in its store."""
    records, planted = errands.generate(TURNS, seed=gate.ERRANDS_SEED)
    settings = load_settings(context={"window": WINDOW})
    store = Store(db)
    try:
        task_id = store.tasks.add(TASK, pending="user")
        store.approvals.request("send_email", PARAMS, requester="annie", ttl_s=86_400)
        player = simulator(records, settings, tokenizer=tokenizer, store=store)
        seen = {"compactions": 0, "approval": 0, "task": 0}

        def check(event: CompactionEvent, prompt: str) -> None:
            if event.tier == 3:
                return
            seen["compactions"] += 1
            seen["approval"] += params_text(PARAMS) in prompt
            seen["task"] += TASK in prompt and task_id in prompt

        after_compaction(player, check)
        result = await simulate(player)
        saved = store.checkpoints.latest(result.session_id)
        checkpoint = json.dumps(saved.data, ensure_ascii=False) if saved else ""
        tokens = report(read_calls(store, [result.session_id]))
    finally:
        store.close()
    final = result.prompt()
    kept = {f.needle for f in planted if f.needle in final or f.needle in checkpoint}
    corrections = [f for f in planted if f.category == "correction"]
    return {
        "turns": TURNS,
        "window": WINDOW,
        **seen,
        "corrections": [sum(f.needle in kept for f in corrections), len(corrections)],
        "facts": [len(kept), len(planted)],
        "goal": bool(saved and saved.data.get("goal")),
        "overflows": result.overflows,
        "tokens": tokens,
    }


def retrieval(embedder: Embedder, tokenizer: Tokenizer) -> dict[str, Any] | None:
    """Recall@k at a small size, or None when the recall bench is not there to ask."""
    try:
        from bench.recall import measure
    except ImportError:
        return None
    notes, facts = RECALL_SIZE
    return measure(notes, facts, embedder=embedder, tokenizer=tokenizer)


def collect() -> dict[str, Any]:
    from models import load_embedder, load_tokenizer

    settings = load_settings()
    tokenizer = load_tokenizer(settings)
    embedder = load_embedder(settings)
    index = IntentIndex(lambda: embedder)
    index.warm()
    with tempfile.TemporaryDirectory(prefix="annie-scorecard-") as folder:
        tmp = Path(folder)
        traces = asyncio.run(gate.measure_traces(tokenizer, embedder, tmp))
        routing = gate.held_out_routing(settings, index, tmp / "routing.db")
        session = asyncio.run(long_session(tokenizer, tmp / "long.db"))
    return {
        "tokenizer": tokenizer.name,
        "routing": routing,
        "long_session": session,
        "traces": traces,
        "recall": retrieval(embedder, tokenizer),
    }


def lines(card: dict[str, Any]) -> list[str]:
    r, s = card["routing"], card["long_session"]
    tools = s["tokens"]["by_lane"].get("tools", {"p50": 0, "p95": 0})
    omitted = [n for n, count in s["tokens"]["omissions"]["reasons"] if "tool group" in n]
    where = f"errands {s['turns']} turns at {s['window']:,}"
    out = [
        f"scorecard ({card['tokenizer']})",
        f"status        held-out half: {r['recall']:.1%} answered from state (target >= "
        f"{RECALL_TARGET:.0%}), {r['taken']:.1%} near misses taken (<= "
        f"{TAKEN_TARGET:.0%})   [python -m bot bench state]",
        f"corrections   {s['corrections'][0]}/{s['corrections'][1]} planted corrections kept, "
        f"{s['facts'][0]}/{s['facts'][1]} planted facts ({where})   "
        f"[python -m bot bench compaction]",
        f"approvals     exact parameters in context after {s['approval']}/{s['compactions']} "
        f"compactions ({where})   [python -m bot bench scorecard --json]",
        f"long tasks    open task in context after {s['task']}/{s['compactions']} compactions, "
        f"checkpoint goal {'kept' if s['goal'] else 'MISSING'}, {s['overflows']} overflows "
        f"({where})   [python -m bot bench compaction]",
        f"tool discovery schema tokens first call p50 {tools['p50']:,} / p95 {tools['p95']:,}; "
        f"{len(omitted)} kinds of group left out, each with load_tool_group; group-miss rate "
        f"needs a real model: not measured   [python -m bot bench tokens --errands 1000]",
    ]
    rec = card["recall"]
    if rec is None:
        out.append("retrieval     Recall@k not measured: bench/recall.py is not there")
    else:
        out.append(
            f"retrieval     Recall@1 {rec['recall_at_1']:.1%}, Recall@5 {rec['recall_at_5']:.1%}, "
            f"false certainty {rec['false_certainty']:.1%}, sure of {rec['sure']:.1%} "
            f"({rec['notes']:,} notes, "
            f"{rec['questions']} questions)   [python -m bot bench recall]"
        )
    for name, t in card["traces"].items():
        out.append(
            f"tokens        {name:<9} first call p50 {t['first_call_p50']:,} / p95 "
            f"{t['first_call_p95']:,}, {t['overflows']} overflows, protected "
            f"{len(t['protected'])}/{len(t['protected']) + len(t['lost'])} "
            f"({t['turns']} turns at {t['window']:,})   [python -m bot bench tokens --gate PATH]"
        )
    return out


def run(args: argparse.Namespace) -> int:
    card = collect()
    if args.json:
        print(json.dumps(card, indent=2, ensure_ascii=False))
    else:
        print("\n".join(lines(card)))
    return 0
