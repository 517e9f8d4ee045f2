"""`python -m bot replay TRACE.jsonl [--json] [--window N] [--dump-context PATH]`.

Plays a recorded session through the real turn (`bot.turn.replay`: a `Session` whose model emits
the recorded messages and whose tools return the recorded results) and prints one row per
turn: tokens used, % of the window, the breakdown by component, and compaction events.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bot.turn.replay import ReplayResult, TraceError, TurnRecord, read_trace
from config import Settings, load_settings

HELP = "replay a recorded session (JSONL trace) through the ledger, assembler and compaction"

COLUMNS = [
    ("fixed", ("system_prompt", "tool_schemas", "memory_briefing", "notes")),
    ("state", ("state", "evidence")),
    ("talk", ("conversation", "generation_prompt")),
    ("calls", ("tool_calls",)),
    ("results", ("tool_results",)),
    ("cleared", ("cleared",)),
    ("summary", ("summary",)),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", type=Path, help="the JSONL trace to replay")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--window", type=int, default=0, help="context window (default: trace, then config)"
    )
    parser.add_argument(
        "--dump-context",
        type=Path,
        metavar="PATH",
        help="write the final prompt, as rendered, here",
    )
    parser.add_argument("--db", type=Path, help="keep the replayed event log in this SQLite file")
    parser.add_argument(
        "--no-model",
        action="store_true",
        help="count with the vocabulary only; compaction gets no model for summaries",
    )


def label(row: TurnRecord) -> str:
    """The row's content column: the user's words and the tools the turn called."""
    short = " ".join(row.text.split())
    short = short if len(short) <= 24 else short[:23] + "…"
    return f'"{short}"' + (f" + {', '.join(row.tools)}" if row.tools else " + response")


def status(row_events: list[dict[str, Any]], overflow: bool, fraction: float, s: Settings) -> str:
    if overflow:
        return "OVERFLOW (trimmed)"
    tiers = [f"TIER {e.get('tier')}" for e in row_events]
    if tiers:
        return ", ".join(dict.fromkeys(tiers))
    if fraction >= s.compaction.tier2_threshold:
        return "over tier 2"
    if fraction >= s.compaction.tier1_threshold:
        return "over tier 1"
    return "OK"


def format_table(result: ReplayResult, settings: Settings) -> str:
    fixed = sum(result.fixed.values())
    head = f"{'turn':>4}  {'content':<36} {'tokens':>7} {'cumulative':>10} {'% full':>6}  "
    head += " ".join(f"{name:>7}" for name, _ in COLUMNS) + "  status"
    lines = [
        f"window {result.window:,} tokens; fixed overhead {fixed:,} "
        f"({', '.join(f'{k} {v:,}' for k, v in result.fixed.items())}); seed 003: 3,425",
        head,
        f"{0:>4}  {'fixed overhead':<36} {fixed:>7,} {fixed:>10,} {fixed / result.window:>6.0%}",
    ]
    for row in result.turns:
        parts = " ".join(
            f"{sum(row.by_component.get(k, 0) for k in keys):>7,}" for _, keys in COLUMNS
        )
        events = [e.to_json() for e in row.events]
        lines.append(
            f"{row.turn:>4}  {label(row)[:36]:<36} {row.used - row.used_before:>7,} "
            f"{row.used:>10,} {row.fraction:>6.0%}  {parts}  "
            + status(events, row.overflow, row.fraction, settings)
        )
        for ev in events:
            lines.append(
                f"      tier {ev['tier']}: "
                f"{ev['tokens_before']:,} -> {ev['tokens_after']:,} tokens, "
                f"{ev['items_affected']} items, re-prefill {ev['reprefill_tokens']:,}, "
                f"{ev['duration_ms']:.0f} ms {ev.get('detail', '')}".rstrip()
            )
    for e in result.disconnect_events:
        lines.append(f"      disconnect: tier {e.tier} {e.detail}".rstrip())
    s = result.summary()
    lines.append(
        f"peak {s['peak_used']:,} ({s['peak_fraction']:.0%}); overflows {s['overflows']}; "
        f"compactions: tier 1 x{s['tier1']}, tier 2 x{s['tier2']}, tier 3 x{s['tier3']}"
    )
    return "\n".join(lines)


async def replay_file(
    path: Path,
    *,
    window: int = 0,
    no_model: bool = False,
    db: Path | None = None,
    settings: Settings | None = None,
    llm: Any = None,
) -> tuple[ReplayResult, Settings]:
    """Replay a trace file; returns the result and the settings it ran with.

    The recorded turns are played by the scripted model on the configured model's tokenizer
    and template; the model itself (`llm`, else loaded unless `no_model`) writes tier-2
    summaries. With `no_model` summaries come from the rules.
    """
    from bot.turn.replay import TracePlayer
    from memory.store import Store
    from models import load_tokenizer

    records = read_trace(path)
    head = next((r for r in records if r["type"] == "session"), {})
    base = settings or load_settings()
    chosen = window or int(head.get("window", 0) or 0) or base.context.window
    run_settings = base.model_copy(deep=True)
    run_settings.context.window = chosen
    if llm is None and not no_model:
        from models import load_llm

        llm = load_llm(run_settings, n_ctx=chosen)
    store = Store(db) if db else Store()
    try:
        player = TracePlayer(
            records,
            run_settings,
            tokenizer=load_tokenizer(run_settings),
            store=store,
            summarizer=llm,
        )
        result = await player.run()
    finally:
        store.close()
    return result, run_settings


def run(args: argparse.Namespace) -> int:
    if args.dump_context and not args.dump_context.parent.is_dir():
        print(
            f"error: no folder {args.dump_context.parent} to write the context to", file=sys.stderr
        )
        return 2
    try:
        result, settings = asyncio.run(
            replay_file(args.trace, window=args.window, no_model=args.no_model, db=args.db)
        )
    except TraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.dump_context:
        try:
            args.dump_context.write_text(result.final_prompt, encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write the context to {args.dump_context}: {exc}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        print(format_table(result, settings))
    return 0
