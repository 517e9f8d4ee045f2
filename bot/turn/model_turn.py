"""The model path of one turn: recall, admission, then rounds of assemble, stream, parse and
run tools, until the model answers without a call (or the round limit forces an answer).

Each round's prompt extends the last one, so the model's cache is reused; compaction's
`before_call` hook runs before every call. Text deltas are streamed with tool-call markup
hidden. A barge-in (`TurnControl.cancel`) ends the turn with only what was delivered; a stop
at a budget (`TurnControl.stop`) ends it with the text up to the cut as the answer. A turn
that resumes an approved call starts with that call and its result, so the model's first
round already reads what the tool returned.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.tools.grammar import tool_call_grammar
from bot.tools.registry import hold_tools_lane
from bot.tools.web import GROUP as WEB
from bot.tools.web import asks_for_the_web
from bot.turn.events import Event, TextDelta, TurnDone
from bot.turn.interruption import interrupted_answer
from bot.turn.tool_rounds import ToolRunner
from bot.turn.turn_context import TurnContext
from context.answer_check import AnswerCheck, Facts
from context.assembler import Request, manifest_json
from context.provenance import scope_ids, with_provenance, withhold_private
from context.recall import recall
from context.snapshot import safe_snapshot
from models.toolcalls import final_visible, visible_prefix

if TYPE_CHECKING:
    from bot.turn.answers import Resume

NO_ANSWER = "Sorry, I couldn't finish that."


async def model_turn(
    t: TurnContext,
    request: Request,
    stages: dict[str, float],
    t0: float,
    tool_choice: str | None = None,
    resumed: Resume | None = None,
) -> AsyncIterator[Event]:
    """The model path of one turn, from admission to `TurnDone` (or the interrupted answer)."""
    turn_id = request.turn_id
    t_recall = time.perf_counter()
    evidence = t.recalled
    if evidence is None:
        evidence = await asyncio.to_thread(
            recall, t.store, request.text, t.settings, t.embedder, session_id=t.session_id
        )
    # Asked for the web in so many words: its tools are there for the first call, so the search
    # is one call and one question, not a load_tool_group round first. Loaded before the
    # evidence is judged: a private note stays out of a call that can send data out.
    web = WEB in t.tools.available and WEB not in t.tools.loaded
    if web and resumed is None and asks_for_the_web(request.text):
        t.tools.load(WEB)
        t.assembler.admit_tool_schemas(t.conv, WEB, t.tools.schema_text(WEB))
    # Each note with its record's provenance; private ones only where nothing sends data out.
    sends_out = t.tools.sends_out(t.allowed)
    evidence = with_provenance(t.store, evidence, sends_out=sends_out)
    stages["recall_ms"] = (time.perf_counter() - t_recall) * 1000
    t.assembler.admit_turn(t.conv, request, safe_snapshot(t.store), evidence)
    hold_tools_lane(t.tools, t.assembler, t.conv)
    # The answer is held against the records as it streams (`context.answer_check`).
    check = AnswerCheck.for_turn(t.store, request.text)
    runner = ToolRunner(t)
    if resumed is not None:
        for event in runner.resume(turn_id, resumed.call, resumed.output):
            yield event
        if runner.refused:
            for event in _held_back(t, turn_id, [], runner.refused):
                yield event
            return
    grammar = None
    if tool_choice:  # the first round may only call that tool
        grammar = tool_call_grammar(t.tools.require(tool_choice), t.llm.tool_dialect)
    spoken: list[str] = []  # visible text of finished rounds, in order
    rounds = t.settings.context.max_tool_rounds
    for round_no in range(rounds + 1):
        last = round_no == rounds
        for event in await _assemble(t, request, round_no, stages):
            yield event
        out = _Output(round_no, last, grammar if round_no == 0 else None, check=check)
        async for event in _generate(t, turn_id, out, stages, t0):
            yield event
        if t.control.cancelled:
            yield _ended_early(t, turn_id, spoken, out)
            return
        parsed = t.llm.parse(out.raw)
        tail = final_visible(out.raw)
        rest = check.feed(tail[out.shown :]) if len(tail) > out.shown else ""
        rest += check.flush()
        if rest:
            yield TextDelta(turn_id, rest)
        spoken.append(tail)
        if not (parsed.calls or parsed.errors) or last:
            answer, content = check.rewrite("".join(spoken)), check.rewrite(out.raw)
            yield _finish(t, turn_id, answer, content, {"raw": out.raw})
            return
        t_tools = time.perf_counter()
        calls = runner.run_calls(turn_id, out.raw, parsed.text, parsed.calls, parsed.errors)
        async for event in calls:
            yield event
        stages["tools_ms"] = stages.get("tools_ms", 0.0) + (time.perf_counter() - t_tools) * 1000
        if t.control.cancelled:
            yield _interrupted(t, turn_id, spoken, "", "")
            return
        if runner.refused:
            for event in _held_back(t, turn_id, spoken, runner.refused):
                yield event
            return


@dataclass
class _Output:
    """One model call: its round (the last may not call a tool; the first may be held to a
    grammar), its raw output, and how much of its visible text was sent on."""

    round_no: int
    last: bool
    grammar: str | None
    raw: str = ""
    shown: int = 0
    check: AnswerCheck = field(default_factory=lambda: AnswerCheck(Facts()))


async def _assemble(
    t: TurnContext, request: Request, round_no: int, stages: dict[str, float]
) -> list[Event]:
    """Compact if the call would not fit, then assemble this round's prompt (logged with its
    manifest); returns the compactions it caused."""
    started = time.perf_counter()
    needed = t.ledger.usage(t.conv).total + t.settings.context.output_reserve_tokens
    done: list[Event] = [
        t.compacted(ev, request.turn_id)
        for ev in await t.hooks.before_call(t.conv, t.ledger, needed)
    ]
    if t.tools.sends_out(t.allowed):  # loaded or allowed since a private note was recalled
        withhold_private(t.conv)
    # Read per call: a round's tool call may have asked for an approval or touched a task.
    request.task_id, request.approval_id = scope_ids(t.store, t.session_id)
    t.assembly = t.assembler.assemble(
        t.conv, request, active_groups=t.tools.loaded, available_groups=t.tools.available
    )
    stages["assemble_ms"] = stages.get("assemble_ms", 0.0) + (time.perf_counter() - started) * 1000
    manifest = manifest_json(t.assembly.envelope)
    t.record.log("manifest", manifest, request.turn_id, meta={"round": round_no})
    return done


async def _generate(
    t: TurnContext,
    turn_id: str,
    out: _Output,
    stages: dict[str, float],
    t0: float,
) -> AsyncIterator[Event]:
    """One model call over the assembled prompt: its visible text streams as it comes (tool
    call markup hidden)."""
    assert t.assembly is not None
    started = time.perf_counter()
    room = t.ledger.window - t.assembly.usage.total
    max_tokens = max(1, min(t.settings.context.output_reserve_tokens, room))
    if not t.control.cancelled:
        stream = t.llm.stream(
            t.assembly.prompt,
            max_tokens=max_tokens,
            stop=("<tool_call>",) if out.last else (),
            grammar=out.grammar,
            cancel=t.cancel,
        )
        async for piece in stream:
            if not out.raw:
                stages.setdefault("first_token_ms", (time.perf_counter() - t0) * 1000)
            out.raw += piece
            vis = visible_prefix(out.raw)
            if len(vis) > out.shown:
                said = out.check.feed(vis[out.shown :])
                out.shown = len(vis)
                if said:
                    yield TextDelta(turn_id, said)
        call = t.ledger.record_call(
            t.llm.last_stats, turn=t.conv.turn, label=f"round {out.round_no}"
        )
        # What the call cost the engine, beside its manifest (`bench tokens` reads both).
        cost = {
            "prompt_tokens": call.prompt_tokens,
            "reused_tokens": call.reused_tokens if call.cache_reported else None,
            "evaluated_tokens": call.evaluated_tokens if call.cache_reported else None,
            "generated_tokens": call.generated_tokens,
        }
        t.record.log("model_call", cost, turn_id, meta={"round": out.round_no})
        t.conv.mark_sent()
    stages["model_ms"] = stages.get("model_ms", 0.0) + (time.perf_counter() - started) * 1000


def _held_back(t: TurnContext, turn_id: str, spoken: list[str], said: str) -> list[Event]:
    """The egress check held a request back: the turn ends saying so, in Annie's words, not
    the model's (which might try again with the same private words put otherwise)."""
    prior = "".join(spoken).strip()
    answer = f"{prior} {said}" if prior else said
    delta = f" {said}" if prior else said
    return [TextDelta(turn_id, delta), _finish(t, turn_id, answer, said, {"refused": said})]


def _ended_early(t: TurnContext, turn_id: str, spoken: list[str], out: _Output) -> TurnDone:
    """The front end ended this call: at a budget (the text up to the cut is the answer) or
    by a barge-in (only what was delivered is kept)."""
    if t.control.stopped is None:
        return _interrupted(t, turn_id, spoken, visible_prefix(out.raw)[: out.shown], out.raw)
    kept, why = t.control.stopped
    prior = "".join(spoken)
    # The conversation holds earlier rounds' text already (with their tool calls).
    this_round = kept[len(prior) :] if kept.startswith(prior) else ""
    return _finish(t, turn_id, kept, this_round, {"raw": out.raw, "cut": why})


def _interrupted(t: TurnContext, turn_id: str, spoken: list[str], shown: str, raw: str) -> TurnDone:
    """Keep only what was delivered, marked interrupted."""
    return interrupted_answer(
        t.record, turn_id, spoken=spoken, shown=shown, raw=raw, delivered=t.control.delivered
    )


def _finish(
    t: TurnContext, turn_id: str, answer: str, content: str, meta: dict[str, str]
) -> TurnDone:
    """Log the turn's answer, keep this round's `content` in the conversation, and end."""
    answer = answer.strip() or NO_ANSWER
    kept = content if content.strip() else NO_ANSWER
    t.record.say(
        "assistant", answer, turn_id, item_text=kept, meta=meta, reason="the assistant's answer"
    )
    return TurnDone(turn_id, answer, "model")
