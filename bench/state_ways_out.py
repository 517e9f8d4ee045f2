"""`bench state`, the unsure band's two ways out, measured on the configured language model.

The questions the classifier was unsure of are where the state path does not answer alone.
(a) The model picks an intent from a grammar-constrained list (the intents and "none", GBNF
as `bot.tools.grammar` builds them) and the state path renders the answer: a near miss it
labels with an intent becomes a confident wrong answer from state. (b) The turn goes to the
model, whose prompt carries the Work Index snapshot: no near miss is answered from state, and
a status answer that denies pending work is corrected (`context.answer_check`). Reported:
for (a), near misses taken and status questions picked right; for (b), the status answers
that name a record of the snapshot, and those the check corrected.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING

from bench.state_routing import pct
from context.answer_check import AnswerCheck, read_facts
from context.snapshot import safe_snapshot
from context.state_vocab import INTENTS
from testkit.status_set import Labelled

if TYPE_CHECKING:
    from memory.store import Store
    from models.base import LLM

_MEANING = {
    "pending": "what is waiting on the user to do, answer or decide",
    "approvals": "actions waiting for the user's yes or no",
    "list": "the user's open tasks, the to-do list",
    "blocked": "tasks that are stuck, or waiting on other people or on the assistant",
    "schedule": "the user's reminders, calendar, due dates and what comes next",
    "time": "the time of day here and now",
    "date": "today's date, day, month or year",
    "context": "how full the assistant's conversation context window is",
    "remember": "what the assistant's notes say about a named thing",
    "none": "anything else: general knowledge, other places, commands, small talk",
}
_PICK_SYSTEM = "Label the user's question with exactly one label.\n" + "\n".join(
    f"{k}: {v}" for k, v in _MEANING.items()
)
_GRAMMAR = "root ::= " + " | ".join(json.dumps(k) for k in (*INTENTS, "none"))
_ANSWER_SYSTEM = (
    "You are Annie. Answer in one or two short spoken sentences, from the current state "
    "below only. Pending means waiting on someone."
)


async def _complete(llm: LLM, system: str, user: str, grammar: str | None, tokens: int) -> str:
    prompt = llm.render([{"role": "system", "content": system}, {"role": "user", "content": user}])
    out = ""
    async for piece in llm.stream(prompt, max_tokens=tokens, grammar=grammar):
        out += piece
    return out.strip()


async def _measure(
    llm: LLM, store: Store, status: list[Labelled], near: list[Labelled], lines: list[str]
) -> None:
    say = lines.append
    pick_ms: list[float] = []
    taken = right = 0
    for item in [*status, *near]:
        t0 = time.perf_counter()
        label = await _complete(llm, _PICK_SYSTEM, f"Question: {item.text}\nLabel:", _GRAMMAR, 6)
        pick_ms.append((time.perf_counter() - t0) * 1000.0)
        if item.label == "none":
            taken += label != "none"
        else:
            right += label == item.label
    say(
        f"  (a) grammar-constrained pick: {taken}/{len(near)} near misses would be answered "
        f"from state (wrong), {right}/{len(status)} status questions picked right; one pick "
        f"p50 {pct(pick_ms, 50):.0f} ms"
    )
    snapshot = safe_snapshot(store).text
    titles = [line for line in snapshot.splitlines() if line]
    grounded = corrected = 0
    for item in status:
        reply = await _complete(llm, _ANSWER_SYSTEM + "\n\n" + snapshot, item.text, None, 60)
        check = AnswerCheck(read_facts(store))
        if check.rewrite(reply) != reply:
            corrected += 1
        words = {w.lower() for line in titles for w in line.split() if len(w) > 4}
        grounded += any(w.lower().strip(".,:;") in words for w in reply.split())
    say(
        f"  (b) to the model with the snapshot: 0/{len(near)} near misses answered from state; "
        f"{grounded}/{len(status)} status answers name a record of the snapshot, "
        f"{corrected}/{len(status)} denied pending work and were corrected"
    )


def run_ways_out(
    llm: LLM, store: Store, unsure: list[tuple[list[Labelled], list[Labelled]]], lines: list[str]
) -> None:
    """Measure (a) and (b) on the unsure questions of every set (status, near misses)."""
    status = [i for s, _ in unsure for i in s]
    near = [i for _, n in unsure for i in n]
    lines.append(
        f"the unsure band's two ways out, on {len(status)} status questions and {len(near)} near "
        "misses the classifier was unsure of:"
    )
    if not status and not near:
        lines.append("  nothing was unsure")
        return
    asyncio.run(_measure(llm, store, status, near, lines))
