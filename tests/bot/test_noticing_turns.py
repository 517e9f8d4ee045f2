"""Remembering without the model, through real turns: what the user states becomes a typed
note with its provenance, once; a restatement with more supersedes; a contradiction is asked
about first; a note the model saved in the turn is the one kept; the state path reads it back.
Real runtime, answer chain and SQLite file; the model is the real SmolLM2 where what it says
does not matter, and a scripted one where the test needs it to call a tool.
"""

from __future__ import annotations

import json
from collections import deque
from datetime import datetime
from pathlib import Path

from bot.turn.events import StateAnswer
from bot.turn.noticing import SOURCE
from context.noticed import notice
from memory.provenance import NOTICED
from models.base import LLM, Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime


def _call(name: str, arguments: dict[str, object]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def _noticed(runtime: object) -> list[tuple[str, str]]:
    store = runtime.store  # type: ignore[attr-defined]
    rows = store.all("SELECT n, kind, text FROM notes WHERE source = ? ORDER BY n", [SOURCE])
    return [(r["kind"], r["text"]) for r in rows]


async def test_a_stated_date_is_noted_once_with_its_provenance_and_read_back(
    tmp_path: Path, llm: LLM
) -> None:
    runtime = make_runtime(llm, tmp_path, reserve=32)  # what the model says is not the point
    session = runtime.open_session()
    said = "oh by the way my sister's wedding is on the 12th"
    await collect(session, said)
    (expected,) = notice(said, datetime.now().astimezone())
    assert _noticed(runtime) == [("date", expected.text)]
    assert "wedding" in expected.text and "(" in expected.text  # the day written out

    (row,) = runtime.store.all("SELECT n FROM notes WHERE source = ?", [SOURCE])
    note = runtime.store.provenance.get(f"note-{row['n']}")
    (user,) = runtime.store.events.find(session.id, kinds=["user"])
    assert note.source_event == user.id
    assert note.confidence == NOTICED
    # The write is a typed record of its own in the log, naming the user's event.
    (write,) = runtime.store.events.find(session.id, kinds=["note_write"])
    assert write.meta["source_event"] == user.id

    # Said again: no second note.
    await collect(session, "my sister's wedding is on the 12th")
    assert len(_noticed(runtime)) == 1

    # The state path reads it back, by rule, without the model.
    events = await collect(session, "what did I tell you about my sister's wedding?")
    (answer,) = [e for e in events if isinstance(e, StateAnswer)]
    assert "wedding" in answer.text and note.id in answer.sources
    await runtime.close()


async def test_questions_requests_and_passing_states_note_nothing(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    runtime = make_runtime(ScriptedLLM(tokenizer, lambda prompt: "Okay."), tmp_path)
    session = runtime.open_session()
    for text in ("is my sister's wedding on the 12th?", "remind me to buy milk", "I'm so tired"):
        await collect(session, text)
    assert _noticed(runtime) == []
    await runtime.close()


async def test_more_words_supersede_a_plan_expires_and_a_secret_is_private(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    runtime = make_runtime(ScriptedLLM(tokenizer, lambda prompt: "Okay."), tmp_path)
    session = runtime.open_session()
    await collect(session, "My brother lives in Lima")
    await collect(session, "My brother lives in Lima with his husband")
    rows = runtime.store.all(
        "SELECT n, text, superseded_by FROM notes WHERE source = ? ORDER BY n", [SOURCE]
    )
    assert [(r["text"], bool(r["superseded_by"])) for r in rows] == [
        ("My brother lives in Lima.", True),
        ("My brother lives in Lima with his husband.", False),
    ]
    # Fewer words about the same subject are known already.
    await collect(session, "my brother lives in Lima")
    assert len(_noticed(runtime)) == 2

    await collect(session, "I'm flying to Oslo tomorrow")
    await collect(session, "remember that my alarm code is 7310")
    plan, code = runtime.store.all(
        "SELECT expires_at, sensitivity FROM notes WHERE source = ? ORDER BY n DESC LIMIT 2",
        [SOURCE],
    )[::-1]
    assert plan["expires_at"]  # the day after tomorrow
    assert code["sensitivity"] == "private"
    await runtime.close()


async def test_a_contradiction_is_asked_first_and_a_note_the_model_saved_wins(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    replies: deque[str] = deque()
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Okay.")
    runtime = make_runtime(llm, tmp_path)
    runtime.store.notes.add("My sister lives in Lisbon")
    session = runtime.open_session()

    # Another value for a subject a note holds: asked about, nothing noted before the yes.
    events = await collect(session, "actually my sister lives in Porto")
    (asked,) = [e.text for e in events if isinstance(e, StateAnswer)]
    assert "Lisbon" in asked and "Porto" in asked
    assert _noticed(runtime) == []

    # The model saves its own note in the turn: that note is kept, and no second one.
    replies.extend([_call("save_note", {"text": "The user's dog is called Biscuit"}), "Noted."])
    await collect(session, "no. anyway my dog is called Biscuit")
    assert _noticed(runtime) == []
    texts = [r["text"] for r in runtime.store.all("SELECT text FROM notes WHERE kind != 'episode'")]
    assert "The user's dog is called Biscuit" in texts
    await runtime.close()
