"""The model path of one turn: recall, admission, then rounds of assemble, stream, parse and
run tools, until the model answers without a call (or the round limit forces an answer).

Each round's prompt extends the last one, so the model's cache is reused; compaction's
`before_call` hook runs before every call. Text deltas are streamed with tool-call markup
hidden. A barge-in (the session's cancel event) ends the turn with only what was delivered;
a stop at a budget (`Session.stop`) ends it with the text up to the cut as the answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from bot.events import Event, TextDelta, TurnDone
from bot.tools.grammar import tool_call_grammar
from bot.tools.runner import ToolRunner, TurnContext
from context.assembler import Request, manifest_json
from context.conversation import Item
from context.recall import recall
from context.snapshot import safe_snapshot
from models.toolcalls import final_visible, visible_prefix

if TYPE_CHECKING:
    from bot.session import Session

NO_ANSWER = "Sorry, I couldn't finish that."


async def model_turn(
    session: Session,
    request: Request,
    stages: dict[str, float],
    t0: float,
    tool_choice: str | None,
) -> AsyncIterator[Event]:
    """The model path of one turn, from admission to `TurnDone` (or the interrupted answer)."""
    ctx = session.settings.context
    turn_id = request.turn_id
    t_recall = time.perf_counter()
    evidence = await asyncio.to_thread(
        recall,
        session.runtime.store,
        request.text,
        session.settings,
        lambda: session.runtime.embedder,
    )
    stages["recall_ms"] = (time.perf_counter() - t_recall) * 1000
    session.assembler.admit_turn(
        session.conv, request, safe_snapshot(session.runtime.store), evidence
    )
    llm = session.runtime.llm
    runner = ToolRunner(
        TurnContext(
            session_id=session.id,
            settings=session.settings,
            conv=session.conv,
            assembler=session.assembler,
            tools=session.tools,
            log=session.log,
            cancel=session.cancel_event,
            store=session.runtime.store,
            embedder=lambda: session.runtime.embedder,
            dialect=llm.tool_dialect,
        )
    )
    grammar = (
        tool_call_grammar(session.tools.require(tool_choice), llm.tool_dialect)
        if tool_choice
        else None
    )
    spoken: list[str] = []  # visible text of finished rounds, in order
    for round_no in range(ctx.max_tool_rounds + 1):
        last_round = round_no == ctx.max_tool_rounds
        t_asm = time.perf_counter()
        needed = session.ledger.usage(session.conv).total + ctx.output_reserve_tokens
        for ev in await session.hooks.before_call(session.conv, session.ledger, needed):
            yield session.record_compaction(ev, turn_id)
        asm = session.assembler.assemble(
            session.conv,
            request,
            active_groups=session.tools.loaded,
            available_groups=session.tools.available,
        )
        session.last_assembly = asm
        stages["assemble_ms"] = (
            stages.get("assemble_ms", 0.0) + (time.perf_counter() - t_asm) * 1000
        )
        session.log("manifest", manifest_json(asm.envelope), turn_id, meta={"round": round_no})
        raw, shown = "", 0
        max_tokens = max(1, min(ctx.output_reserve_tokens, session.ledger.window - asm.usage.total))
        t_model = time.perf_counter()
        if not session.cancel_event.is_set():
            stream = llm.stream(
                asm.prompt,
                max_tokens=max_tokens,
                stop=("<tool_call>",) if last_round else (),
                grammar=grammar if round_no == 0 else None,
                cancel=session.cancel_event,
            )
            async for piece in stream:
                if not raw:
                    stages.setdefault("first_token_ms", (time.perf_counter() - t0) * 1000)
                raw += piece
                vis = visible_prefix(raw)
                if len(vis) > shown:
                    yield TextDelta(turn_id, vis[shown:])
                    shown = len(vis)
            stats = llm.last_stats
            session.ledger.record_call(stats, turn=session.conv.turn, label=f"round {round_no}")
            session.conv.mark_sent()
        stages["model_ms"] = stages.get("model_ms", 0.0) + (time.perf_counter() - t_model) * 1000
        if session.cancel_event.is_set() and session.stopped is not None:
            kept, why = session.stopped
            prior = "".join(spoken)
            # The conversation holds earlier rounds' text already (with their tool calls).
            this_round = kept[len(prior) :] if kept.startswith(prior) else ""
            yield _finish(session, turn_id, kept, this_round, {"raw": raw, "cut": why})
            return
        if session.cancel_event.is_set():
            yield session.interrupted(turn_id, spoken, visible_prefix(raw)[:shown], raw)
            return
        parsed = llm.parse(raw)
        tail = final_visible(raw)
        if len(tail) > shown:
            yield TextDelta(turn_id, tail[shown:])
        spoken.append(tail)
        if (parsed.calls or parsed.errors) and not last_round:
            t_tools = time.perf_counter()
            async for event in runner.run_calls(
                turn_id, raw, parsed.text, parsed.calls, parsed.errors
            ):
                yield event
            stages["tools_ms"] = (
                stages.get("tools_ms", 0.0) + (time.perf_counter() - t_tools) * 1000
            )
            if session.cancel_event.is_set():
                yield session.interrupted(turn_id, spoken, "", "")
                return
            continue
        yield _finish(session, turn_id, "".join(spoken), raw, {"raw": raw})
        return


def _finish(
    session: Session, turn_id: str, answer: str, content: str, meta: dict[str, str]
) -> TurnDone:
    """Log the turn's answer, keep this round's `content` in the conversation, and end."""
    answer = answer.strip() or NO_ANSWER
    answer_id = session.log("assistant", answer, turn_id, role="assistant", meta=meta)
    kept = content if content.strip() else NO_ANSWER
    item = Item(answer_id, "assistant", "assistant", kept, turn=session.conv.turn)
    item.reason = "the assistant's answer"
    session.conv.append(item)
    return TurnDone(turn_id, answer, "model")
