"""Approvals through the real session loop: the model's call only asks, and a yes confirms
only the approval of the conversation that asked (two sessions on one runtime)."""

from __future__ import annotations

from pathlib import Path

from bot.commands.ask import Asker
from bot.tools.memory_tools import memory_tools
from bot.turn.events import StateAnswer, ToolCallEvent, ToolResultEvent, TurnDone
from config import load_settings
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from models.toolcalls import write_call
from tests.bot.conftest import collect, make_runtime


def state_text(events: list[object]) -> str:
    answers = [e.text for e in events if isinstance(e, StateAnswer)]
    assert len(answers) == 1, events
    return answers[0]


async def test_a_yes_in_another_session_does_not_run_this_sessions_deletion(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    script: list[str] = []
    prompts: list[str] = []

    def reply(prompt: str) -> str:
        prompts.append(prompt)
        return script.pop(0)

    llm = ScriptedLLM(tokenizer, reply)
    delete = next(t for t in memory_tools() if t.name == "delete_note")
    runtime = make_runtime(llm, tmp_path, extra=[delete])
    store = runtime.store
    note = store.notes.add("old gate code 4411")
    script += [
        write_call("delete_note", {"note_id": note}, llm.tool_dialect),
        f"Shall I delete {note}, the old gate code?",
    ]
    asking, other = runtime.open_session(), runtime.open_session()

    events = await collect(asking, "Delete the note with the old gate code.")
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [r.name for r in results] == ["delete_note"] and results[0].ok
    assert results[0].preview.startswith(
        f"Approval needed to delete the note 'old gate code 4411': "
        f'delete_note {{"note_id": "{note}"}}'
    )
    assert store.notes.get(note) is not None
    (approval,) = store.approvals.pending()
    assert approval.requester == asking.id

    # The other conversation's yes: nothing runs, and the user is told why.
    stray = await collect(other, "yes")
    assert state_text(stray).startswith("Nothing is waiting for your yes in this conversation.")
    assert store.notes.get(note) is not None
    row = store.approvals.get(approval.id)
    assert row is not None and row.status == "pending"

    # The asking conversation's yes runs exactly the stored call.
    # The asking conversation's yes runs exactly the stored call, and the model, reading its
    # result as the call's tool result, says what happened in the same turn.
    script.append(f"Done, {note} is deleted.")
    del prompts[:]
    confirmed = await collect(asking, "yes")
    calls = [e for e in confirmed if isinstance(e, ToolCallEvent)]
    assert [(c.name, c.arguments) for c in calls] == [("delete_note", {"note_id": note})]
    results = [e for e in confirmed if isinstance(e, ToolResultEvent)]
    assert results[0].ok and results[0].preview.startswith(f"deleted {note}")
    done = [e for e in confirmed if isinstance(e, TurnDone)]
    assert [(d.path, d.text) for d in done] == [("model", f"Done, {note} is deleted.")]
    assert prompts and f"deleted {note}" in prompts[0]  # the model read the result
    assert store.notes.get(note) is None
    row = store.approvals.get(approval.id)
    assert row is not None and row.status == "executed"
    assert script == []
    await runtime.close()


def test_ask_from_stdin_confirms_what_its_own_model_session_asked(
    tokenizer: Tokenizer, annie_home: Path
) -> None:
    settings = load_settings(context={"window": 4096})
    script: list[str] = []
    llm = ScriptedLLM(tokenizer, lambda prompt: script.pop(0))
    asker = Asker(settings, llm=llm)
    try:
        assert asker.store is not None
        note = asker.store.notes.add("old gate code 4411")
        script += [write_call("delete_note", {"note_id": note}, llm.tool_dialect), "Delete it?"]
        asked = asker.ask("Delete my note with the old gate code.")
        assert asked.path == "model" and asker.store.notes.get(note) is not None
        # `ask -`: the next line is the same conversation, so its yes confirms, and the
        # model says what came of it.
        script.append("Deleted.")
        confirmed = asker.ask("yes")
        assert confirmed.path == "model" and confirmed.answer == "Deleted."
        assert confirmed.sources and confirmed.sources[0].startswith("delete_note:")
        assert asker.store.notes.get(note) is None
    finally:
        asker.close()
