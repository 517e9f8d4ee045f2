"""`python -m bot bench context`: the runtime's own cost per turn, model time excluded.

One turn here is what the session loop does around the model: admit the request, assemble
(fit check, envelope, manifest, rendered prompt), admit a tool call and its result, assemble
again, append the answer, read usage and make the compaction decision (thresholds). It runs
on a conversation of 300 items that fills a 32,768-token window, counted with the model's
own tokenizer. Each turn is timed twice on identical copies: "cold" includes tokenizing the
turn's new text; "warm" is the same turn with the new text already counted, which is the
runtime's overhead alone. The growth table repeats this from 4k to 32k windows, beside the
naive alternative of tokenizing the whole prompt every turn.
"""

from __future__ import annotations

import argparse
import statistics
import time

from config import Settings, load_settings
from context.assembler import Assembler, Request
from context.conversation import Conversation, Item, Prefix
from context.ledger import Ledger
from models.base import ToolCall

HELP = "per-turn cost of the ledger, assembler and compaction decision (no model time)"
WINDOWS = (4096, 8192, 16384, 32768)
TARGET_MS = 2.0

_SENTENCE = (
    "the plan moved to march because supply delays hit the north region while prices rose "
    "and the team asked for a new estimate before friday so we can decide on the budget"
)
_WORDS = _SENTENCE.split(" ")


def _text(seed: int, words: int) -> str:
    return " ".join(_WORDS[(seed * 7 + i * 3) % len(_WORDS)] for i in range(words)) + f" #{seed}"


def build(
    settings: Settings, ledger: Ledger, items: int, room: int = 0
) -> tuple[Conversation, Assembler]:
    """`items` items (user, tool call, result, answer per turn) filling all but `room` tokens."""
    from bot.runtime import load_system_prompt
    from bot.tools.registry import ActiveTools, default_registry

    assembler = Assembler(settings, ledger)
    tools = ActiveTools(default_registry())
    prefix = assembler.build_prefix(
        load_system_prompt(settings), tools.prefix_schemas(), tools.prefix_groups
    )
    conv = Conversation("bench", prefix)
    limit = ledger.window - ledger.output_reserve_tokens
    free = limit - ledger.prefix_cost(prefix).total - room - 200
    turns = items // 4
    per_turn = max(40, free // max(1, turns))
    # Split each turn's share: result ~70%, answer ~18%, request and call the rest.
    words = max(4, int(per_turn * 0.7 * 0.75))
    for t in range(1, turns + 1):
        conv.turn = t
        conv.append(Item(f"ev-u{t}", "user", "user", _text(t, 12), turn=t))
        call = ToolCall("search_memory", {"query": _text(t, 3)}, f"c{t}")
        conv.append(
            Item(
                f"ev-c{t}",
                "tool_call",
                "assistant",
                "",
                turn=t,
                tool_calls=[call],
                calls_in_content=False,
            )
        )
        conv.append(
            Item(
                f"ev-r{t}",
                "tool_result",
                "tool",
                _text(t, words),
                turn=t,
                call_id=f"c{t}",
                name="search_memory",
            )
        )
        conv.append(Item(f"ev-a{t}", "assistant", "assistant", _text(t + 1, words // 4), turn=t))
    while conv.items and ledger.usage(conv).total > limit - room - 100:
        conv.items = conv.items[4:]
    return conv, assembler


def _turn_items(n: int, turn: int) -> tuple[Request, Item, str, Item]:
    request = Request(_text(10_000 + n, 14), f"t{n}", f"ev-u{n}x")
    call = ToolCall("get_time", {}, f"x{n}")
    call_item = Item(
        f"ev-c{n}x",
        "tool_call",
        "assistant",
        "",
        turn=turn,
        tool_calls=[call],
        calls_in_content=False,
    )
    answer = Item(f"ev-a{n}x", "assistant", "assistant", _text(30_000 + n, 30), turn=turn)
    return request, call_item, _text(20_000 + n, 20), answer


def prewarm(ledger: Ledger, n: int, turn: int) -> None:
    """Count turn `n`'s new text ahead of time (what a warm turn then finds in the cache)."""
    request, call_item, result, answer = _turn_items(n, turn)
    ledger.count(request.text)
    ledger.count(result)
    for item in (
        Item(request.id, "user", "user", request.text, turn=turn),
        call_item,
        Item(
            f"ev-r{n}x", "tool_result", "tool", result, turn=turn, call_id=f"x{n}", name="get_time"
        ),
        answer,
    ):
        ledger.item_segment(item)


def one_turn(conv: Conversation, assembler: Assembler, settings: Settings, n: int) -> None:
    """Everything the loop does around the model for one turn with one tool call."""
    ledger = assembler.ledger
    request, call_item, result, answer = _turn_items(n, conv.turn + 1)
    groups = {"active_groups": ["core", "memory"], "available_groups": ["core", "memory", "web"]}
    assembler.admit_turn(conv, request)
    assembler.assemble(conv, request, **groups)
    conv.append(call_item)
    assembler.admit_tool_result(
        conv, id=f"ev-r{n}x", call_id=f"x{n}", name="get_time", content=result
    )
    assembler.assemble(conv, request, **groups)
    conv.append(answer)
    usage = ledger.usage(conv)
    # The compaction decision: the monitor's threshold checks on the exact usage.
    c = settings.compaction
    _ = (usage.fraction >= c.tier1_threshold, usage.fraction >= c.tier2_threshold, usage.fits)


def measure(
    window: int, items: int, turns: int, settings_base: Settings, engine: object
) -> dict[str, float]:
    """Time `turns` cold and `turns` warm turns, alternating, on one growing conversation.

    The conversation starts at `items` items, sized so the timed turns end near the limit.
    """
    settings = settings_base.model_copy(deep=True)
    settings.context.window = window
    ledger = Ledger(
        engine, window=window, output_reserve_tokens=settings.context.output_reserve_tokens
    )
    probe = Conversation("probe", Prefix(""))
    for n in range(2):
        one_turn(probe, Assembler(settings, ledger), settings, 90_000 + n)
    per_turn = (ledger.usage(probe).total - ledger.prefix_cost(probe.prefix).total) // 2
    # Timed turns take at most a quarter of the free space; the rest is history. Small
    # windows hold few turns, so the conversation is rebuilt (from cache) until enough ran.
    free = window - settings.context.output_reserve_tokens - ledger.prefix_cost(Prefix("x")).total
    per_build = max(2, min(2 * turns, free // 4 // per_turn))
    cold: list[float] = []
    warm: list[float] = []
    n = 0
    start_items = end_items = 0
    while len(warm) < turns:
        conv, assembler = build(settings, ledger, items, room=per_turn * per_build)
        start_items = len(conv.items)
        for _ in range(per_build):
            bucket = warm if n % 2 else cold
            if bucket is warm:
                prewarm(ledger, n, conv.turn + 1)
            t0 = time.perf_counter()
            one_turn(conv, assembler, settings, n)
            bucket.append((time.perf_counter() - t0) * 1000)
            n += 1
        end_items = len(conv.items)
    prompt = ledger.prompt(conv)
    t0 = time.perf_counter()
    for _ in range(3):
        ledger.codec.tokenize(prompt)
    full = (time.perf_counter() - t0) * 1000 / 3
    usage = ledger.usage(conv)
    return {
        "window": window,
        "items": start_items,
        "items_end": end_items,
        "used": usage.total,
        "warm_p50": statistics.median(warm),
        "warm_p95": statistics.quantiles(warm, n=20)[-1],
        "cold_p50": statistics.median(cold),
        "full_tokenize": full,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--turns", type=int, default=30, help="cold and warm turns timed per window"
    )
    parser.add_argument("--items", type=int, default=300, help="items at the 32,768 window")


def run(args: argparse.Namespace) -> int:
    from models import load_tokenizer

    settings = load_settings()
    engine = load_tokenizer(settings)
    rows = [
        measure(w, max(8, args.items * w // 32768), args.turns, settings, engine) for w in WINDOWS
    ]
    print(
        f"tokenizer: {getattr(engine, 'name', '?')}; "
        f"{args.turns} turns per window; model time excluded"
    )
    print(
        f"{'window':>7} {'items':>9} {'used':>7} {'warm p50':>9} {'warm p95':>9} "
        f"{'cold p50':>9} {'naive':>9}"
    )
    for r in rows:
        span = f"{r['items']}-{r['items_end']}"
        print(
            f"{r['window']:>7,} {span:>9} {r['used']:>7,} {r['warm_p50']:>7.3f}ms "
            f"{r['warm_p95']:>7.3f}ms {r['cold_p50']:>7.3f}ms {r['full_tokenize']:>7.2f}ms"
        )
    top = rows[-1]
    ok = top["warm_p50"] < TARGET_MS
    print(
        f"32k window, {top['items']} items: {top['warm_p50']:.3f} ms p50 per turn "
        f"(target < {TARGET_MS} ms: {'met' if ok else 'MISSED'}); tokenizing the turn's new text "
        f"adds {top['cold_p50'] - top['warm_p50']:.3f} ms; re-tokenizing the whole prompt "
        f"would cost {top['full_tokenize']:.2f} ms per call"
    )
    print("warm: accounting + assembly + compaction decision with the new text already counted;")
    print("cold: the same turn including tokenizing its new text; naive: tokenize the whole prompt")
    return 0 if ok else 1
