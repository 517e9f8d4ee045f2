"""A turn that has to compact before its call gets a prompt that fits, whatever the summary.

Back-to-back long pastes leave no idle time for tier 2, so the turn itself compacts. The
checkpoint the summary writes is pinned and may take a fifth of the window; with a long fixed
head and a long new message that fifth can be more than the call has left, and the turn then
failed with "the protected context does not fit". The checkpoint is now kept to the room the
waiting call leaves. Real runtime, session loop, compactor and SQLite file; the scripted model
on the real tokenizer writes the longest summary the grammar allows (the real model's forced
tier 2 is in test_real_model.py).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bot.turn.events import TurnDone
from compaction.checkpoint import render
from compaction.events import CompactionEvent
from compaction.hooks import HookInputs
from compaction.protected import LogEntry
from compaction.summarize import INSTRUCTIONS
from compaction.writer import CheckpointWriter
from config import Settings
from context.ledger import Ledger
from models import Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime
from tests.compaction.conftest import RESERVE, WINDOW

PASTE = "Here are my garden notes, please keep them in mind. " + " ".join(
    f"Item {i}: the tomatoes in bed {i} need water every {i % 3 + 1} days and the roses by "
    f"fence {i} want pruning before the frost in week {i % 9 + 40}."
    for i in range(70)
)
LONG_SUMMARY = json.dumps(
    {
        "goal": "Keep the garden club's notes on watering and pruning for the season ahead.",
        "decisions": [],
        "open_questions": [],
        "summary": " ".join(f"The user pasted item {i} of the garden notes." for i in range(24)),
    }
)


# A long fixed head, as the real system prompt and tool schemas make at a 4,096-token window.
RULES = (f"Rule {i}: speak plainly, keep answers short, never read out markup." for i in range(105))
SYSTEM_PROMPT = "You are Annie, a helpful voice assistant. " + " ".join(RULES)


def reply(prompt: str) -> str:
    return LONG_SUMMARY if INSTRUCTIONS in prompt else "Noted."


async def test_a_forced_summary_is_kept_to_the_room_the_waiting_call_leaves(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    llm = ScriptedLLM(tokenizer, reply)
    runtime = make_runtime(llm, tmp_path, window=4096, reserve=512, system_prompt=SYSTEM_PROMPT)
    session = runtime.open_session()
    first = await collect(session, PASTE)
    assert not next(e for e in first if isinstance(e, TurnDone)).failed
    head = session.ledger.prefix_cost(session.conv.prefix)
    assert head.system_prompt + head.tool_schemas > 2000  # so two pastes do not fit with it
    second = await collect(session, PASTE)  # at once: no idle time for tier 2
    forced = [e for e in second if isinstance(e, CompactionEvent) and "forced" in e.detail]
    assert [e.tier for e in forced] == [2]
    done = next(e for e in second if isinstance(e, TurnDone))
    assert not done.failed and done.text == "Noted."
    usage = session.ledger.usage(session.conv)
    assert usage.total + 512 <= usage.window  # the call had its whole answer reserve
    assert PASTE[:300] in llm.prompts[-1]  # and the user's message (its admitted preview)
    summary = next(i for i in session.conv.items if i.kind == "summary")
    assert "Keep the garden club" in summary.content  # the checkpoint, shortened, not dropped
    await runtime.close()


async def test_a_long_goal_in_a_room_too_small_for_it_is_cut_once_and_the_fit_ends(
    settings: Settings, tokenizer: Tokenizer
) -> None:
    # With no summary, questions, decisions or attempts left to drop, the goal (here the
    # user's long first request) is cut. Its cut form was once cut again and again: the fit
    # never ended and held the event loop (seen in a warm-up test on the small model).
    ledger = Ledger(tokenizer, window=WINDOW, output_reserve_tokens=RESERVE)
    writer = CheckpointWriter(HookInputs(settings, "sess-1", ledger))
    asked = "Please keep track of " + "the watering rota for every bed in the garden, " * 4
    entries = [LogEntry("ev-1", "user", asked), LogEntry("ev-2", "assistant", "Noted.")]
    # (A fit that never ends holds the loop: pytest's own timeout is what fails it then.)
    cp = await writer.next_checkpoint(entries, cancel=asyncio.Event(), use_model=False, room=5)
    assert cp.goal == asked[:60] + "…"
    assert cp.summary == ""  # dropped before the goal was cut
    assert ledger.count(render(cp)) > 5  # what is left stays, whatever it costs
