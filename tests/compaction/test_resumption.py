"""Resumption that survives anything: a crash, then sessions without a word, then several
sessions with content, all briefed from the recent sessions that had something in them.

Real runtime and session loop on a real SQLite file, the scripted model on the real tokenizer
(the briefing does not depend on what the model says); the crash is a real SIGKILL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from compaction.briefing import build_briefing
from models import Tokenizer

from .crash_child import CORRECTION, LAST, TURNS, kill_mid_turn, scripted_runtime


async def test_crash_then_an_empty_session_then_the_crashed_facts_are_briefed(
    annie_home: Path, tokenizer: Tokenizer, capsys: pytest.CaptureFixture[str]
) -> None:
    crashed, _ = kill_mid_turn(annie_home)
    runtime, llm = scripted_runtime(tokenizer)
    # Open the page and close it without a word, twice: each writes a tier-3 record.
    for _ in range(2):
        empty = runtime.open_session(meta={"front_end": "voice"})
        assert [e.tier for e in await empty.close()] == [3]
        saved = runtime.store.checkpoints.latest(empty.id)
        assert saved is not None and saved.tier == 3

    session = runtime.open_session()
    briefing = session.conv.prefix.briefing
    assert briefing.startswith("Last conversation (") and "ended unexpectedly" in briefing
    assert CORRECTION in briefing and "QX-7731" in briefing
    assert f"Unanswered when it ended: {LAST}" in briefing
    assert TURNS[-1][1] in briefing  # the last completed exchange
    usage = session.usage()
    budget = session.settings.context.budget("briefing")
    assert usage.fixed.memory_briefing + usage.fixed.notes <= budget
    built = build_briefing(
        runtime.store, budget=budget, count=session.ledger.count, current_session_id=session.id
    )
    assert built.session_id == crashed and built.rebuilt_from_log
    assert [s.session_id for s in built.sessions] == [crashed]
    # The model's first prompt carries the crashed session's facts.
    async for _ in session.handle_text("Where were we?"):
        pass
    assert CORRECTION in llm.prompts[-1] and "QX-7731" in llm.prompts[-1]
    await runtime.close()

    # `python -m bot briefing` shows what the next session gets and where it came from: the
    # session just closed (it had a turn) first, the crashed one rebuilt from its events.
    capsys.readouterr()
    assert main(["briefing", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [s["session_id"] for s in shown["sessions"]] == [session.id, crashed]
    assert [s["rebuilt_from_log"] for s in shown["sessions"]] == [False, True]
    assert CORRECTION in shown["text"] and 0 < shown["tokens"] <= shown["budget"]
    assert main(["briefing"]) == 0
    text = capsys.readouterr().out
    assert f"{crashed}" in text and "crashed, rebuilt from its events" in text


async def test_three_sessions_with_content_are_briefed_newest_first_within_budget(
    tokenizer: Tokenizer,
) -> None:
    runtime, _ = scripted_runtime(tokenizer)
    said = [
        "My booking reference for the dentist is DN-4410.",
        "Remember that the plumber's invoice number is PL-2093.",
        "The flight to Lisbon has the code TP-1358.",
    ]
    ids = []
    for text in said:
        s = runtime.open_session()
        async for _ in s.handle_text(text):
            pass
        await s.wait_idle()
        await s.close()
        ids.append(s.id)
    # An empty session after them displaces none of them.
    await runtime.open_session().close()

    session = runtime.open_session()
    briefing = session.conv.prefix.briefing
    codes = ["DN-4410", "PL-2093", "TP-1358"]
    where = [briefing.find(code) for code in codes]
    assert all(i >= 0 for i in where), briefing
    assert where[2] < where[1] < where[0]  # newest first
    assert (
        briefing.startswith("Last conversation (") and briefing.count("Earlier conversation") == 2
    )
    usage = session.usage()
    budget = session.settings.context.budget("briefing")
    assert usage.fixed.memory_briefing + usage.fixed.notes <= budget
    built = build_briefing(
        runtime.store, budget=budget, count=session.ledger.count, current_session_id=session.id
    )
    assert [s.session_id for s in built.sessions][:3] == ids[::-1]
    assert all(s.lines > 0 for s in built.sessions[:3]) and built.tokens <= budget
    # A budget too small for all three keeps the newest, never an older one instead.
    small = build_briefing(runtime.store, budget=80, count=session.ledger.count)
    assert "TP-1358" in small.text and "DN-4410" not in small.text and small.tokens <= 80
    await runtime.close()
