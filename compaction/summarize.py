"""The one model call of tier 2: the same LLM writes a goal, decisions, open questions and prose.

Output is constrained by a GBNF grammar to one JSON object, so even a very small model yields
something parseable. Nothing protected depends on this output: the protected fields are
filled from the typed tables and the event log, and the model's fields are descriptive only.
The call is cancellable: a user turn that needs the model sets the cancel event, and the call
raises `SummaryCancelled` so the scheduler can retry it later.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from compaction.checkpoint import Checkpoint
from compaction.protected import LogEntry
from models.base import LLM

GRAMMAR = r"""
root ::= "{" ws goal "," ws decisions "," ws questions "," ws summary ws "}"
goal ::= "\"goal\":" ws str
decisions ::= "\"decisions\":" ws list
questions ::= "\"open_questions\":" ws list
summary ::= "\"summary\":" ws str
list ::= "[" ws ( str ( "," ws str ){0,3} )? ws "]"
str ::= "\"" char{0,240} "\""
char ::= [^"\\\x00-\x1f] | "\\" ["\\/nt]
ws ::= [ \n]{0,2}
"""

INSTRUCTIONS = (
    "You write a short checkpoint of a conversation between a user and Annie, a voice "
    "assistant, so it can continue after the old turns are removed. Answer with one JSON "
    "object: goal (what the user is trying to do), decisions (what was settled), "
    "open_questions (what is still unanswered) and summary (two or three plain sentences). "
    "Copy names, numbers and ids exactly."
)
TOOL_RESULT_CHARS = 240
ENTRY_CHARS = 600


class SummaryCancelled(Exception):
    """The summary call was cancelled because a user turn needed the model."""


@dataclass
class ModelSummary:
    goal: str = ""
    decisions: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    summary: str = ""
    raw: str = ""
    parsed: bool = False
    generated_tokens: int = 0
    seconds: float = 0.0

    def as_checkpoint(self) -> Checkpoint:
        return Checkpoint(
            goal=self.goal,
            decisions=self.decisions,
            open_questions=self.open_questions,
            summary=self.summary,
        )


def transcript_lines(entries: Sequence[LogEntry]) -> list[str]:
    lines: list[str] = []
    for e in entries:
        if e.kind == "user":
            lines.append(f"User: {e.text[:ENTRY_CHARS]}")
        elif e.kind == "assistant" and e.text.strip():
            lines.append(f"Annie: {e.text[:ENTRY_CHARS]}")
        elif e.kind == "tool_call":
            args = json.dumps(e.arguments, ensure_ascii=False)[:200]
            lines.append(f"Annie called {e.name} {args}")
        elif e.kind == "tool_result":
            failed = "" if e.ok else " (failed)"
            lines.append(f"Result {e.name}{failed}: {e.text[:TOOL_RESULT_CHARS]}")
        elif e.kind == "summary":
            lines.append(f"Earlier: {e.text[:ENTRY_CHARS]}")
    return lines


def build_prompt(
    llm: LLM, entries: Sequence[LogEntry], previous: Checkpoint, *, max_tokens: int
) -> str:
    """The summarizer prompt, trimmed from the oldest lines until it fits the model's window."""
    lines = transcript_lines(entries)
    before = f"Earlier checkpoint summary: {previous.summary}\n\n" if previous.summary else ""
    budget = llm.n_ctx - max_tokens - 16
    while True:
        messages = [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": before + "Conversation:\n" + "\n".join(lines)},
        ]
        prompt = llm.render(messages, add_generation_prompt=True)
        if llm.count(prompt) <= budget or len(lines) <= 1:
            return prompt
        lines = lines[max(1, len(lines) // 4) :]


def parse_summary(raw: str) -> ModelSummary:
    """Read the model's JSON; a truncated or malformed answer becomes plain summary text."""
    text = raw.strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
        # A cut-off object is still useful up to its last complete field.
        for end in range(len(text), 0, -1):
            if text[end - 1] in ',]"':
                try:
                    data = json.loads(text[:end].rstrip(",") + ("}" if text[:1] == "{" else ""))
                    break
                except json.JSONDecodeError:
                    continue
    if not isinstance(data, dict):
        return ModelSummary(summary=" ".join(text.split())[:400], raw=raw)

    def _s(value: object) -> str:
        return " ".join(str(value).split()) if isinstance(value, str) else ""

    def _l(value: object) -> list[str]:
        return [_s(v) for v in value if _s(v)] if isinstance(value, list) else []

    return ModelSummary(
        goal=_s(data.get("goal")),
        decisions=_l(data.get("decisions")),
        open_questions=_l(data.get("open_questions")),
        summary=_s(data.get("summary")),
        raw=raw,
        parsed=True,
    )


async def summarize(
    llm: LLM,
    entries: Sequence[LogEntry],
    previous: Checkpoint,
    *,
    max_tokens: int,
    cancel: asyncio.Event | None = None,
    grammar: bool = True,
) -> ModelSummary:
    """Run the summary call; raises SummaryCancelled if `cancel` is set before it finishes."""
    started = time.perf_counter()
    prompt = build_prompt(llm, entries, previous, max_tokens=max_tokens)
    pieces: list[str] = []
    async for piece in llm.stream(
        prompt, max_tokens=max_tokens, grammar=GRAMMAR if grammar else None, cancel=cancel
    ):
        pieces.append(piece)
    if cancel is not None and cancel.is_set():
        raise SummaryCancelled()
    result = parse_summary("".join(pieces))
    result.generated_tokens = llm.last_stats.generated_tokens
    result.seconds = time.perf_counter() - started
    return result
