"""The evaluation gate: the baseline traces, their figures, and the check a release must pass.

Three traces are replayed through the real turn (`testkit.sim`: a `Session` whose scripted
model emits the recorded replies and writes the tier-2 summaries) on a scratch SQLite file:
- `seed003`: the shipped seed-003 session (`bot/fixtures/seed003_session.jsonl`);
- `errands`: the generated errands session (`testkit.errands`), long enough to compact;
- `exported`: a session lived by `testkit.gate_session` (real tools, the scripted model),
  exported with `python -m bot export`'s function, then replayed.
For each, the figures read back from the replay's event log (`bench.tokens`): first-call
input tokens p50/p95 and overflows; and the protected facts (the planted needles for the
errands trace; for the others what `compaction.protected` finds in the trace) that must still
be in the final prompt or the tier-3 checkpoint. The held-out half of the labelled status set
is routed by the state path (`testkit.status_set.evaluate`) against `bench.state_routing`'s
targets. `check` fails when p50 or p95 grows more than 10%, a protected fact is lost, an
overflow appears, or routing falls below target; each failure names the before and after.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.state_routing import RECALL_TARGET, TAKEN_TARGET
from bench.token_log import read_calls, report
from bot.commands.export import session_trace
from bot.tools.registry import default_registry
from bot.turn.replay import read_trace
from compaction.protected import LogEntry, extract
from config import Settings, load_settings
from context.intents import IntentIndex
from context.state import StateResolver
from memory.store import Store
from models import Embedder, Tokenizer
from testkit import errands, status_set
from testkit.gate_session import scripted_session
from testkit.sim import simulate, simulator

ROOT = Path(__file__).resolve().parents[1]
SEED003 = ROOT / "bot" / "fixtures" / "seed003_session.jsonl"
BASELINE = ROOT / "tests" / "fixtures" / "gate" / "baseline.json"
GROWTH = 0.10  # first-call p50/p95 may grow this much before the gate fails
# Windows and lengths: small enough for the suite (compaction fires on each), and fixed,
# because the figures are compared across commits.
TRACES = ("seed003", "errands", "exported")
WINDOWS = {"seed003": 4096, "errands": 8192, "exported": 4096}
ERRANDS_TURNS = 150
ERRANDS_SEED = 11
NOW = datetime(2026, 9, 1, 10, 30).astimezone()


def protected_needles(records: list[dict[str, Any]]) -> list[str]:
    """What `compaction.protected`'s rules find in a trace: the strings a checkpoint keeps."""
    entries: list[LogEntry] = []
    for n, rec in enumerate(records):
        if rec["type"] in ("user", "assistant"):
            entries.append(LogEntry(f"r{n}", rec["type"], str(rec.get("text", ""))))
        for call in rec.get("tool_calls") or []:
            entries.append(LogEntry(f"r{n}", "tool_call", "", call["name"], call["arguments"]))
    cp = extract(entries, default_registry().protects())
    found = [*cp.corrections, *cp.facts, *cp.ids, *cp.notes, *cp.commitments]
    return list(dict.fromkeys(found))


async def replay(
    records: list[dict[str, Any]], window: int, tokenizer: Tokenizer, db: Path
) -> dict[str, Any]:
    """Play `records` at `window` into the SQLite file `db`; the report of its event log, the
    final prompt and the tier-3 checkpoint's text."""
    settings = load_settings(context={"window": window})
    store = Store(db)
    try:
        result = await simulate(simulator(records, settings, tokenizer=tokenizer, store=store))
        rep = report(read_calls(store, [result.session_id]))
        saved = store.checkpoints.latest(result.session_id)
        checkpoint = json.dumps(saved.data, ensure_ascii=False) if saved else ""
    finally:
        store.close()
    return {"report": rep, "final": result.prompt(), "checkpoint": checkpoint}


def figures(played: dict[str, Any], needles: list[str], turns: int) -> dict[str, Any]:
    rep = played["report"]
    kept = [n for n in needles if n in played["final"] or n in played["checkpoint"]]
    return {
        "window": rep["window"],
        "turns": turns,
        "first_call_p50": rep["first_call"]["p50"],
        "first_call_p95": rep["first_call"]["p95"],
        "overflows": rep["overflows"],
        "protected": kept,
        "lost": [n for n in needles if n not in kept],
    }


def _turns(records: list[dict[str, Any]]) -> int:
    return sum(1 for r in records if r["type"] == "user")


async def measure_traces(
    tokenizer: Tokenizer, embedder: Embedder, tmp: Path, names: Sequence[str] = TRACES
) -> dict[str, dict[str, Any]]:
    """The gate's figures for the traces named."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        if name == "seed003":
            records = read_trace(SEED003)
            needles = protected_needles(records)
        elif name == "errands":
            records, planted = errands.generate(ERRANDS_TURNS, seed=ERRANDS_SEED)
            needles = [f.needle for f in planted]
        else:
            records = await lived_trace(tokenizer, embedder, tmp / "lived.db")
            needles = protected_needles(records)
        played = await replay(records, WINDOWS[name], tokenizer, tmp / f"{name}.db")
        out[name] = figures(played, needles, _turns(records))
    return out


async def lived_trace(tokenizer: Tokenizer, embedder: Embedder, db: Path) -> list[dict[str, Any]]:
    """`testkit.gate_session`'s session, lived on the SQLite file `db`, then exported."""
    lived = Store(db)
    try:
        settings = load_settings(context={"window": WINDOWS["exported"]})
        sid = await scripted_session(settings, lived, tokenizer, embedder)
        return session_trace(lived, sid)
    finally:
        lived.close()


def held_out_routing(settings: Settings, index: IntentIndex, db: Path) -> dict[str, float]:
    """The state path's routing of the held-out half on the labelled set's small store."""
    store = Store(db)
    try:
        status_set.seed(store, NOW)
        resolver = StateResolver(store, settings, lambda: (13_760, 32_768), intents=index)
        routed = status_set.evaluate(resolver, status_set.load("held_out"), NOW)
    finally:
        store.close()
    return {"recall": round(routed.recall, 4), "taken": round(routed.taken_rate, 4)}


def measure(
    tokenizer: Tokenizer,
    embedder: Embedder,
    index: IntentIndex | None,
    names: Sequence[str] = TRACES,
) -> dict[str, Any]:
    """The figures the gate holds: the named traces', and the held-out routing unless
    `index` is None (the suite measures the long trace in a test of its own)."""
    out: dict[str, Any] = {"tokenizer": tokenizer.name, "growth_allowed": GROWTH}
    with tempfile.TemporaryDirectory(prefix="annie-gate-") as tmp:
        out["traces"] = asyncio.run(measure_traces(tokenizer, embedder, Path(tmp), names))
        if index is not None:
            routing = held_out_routing(load_settings(), index, Path(tmp) / "routing.db")
            targets = {"recall_target": RECALL_TARGET, "taken_target": TAKEN_TARGET}
            out["routing"] = {**routing, **targets}
    return out


def check(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What the gate refuses, each with its before and after figures; [] passes."""
    if before.get("tokenizer") != after.get("tokenizer"):
        return [f"the baseline was counted with {before.get('tokenizer')!r}, this run with "
                f"{after.get('tokenizer')!r}: write a baseline for this tokenizer"]  # fmt: skip
    failures: list[str] = []
    growth = float(before.get("growth_allowed", GROWTH))
    for name, new in after["traces"].items():
        old = before["traces"].get(name)
        if old is None:
            failures.append(f"{name}: no baseline figures; write a baseline")
            continue
        for key in ("first_call_p50", "first_call_p95"):
            if new[key] > old[key] * (1 + growth):
                grew = new[key] / old[key] - 1 if old[key] else 1.0
                failures.append(
                    f"{name}: {key} grew {old[key]:,} -> {new[key]:,} tokens "
                    f"(+{grew:.1%}; allowed +{growth:.0%})"
                )
        if new["overflows"] > old["overflows"]:
            failures.append(f"{name}: overflows {old['overflows']} -> {new['overflows']}")
        lost = [n for n in old["protected"] if n not in new["protected"]]
        if lost:
            failures.append(f"{name}: protected facts lost: {lost}")
    r = after.get("routing")
    if r and (r["recall"] < RECALL_TARGET or r["taken"] > TAKEN_TARGET):
        was = before.get("routing", {})
        failures.append(
            f"held-out routing below target: status answered {was.get('recall')} -> "
            f"{r['recall']} (target >= {RECALL_TARGET}), near misses taken {was.get('taken')} "
            f"-> {r['taken']} (target <= {TAKEN_TARGET})"
        )
    return failures


def table(before: dict[str, Any] | None, after: dict[str, Any]) -> str:
    """Before and after, one line a figure: what a budget change's commit message quotes."""
    lines = [f"evaluation gate ({after['tokenizer']}): before -> after"]
    for name, new in after["traces"].items():
        old = (before or {}).get("traces", {}).get(name, {})
        lines.append(f"  {name} ({new['turns']} turns, window {new['window']:,}):")
        for key in ("first_call_p50", "first_call_p95", "overflows"):
            lines.append(f"    {key:<16} {old.get(key, '-')!s:>8} -> {new[key]:>8}")
        kept = f"{len(new['protected'])}/{len(new['protected']) + len(new['lost'])}"
        lines.append(f"    {'protected kept':<16} {len(old.get('protected', [])):>8} -> {kept:>8}")
    was, now = (before or {}).get("routing", {}), after.get("routing", {})
    for key in ("recall", "taken") if now else ():
        lines.append(f"  held-out routing {key:<7} {was.get(key, '-')!s:>8} -> {now[key]:>8}")
    return "\n".join(lines)


def run_baseline(write: Path | None, against: Path | None, *, as_json: bool = False) -> int:
    """`bench tokens --write-baseline PATH` / `--gate PATH`."""
    from models import load_embedder, load_tokenizer

    path = write or against
    assert path is not None
    before = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    if against is not None and before is None:
        print(f"error: no baseline at {path}; write one with --write-baseline", file=sys.stderr)
        return 2
    settings = load_settings()
    embedder = load_embedder(settings)
    index = IntentIndex(lambda: embedder)
    index.warm()
    after = measure(load_tokenizer(settings), embedder, index)
    failures = check(before, after) if before is not None else []
    if write is not None:
        write.parent.mkdir(parents=True, exist_ok=True)
        write.write_text(json.dumps(after, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if as_json:
        print(json.dumps({"before": before, "after": after, "failures": failures}, indent=2))
    else:
        print(table(before, after))
        for f in failures:
            print(f"FAIL {f}")
        if write is not None:
            print(f"wrote {write}")
    return 1 if failures and against is not None else 0


def replay_report(
    trace: Path | None, turns: int | None, window: int, seed: int
) -> tuple[dict[str, Any], str]:
    """`bench tokens --trace FILE` / `--errands N`: the report of one replay."""
    from models import load_tokenizer

    if trace is not None:
        records = read_trace(trace)  # TraceError is a ValueError
        head = next((r for r in records if r["type"] == "session"), {})
        chosen = window or int(head.get("window") or 0) or load_settings().context.window
        title = f"replay of {trace}"
    else:
        records, _ = errands.generate(int(turns or 0), seed=seed)
        chosen = window or 32_768
        title = f"errands trace, {turns} turns (seed {seed})"
    tokenizer = load_tokenizer(load_settings())
    with tempfile.TemporaryDirectory(prefix="annie-tokens-") as tmp:
        played = asyncio.run(replay(records, chosen, tokenizer, Path(tmp) / "replay.db"))
    return played["report"], f"{title} at window {chosen:,}"
