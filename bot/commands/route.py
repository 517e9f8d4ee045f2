"""`python -m bot route "TEXT" | - [--json]`: which stage would answer a text, and why.

The text goes through the same chain of answerers as a live turn (`bot.turn.answers`), each
asked read only whether it would answer (`Answerer.place`): a reminder command, a yes or no to
a waiting approval, a status question for the state path (its intent and slots, and the
classifier's probability where the classifier decided), or the model. No model runs and no
record changes. With `-`, one text per stdin line and one line out per text, in order.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from bot.runtime import Runtime
from bot.turn.answers import Placed
from config import load_settings
from memory.db import StoreError

HELP = "show which stage would answer a text (reminder, approval, state or model) and why"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the text, or - to read one text per line from stdin")
    parser.add_argument(
        "--json",
        action="store_true",
        help='one JSON line per text: {"text", "stage", "intent", "slots", "confidence", "why"}',
    )


def run(args: argparse.Namespace) -> int:
    text: str = args.text.strip()
    if not text:
        print("error: the text is empty", file=sys.stderr)
        return 2
    runtime = Runtime(load_settings())
    error = ""
    try:
        runtime.store  # noqa: B018 - opened here so a broken file is said once, up front
    except StoreError as exc:
        error = str(exc)
        print(f"warning: {exc}", file=sys.stderr)
    chain = runtime.answer_chain(store_error=error)
    texts = (line.strip() for line in sys.stdin) if text == "-" else iter([text])
    try:
        for line in texts:
            if line:  # a blank line is no text: nothing to place
                print(_shown(chain.place(line), args.json), flush=True)
    finally:
        asyncio.run(runtime.close())
    return 0


def _shown(placed: Placed, as_json: bool) -> str:
    if as_json:
        return placed.to_json()
    slots = " ".join(f"{k}={v}" for k, v in placed.slots.items())
    conf = "" if placed.confidence is None else f" p={placed.confidence:.2f}"
    intent = f" {placed.intent}" if placed.intent else ""
    return f"{placed.stage}{intent}{conf} {slots}".rstrip() + f"  ({placed.why})"
