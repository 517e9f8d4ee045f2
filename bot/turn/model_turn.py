"""The model path of one turn: recall, admission, then rounds of assemble, stream, parse and
run tools, until the model answers without a call (or the round limit forces an answer).

Each round's prompt extends the last one, so the model's cache is reused; compaction's
`before_call` hook runs before every call. Text deltas are streamed with tool-call markup
hidden. A barge-in (`TurnControl.cancel`) ends the turn with only what was delivered; a stop
at a budget (`TurnControl.stop`) ends it with the text up to the cut as the answer. A turn
that resumes an approved call starts with that call and its result, so the model's first
round already reads what the tool returned. What the turn produces comes back as what it
yields: its events, the compactions it caused (the session logs them), and each round's
assembled prompt (`Assembled`, which the session keeps for its manifest and sends to no one).
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
from context.answer_check import AnswerCheck, Facts
from context.assembler import Assembly, Request, manifest_json
from context.provenance import scope_ids, with_provenance, withhold_private
from context.snapshot import safe_snapshot
from models.toolcalls import final_visible, visible_prefix

if TYPE_CHECKING:
    from bot.tools.registry import ActiveTools
    from bot.turn.answers import Resume
    from bot.turn.model_inputs import Memory, PromptParts
    from bot.turn.record import Recorder
    from bot.turn.surroundings import TurnControl
    from config import Settings
    from context.inputs import Evidence

NO_ANSWER = "Sorry, I couldn't finish that."


@dataclass(frozen=True)
class Assembled:
    """One round's prompt, assembled: the model turn hands it back to the session (for
    `Session.manifest()` and the context view); it is never sent to a front end. Yielded every
    round, so a call that fails still leaves the prompt it was sent in view."""

    assembly: Assembly


async def model_turn(
    request: Request,
    prompt: PromptParts,
    memory: Memory,
    tools: ActiveTools,
    control: TurnControl,
    *,
    record: Recorder,
    settings: Settings,
    stages: dict[str, float],
    t0: float,
    allowed: frozenset[str] = frozenset(),
    recalled: list[Evidence] | None = None,
    tool_choice: str | None = None,
    resumed: Resume | None = None,
) -> AsyncIterator[Event | Assembled]:
    """The model path of one turn, from admission to `TurnDone` (or the interrupted answer).

    `allowed` are the approval-gated tools the user allowed for the session; `recalled` the
    notes recalled for these very words while the user paused (`bot.turn.speculation`), which
    the turn admits instead of searching again. `stages` gains the turn's timings."""
    turn_id = request.turn_id
    conv, assembler = prompt.conv, prompt.assembler
    t_recall = time.perf_counter()
    evidence = recalled
    if evidence is None:
        evidence = await asyncio.to_thread(memory.recall, request.text, settings)
    # Asked for the web in so many words: its tools are there for the first call, so the search
    # is one call and one question, not a load_tool_group round first. Loaded before the
    # evidence is judged: a private note stays out of a call that can send data out.
    web = WEB in tools.available and WEB not in tools.loaded
    if web and resumed is None and asks_for_the_web(request.text):
        tools.load(WEB)
        assembler.admit_tool_schemas(conv, WEB, tools.schema_text(WEB))
    # Each note with its record's provenance; private ones only where nothing sends data out.
    sends_out = tools.sends_out(allowed)
    evidence = with_provenance(memory.store, evidence, sends_out=sends_out)
    stages["recall_ms"] = (time.perf_counter() - t_recall) * 1000
    assembler.admit_turn(conv, request, safe_snapshot(memory.store), evidence)
    hold_tools_lane(tools, assembler, conv)
    # The answer is held against the records as it streams (`context.answer_check`).
    check = AnswerCheck.for_turn(memory.store, request.text)
    runner = ToolRunner(
        prompt,
        memory,
        tools,
        record=record,
        settings=settings,
        allowed=allowed,
        cancel=control.event,
    )
    if resumed is not None:
        for event in runner.resume(turn_id, resumed.call, resumed.output):
            yield event
        if runner.refused:
            for event in _held_back(record, turn_id, [], runner.refused):
                yield event
            return
    grammar = None
    if tool_choice:  # the first round may only call that tool
        grammar = tool_call_grammar(tools.require(tool_choice), prompt.llm.tool_dialect)
    reserve = settings.context.output_reserve_tokens
    spoken: list[str] = []  # visible text of finished rounds, in order
    rounds = settings.context.max_tool_rounds
    for round_no in range(rounds + 1):
        last = round_no == rounds
        started = time.perf_counter()
        needed = prompt.ledger.usage(conv).total + reserve
        compactions = await prompt.hooks.before_call(conv, prompt.ledger, needed)
        _add_ms(stages, "assemble_ms", started)
        # Yielded before this round's prompt is assembled: the session logs each compaction
        # as it passes, so the log reads compaction, then the manifest of the prompt after it.
        for compaction in compactions:
            yield compaction
        started = time.perf_counter()
        assembly = _assemble(prompt, memory, tools, allowed, request)
        record.log("manifest", manifest_json(assembly.envelope), turn_id, meta={"round": round_no})
        _add_ms(stages, "assemble_ms", started)
        yield Assembled(assembly)
        out = _Output(turn_id, round_no, last, grammar if round_no == 0 else None, check=check)
        async for event in _generate(prompt, assembly, control, record, out, reserve, stages, t0):
            yield event
        if control.cancelled:
            yield _ended_early(control, record, turn_id, spoken, out)
            return
        parsed = prompt.llm.parse(out.raw)
        tail = final_visible(out.raw)
        rest = check.feed(tail[out.shown :]) if len(tail) > out.shown else ""
        rest += check.flush()
        if rest:
            yield TextDelta(turn_id, rest)
        spoken.append(tail)
        if not (parsed.calls or parsed.errors) or last:
            answer, content = check.rewrite("".join(spoken)), check.rewrite(out.raw)
            yield _finish(record, turn_id, answer, content, {"raw": out.raw})
            return
        t_tools = time.perf_counter()
        calls = runner.run_calls(turn_id, out.raw, parsed.text, parsed.calls, parsed.errors)
        async for event in calls:
            yield event
        _add_ms(stages, "tools_ms", t_tools)
        if control.cancelled:
            yield _interrupted(control, record, turn_id, spoken, "", "")
            return
        if runner.refused:
            for event in _held_back(record, turn_id, spoken, runner.refused):
                yield event
            return


@dataclass
class _Output:
    """One model call: its turn and round (the last may not call a tool; the first may be held
    to a grammar), its raw output, and how much of its visible text was sent on."""

    turn_id: str
    round_no: int
    last: bool
    grammar: str | None
    raw: str = ""
    shown: int = 0
    check: AnswerCheck = field(default_factory=lambda: AnswerCheck(Facts()))


def _add_ms(stages: dict[str, float], stage: str, started: float) -> None:
    """Add the milliseconds since `started` to `stage` (a turn may have several rounds)."""
    stages[stage] = stages.get(stage, 0.0) + (time.perf_counter() - started) * 1000


def _assemble(
    prompt: PromptParts,
    memory: Memory,
    tools: ActiveTools,
    allowed: frozenset[str],
    request: Request,
) -> Assembly:
    """This round's prompt, over the conversation as compaction left it."""
    if tools.sends_out(allowed):  # loaded or allowed since a private note was recalled
        withhold_private(prompt.conv)
    # Read per call: a round's tool call may have asked for an approval or touched a task.
    request.task_id, request.approval_id = scope_ids(memory.store, memory.session_id)
    return prompt.assembler.assemble(
        prompt.conv, request, active_groups=tools.loaded, available_groups=tools.available
    )


async def _generate(
    prompt: PromptParts,
    assembly: Assembly,
    control: TurnControl,
    record: Recorder,
    out: _Output,
    reserve: int,
    stages: dict[str, float],
    t0: float,
) -> AsyncIterator[Event]:
    """One model call over the assembled prompt: its visible text streams as it comes (tool
    call markup hidden). At most `reserve` tokens are generated, fewer where the window
    has less room left."""
    started = time.perf_counter()
    room = prompt.ledger.window - assembly.usage.total
    max_tokens = max(1, min(reserve, room))
    if not control.cancelled:
        stream = prompt.llm.stream(
            assembly.prompt,
            max_tokens=max_tokens,
            stop=("<tool_call>",) if out.last else (),
            grammar=out.grammar,
            cancel=control.event,
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
                    yield TextDelta(out.turn_id, said)
        call = prompt.ledger.record_call(
            prompt.llm.last_stats, turn=prompt.conv.turn, label=f"round {out.round_no}"
        )
        # What the call cost the engine, beside its manifest (`bench tokens` reads both).
        cost = {
            "prompt_tokens": call.prompt_tokens,
            "reused_tokens": call.reused_tokens if call.cache_reported else None,
            "evaluated_tokens": call.evaluated_tokens if call.cache_reported else None,
            "generated_tokens": call.generated_tokens,
        }
        record.log("model_call", cost, out.turn_id, meta={"round": out.round_no})
        prompt.conv.mark_sent()
    _add_ms(stages, "model_ms", started)


def _held_back(record: Recorder, turn_id: str, spoken: list[str], said: str) -> list[Event]:
    """The egress check held a request back: the turn ends saying so, in Annie's words, not
    the model's (which might try again with the same private words put otherwise)."""
    prior = "".join(spoken).strip()
    answer = f"{prior} {said}" if prior else said
    delta = f" {said}" if prior else said
    return [TextDelta(turn_id, delta), _finish(record, turn_id, answer, said, {"refused": said})]


def _ended_early(
    control: TurnControl, record: Recorder, turn_id: str, spoken: list[str], out: _Output
) -> TurnDone:
    """The front end ended this call: at a budget (the text up to the cut is the answer) or
    by a barge-in (only what was delivered is kept)."""
    if control.stopped is None:
        shown = visible_prefix(out.raw)[: out.shown]
        return _interrupted(control, record, turn_id, spoken, shown, out.raw)
    kept, why = control.stopped
    prior = "".join(spoken)
    # The conversation holds earlier rounds' text already (with their tool calls).
    this_round = kept[len(prior) :] if kept.startswith(prior) else ""
    return _finish(record, turn_id, kept, this_round, {"raw": out.raw, "cut": why})


def _interrupted(
    control: TurnControl, record: Recorder, turn_id: str, spoken: list[str], shown: str, raw: str
) -> TurnDone:
    """Keep only what was delivered, marked interrupted."""
    return interrupted_answer(
        record, turn_id, spoken=spoken, shown=shown, raw=raw, delivered=control.delivered
    )


def _finish(
    record: Recorder, turn_id: str, answer: str, content: str, meta: dict[str, str]
) -> TurnDone:
    """Log the turn's answer, keep this round's `content` in the conversation, and end."""
    answer = answer.strip() or NO_ANSWER
    kept = content if content.strip() else NO_ANSWER
    record.say(
        "assistant", answer, turn_id, item_text=kept, meta=meta, reason="the assistant's answer"
    )
    return TurnDone(turn_id, answer, "model")
