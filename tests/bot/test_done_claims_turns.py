"""The user says an open task is done, or states a fact a note states otherwise: Annie says
both sides and asks, and only the user's yes changes the records. Real runtime, answer chain,
approvals and SQLite file; the scripted model on the real tokenizer answers after the yes.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

from bot.tools.memory_tools import memory_tools
from bot.turn.events import StateAnswer, ToolResultEvent, TurnDone
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime

# The shipped tool the yes runs (the runtime's default registry has it).
COMPLETE = next(t for t in memory_tools() if t.name == "complete_task")
DELETE = next(t for t in memory_tools() if t.name == "delete_note")
ASKED = "Your task 'pay the gas bill' is still open. Shall I mark it done?"


async def test_a_task_said_to_be_done_is_asked_about_and_marked_done_on_yes(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    replies: deque[str] = deque()
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Okay.")
    runtime = make_runtime(llm, tmp_path, extra=[COMPLETE])
    gas = runtime.store.tasks.add("pay the gas bill", pending="user")
    water = runtime.store.tasks.add("pay the water bill", pending="user")
    session = runtime.open_session()

    events = await collect(session, "I already paid the gas bill.")
    said = [e.text for e in events if isinstance(e, StateAnswer)]
    assert said == [ASKED]
    assert llm.prompts == []  # by rule, without the model
    row = runtime.store.tasks.get(gas)
    assert row is not None and row.status == "open"  # nothing changes before the yes
    (approval,) = runtime.store.approvals.pending()
    assert approval.target == "mark the task 'pay the gas bill' done"

    replies.append("Done, the gas bill is off your list.")
    events = await collect(session, "yes")
    results = [r for r in events if isinstance(r, ToolResultEvent)]
    assert [(r.name, r.ok) for r in results] == [("complete_task", True)], results
    assert [e.text for e in events if isinstance(e, TurnDone)] == [
        "Done, the gas bill is off your list."
    ]
    row = runtime.store.tasks.get(gas)
    assert row is not None and row.status == "done"
    other = runtime.store.tasks.get(water)
    assert other is not None and other.status == "open"
    await runtime.close()


async def test_a_pick_no_and_unrelated_or_unsure_words(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    llm = ScriptedLLM(tokenizer, lambda prompt: "Okay.")
    runtime = make_runtime(llm, tmp_path)
    gas = runtime.store.tasks.add("pay the gas bill", pending="user")
    bill = runtime.store.tasks.add("gas bill", pending="assistant")
    runtime.store.tasks.add("do the laundry", pending="user")
    session = runtime.open_session()

    # Two tasks fit: both are named and the user is asked which, with nothing stored.
    events = await collect(session, "I paid the gas bill")
    (answer,) = [e.text for e in events if isinstance(e, StateAnswer)]
    assert answer == (
        "Two open tasks fit that: 'pay the gas bill' and 'gas bill'. Which one is done?"
    )
    assert runtime.store.approvals.pending() == []
    # The reply picks one by position (or by what sets it apart), and that one is marked done.
    events = await collect(session, "the second one")
    assert [e.text for e in events if isinstance(e, StateAnswer)] == ["Marked 'gas bill' done."]
    assert [t.id for t in runtime.store.tasks.find(status="done")] == [bill]

    # One fits: asked; "no" declines and the task stays open.
    await collect(session, "I did the laundry")
    assert len(runtime.store.approvals.pending()) == 1
    await collect(session, "no")
    assert runtime.store.approvals.pending() == []
    assert [t.id for t in runtime.store.tasks.find(status="done")] == [bill]

    # Words of nothing on the list, or not a claim at all, go to the model as before.
    for text in ("I paid the electricity bill", "I will pay the gas bill tomorrow"):
        before = len(llm.prompts)
        events = await collect(session, text)
        assert not [e for e in events if isinstance(e, StateAnswer)], text
        assert len(llm.prompts) == before + 1
    row = runtime.store.tasks.get(gas)
    assert row is not None and row.status == "open"

    # Told to mark the one task that fits: done at once, nothing asked.
    events = await collect(session, "Tick off the laundry, please.")
    said = [e.text for e in events if isinstance(e, StateAnswer)]
    assert said == ["Marked 'do the laundry' done."]
    assert runtime.store.approvals.pending() == []
    await runtime.close()


async def test_a_stated_fact_against_a_note_is_said_with_both_sides_and_changed_on_yes(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    replies: deque[str] = deque()
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Okay.")
    runtime = make_runtime(llm, tmp_path)  # its registry has save_note
    old = runtime.store.notes.add("My sister lives in Lisbon")
    runtime.store.notes.add("My brother lives in Porto")
    session = runtime.open_session()

    events = await collect(session, "my sister lives in Porto now")
    said = [e.text for e in events if isinstance(e, StateAnswer)]
    # The note asked about is the one the rules notice in the words ("now" is the moment's).
    assert said == [
        "Your notes say 'My sister lives in Lisbon'. Shall I note 'My sister lives in Porto' "
        "instead?"
    ]
    assert llm.prompts == []
    note = runtime.store.notes.get(old)
    assert note is not None and not note.superseded_by  # nothing changes before the yes

    replies.append("Noted.")
    await collect(session, "yes")
    note = runtime.store.notes.get(old)
    assert note is not None and note.superseded_by
    new = runtime.store.notes.get(note.superseded_by)
    assert new is not None and new.text == "My sister lives in Porto"

    # What agrees with the notes, or says nothing of a subject's value, goes on as before.
    for text in ("My brother lives in Porto", "Is my sister in Porto?", "I like Porto"):
        events = await collect(session, text)
        assert not [e for e in events if isinstance(e, StateAnswer)], text
    await runtime.close()


async def test_deleting_a_note_by_its_words_asks_and_a_pick_says_which(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    replies: deque[str] = deque()
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Okay.")
    runtime = make_runtime(llm, tmp_path, extra=[DELETE])
    gate = runtime.store.notes.add("The old gate code is 4411")
    runtime.store.notes.add("The new gate code is 9922")
    runtime.store.notes.add("Leo is allergic to peanuts")
    session = runtime.open_session()

    # Several fit: named by their words, and the pick deletes that one.
    events = await collect(session, "Delete the note about the gate code")
    (asked,) = [e.text for e in events if isinstance(e, StateAnswer)]
    assert asked == (
        "Two notes fit that: 'The old gate code is 4411' and 'The new gate code is 9922'. "
        "Which one shall I delete?"
    )
    events = await collect(session, "the old one")
    assert [e.text for e in events if isinstance(e, StateAnswer)] == [
        "Deleted the note 'The old gate code is 4411'."
    ]
    assert runtime.store.notes.get(gate) is None
    assert llm.prompts == []

    # One fits: the model's to delete by id (its approval names the note), nothing asked here.
    replies.append("Which note do you mean?")
    events = await collect(session, "please forget the note about Leo")
    assert not [e for e in events if isinstance(e, StateAnswer)]
    assert len(llm.prompts) == 1 and runtime.store.approvals.pending() == []
    await runtime.close()
