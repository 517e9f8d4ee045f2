"""`python -m bot briefing [--json]`: the memory briefing the next session will open with.

Built by the same function the runtime calls when a session opens (`compaction.briefing`), on
the same store, budget and tokenizer (the configured model's, loaded vocabulary only), with
its sources: each earlier session it drew on (and whether that one was rebuilt from its event
log after a crash) and every record id a line came from.
"""

from __future__ import annotations

import argparse
import json

from bot.commands.records import with_store
from bot.tools.registry import default_registry
from compaction.briefing import Briefing, build_briefing, notes_block
from config import load_settings
from memory.store import Store

HELP = "print the briefing the next session will get, with its sources"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object")


def as_json(briefing: Briefing, budget: int) -> dict[str, object]:
    return {
        "text": briefing.text,
        "notes": briefing.notes,
        "tokens": briefing.tokens,
        "budget": budget,
        "dropped": briefing.dropped,
        "sessions": [s.__dict__ for s in briefing.sessions],
        "source_ids": briefing.source_ids,
    }


def as_text(briefing: Briefing, budget: int) -> str:
    left_out = f"; {briefing.dropped} lines left out to fit" if briefing.dropped else ""
    out = [f"briefing: {briefing.tokens:,} of {budget:,} tokens{left_out}"]
    if not briefing.sessions:
        out.append("sources: no earlier session with content")
    else:
        out.append("sources:")
    for s in briefing.sessions:
        how = "crashed, rebuilt from its events" if s.rebuilt_from_log else "closed"
        record = f", {s.checkpoint_id}" if s.checkpoint_id else ""
        when = s.started_at[:16].replace("T", " ")
        out.append(f"  {s.session_id or '-'}  {when} UTC  {how}{record}: {s.lines} lines")
    if briefing.source_ids:
        out.append("records: " + ", ".join(briefing.source_ids))
    out.append("")
    out.append(briefing.text or "(no briefing)")
    if briefing.notes:
        out += ["", "Notes:", notes_block(briefing.notes)]
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    from models import load_tokenizer

    settings = load_settings()
    budget = settings.context.budget("briefing")

    def act(store: Store) -> int:
        from memory.calendar import from_settings

        briefing = build_briefing(
            store,
            budget=budget,
            count=load_tokenizer(settings).count,
            protects=default_registry().protects(),
            calendar=from_settings(settings),
        )
        if args.json:
            print(json.dumps(as_json(briefing, budget), ensure_ascii=False))
        else:
            print(as_text(briefing, budget))
        return 0

    return with_store(settings, act)
