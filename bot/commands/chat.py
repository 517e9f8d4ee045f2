"""`python -m bot chat`: a terminal conversation with Annie, streamed as it is generated.

Commands inside the chat: `/context` prints the ledger (fixed overhead compared with seed
003's 3,425 tokens, usage by component and lane, cache reuse per model call, compaction
events); `/manifest` prints the last call's manifest; `/quit` ends the session (tier 3 runs).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from typing import TYPE_CHECKING, TextIO

from bot.turn.events import (
    AnswerClosed,
    CompactionEvent,
    ErrorEvent,
    Event,
    Notice,
    ReminderEvent,
    RemindersDue,
    StateAnswer,
    TableEvent,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnDone,
)
from bot.turn.inbox import Interrupt, SayReminders, UserMessage
from config import load_settings

if TYPE_CHECKING:
    from bot.runtime import Runtime
    from context.usage import CallRecord

HELP = "talk with Annie in the terminal (/context, /manifest, /quit)"
SEED_FIXED_OVERHEAD = 3425


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--window", type=int, default=0, help="context window (default: config)")


def context_table(session: object) -> str:
    """The ledger as a table: fixed overhead vs seed 003, components, lanes, calls, events."""
    from bot.turn.session import Session

    assert isinstance(session, Session)
    u = session.usage()
    fixed = u.fixed.as_dict()
    total_fixed = sum(fixed.values())
    diff = total_fixed - SEED_FIXED_OVERHEAD
    lines = [
        f"context: {u.total:,} of {u.window:,} tokens ({u.fraction:.0%}), "
        f"{u.output_reserve_tokens:,} reserved"
    ]
    lines.append(f"  counted with {'the model tokenizer (exact)' if u.exact else 'an estimate'}")
    lines.append("fixed overhead:")
    lines += [f"  {name:<18} {n:>7,}" for name, n in fixed.items()]
    lines.append(
        f"  {'total':<18} {total_fixed:>7,}   seed 003: {SEED_FIXED_OVERHEAD:,} "
        f"({'+' if diff >= 0 else ''}{diff:,})"
    )
    lines.append("by component:")
    lines += [
        f"  {name:<18} {n:>7,}" for name, n in u.by_component.items() if n and name not in fixed
    ]
    lines.append("by lane:")
    lines += [f"  {name:<18} {n:>7,}" for name, n in u.by_lane.items() if n]
    if u.by_turn:
        lines.append("by turn: " + ", ".join(f"{t}: {n:,}" for t, n in sorted(u.by_turn.items())))
    if session.ledger.calls:
        lines.append("model calls (prompt / reused from cache / newly evaluated / generated):")
        for c in session.ledger.calls[-8:]:
            lines.append(call_line(c))
        if any(not c.cache_reported for c in session.ledger.calls[-8:]):
            lines.append("  ? the engine does not report what it reused: unknown, not 0")
    if not session.compactions:
        lines.append("compaction events: none yet")
    else:
        lines.append("compaction events:")
        for e in session.compactions:
            lines.append(
                f"  tier {e.tier}: {e.tokens_before:,} -> {e.tokens_after:,}, "
                f"{e.items_affected} items, "
                f"re-prefill {e.reprefill_tokens:,}, {e.duration_ms:.0f} ms {e.detail}".rstrip()
            )
    return "\n".join(lines)


def call_line(c: CallRecord) -> str:
    """One model call's row; reused and evaluated are "?" when the engine did not say."""
    if c.cache_reported:
        reused, evaluated = f"{c.reused_tokens:>6,}", f"{c.evaluated_tokens:>6,}"
    else:
        reused = evaluated = f"{'?':>6}"
    known_full = c.cache_reported and c.full_reprefill and c.reused_tokens == 0
    return (
        f"  turn {c.turn} {c.label:<8} {c.prompt_tokens:>6,} {reused} {evaluated} "
        f"{c.generated_tokens:>5,}" + ("  full re-prefill" if known_full else "")
    )


def show(event: Event, out: TextIO) -> None:
    if isinstance(event, TextDelta):
        out.write(event.text)
    elif isinstance(event, StateAnswer):
        out.write(f"{event.text}  [state path, {event.latency_ms:.1f} ms]")
    elif isinstance(event, ToolCallEvent):
        out.write(f"\n  [calling {event.name}({event.arguments})]\n")
    elif isinstance(event, ToolResultEvent):
        first = event.preview.splitlines()[0] if event.preview else ""
        out.write(f"  [{event.name} {'ok' if event.ok else 'failed'}: {first[:80]}]\n")
    elif isinstance(event, TableEvent):
        out.write(f"\n  [table on the page: {event.title}]\n")
        out.write("  " + " | ".join(event.columns) + "\n")
        for row in event.rows[:20]:
            out.write("  " + " | ".join(row) + "\n")
    elif isinstance(event, CompactionEvent):
        out.write(
            f"\n  [compaction tier {event.tier}: "
            f"{event.tokens_before:,} -> {event.tokens_after:,}]\n"
        )
    elif isinstance(event, ReminderEvent):
        out.write(f"\nannie> [reminder] {event.text}\n")
    elif isinstance(event, ErrorEvent):
        out.write(f"\n  [error: {event.message}]\n")
    elif isinstance(event, TurnDone):
        out.write("  [interrupted]\n" if event.interrupted else "\n")
    out.flush()


async def chat(
    window: int = 0,
    inp: TextIO = sys.stdin,
    out: TextIO = sys.stdout,
    runtime: Runtime | None = None,
) -> int:
    """Read lines from `inp`, answer on `out`; `runtime` defaults to one built from config.

    The terminal is a front end on the session's inbox: each line goes in as a `UserMessage`, and
    everything the session says (answers, reminders at the next gap, idle-time compactions)
    comes from its outbox and is printed as it comes."""
    from bot.runtime import Runtime

    if runtime is None:
        settings = load_settings(context={"window": window}) if window else load_settings()
        runtime = Runtime(settings)
    session = runtime.open_session(meta={"front_end": "chat"})
    session.warm_up()  # while the user types the first line
    out.write(f"Annie is listening (window {session.ledger.window:,}). /context /manifest /quit\n")
    waiting: dict[str, asyncio.Event] = {}

    def turn(command: UserMessage | SayReminders) -> asyncio.Event:
        closed = waiting[command.turn_id] = asyncio.Event()
        session.send(command)
        return closed

    async def read() -> None:
        while True:
            event = await session.outbox.get()
            if isinstance(event, RemindersDue):
                # Said as a turn of its own: after the answer in progress, never inside it.
                turn(SayReminders(new_turn_id()))
            elif isinstance(event, AnswerClosed):
                if (closed := waiting.pop(event.turn_id, None)) is not None:
                    closed.set()
            elif not isinstance(event, Notice):
                show(event, out)

    reader = asyncio.create_task(read())
    runtime.reminders.start()
    # Reminders that fell due while no one was here come first.
    await turn(SayReminders(new_turn_id())).wait()
    try:
        while True:
            out.write("you> ")
            out.flush()
            line = await asyncio.to_thread(inp.readline)
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                break
            if text == "/context":
                out.write(context_table(session) + "\n")
                continue
            if text == "/manifest":
                manifest = session.manifest()
                out.write((manifest.text() if manifest else "no model call yet") + "\n")
                continue
            out.write("annie> ")
            turn_id = new_turn_id()
            try:
                await turn(UserMessage(text, turn_id)).wait()
            except KeyboardInterrupt:
                session.send(Interrupt(turn_id))
    finally:
        reader.cancel()
        await runtime.close()
    return 0


def new_turn_id() -> str:
    return "chat-" + uuid.uuid4().hex[:12]


def run(args: argparse.Namespace) -> int:
    return asyncio.run(chat(args.window))
