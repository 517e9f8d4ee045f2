"""Memory that stays true: a correction supersedes the note it corrects.

The old note is kept (marked superseded) but no longer found by search, recalled as evidence,
or briefed; the current version is. Real SQLite files, the real embedding model, and the real
session loop with the scripted model on the real tokenizer.
"""

from __future__ import annotations

import json
from pathlib import Path

from bot.tools.memory_tools import SaveNoteArgs, SearchMemoryArgs, save_note, search_memory
from compaction.briefing import build_briefing
from compaction.checkpoint import Checkpoint
from config import Settings
from context.recall import recall
from memory.store import Store
from models import Embedder, Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime

OLD = "My sister's name is Anna."
NEW = "My sister's name is Ana."
CORRECTION = "actually my sister's name is Ana, not Anna"


def _notes(store: Store) -> dict[str, str]:
    return {
        "old": store.notes.add(OLD, kind="fact"),
        "porto": store.notes.add("My sister lives in Porto and works as a nurse."),
        "dentist": store.notes.add("The dentist appointment is on Tuesday at nine."),
    }


def test_a_correction_supersedes_the_closest_note_and_only_that(
    store_e: Store, settings: Settings, embedder: Embedder
) -> None:
    ids = _notes(store_e)
    # Not a correction: a similar note is saved beside the old one, nothing is replaced.
    plain = save_note(SaveNoteArgs(text="My sister's name is Anna Maria."), store_e, None, "t", OLD)
    assert "replaces" not in plain.data
    assert store_e.notes.get(ids["old"]).superseded_by == ""  # type: ignore[union-attr]
    store_e.notes.delete(plain.data["id"])
    # A correction naming a wrong word no note contains replaces nothing.
    other = save_note(
        SaveNoteArgs(text="My sister's name is Ana."), store_e, None, "t", "no, it's Ana, not Anya"
    )
    assert "replaces" not in other.data
    store_e.notes.delete(other.data["id"])

    out = save_note(SaveNoteArgs(text=NEW), store_e, None, "t", CORRECTION)
    new_id = out.data["id"]
    assert out.ok and out.data["replaces"] == ids["old"] and ids["old"] in out.content
    old = store_e.notes.get(ids["old"])
    assert old is not None and old.text == OLD and old.superseded_by == new_id  # kept
    assert store_e.notes.get(ids["porto"]).superseded_by == ""  # type: ignore[union-attr]

    # Search (hybrid, lexical, semantic), the tool, recent notes and recall: current only.
    for hits in (
        store_e.notes.search("what is my sister called"),
        store_e.notes.search_fts("sister name"),
        store_e.notes.search_fts("sister name", kinds=["fact", "note"]),  # the joined path
        store_e.notes.search_semantic("what is my sister called"),
    ):
        found = [h.id for h in hits]
        assert new_id in found and ids["old"] not in found
    listed = search_memory(SearchMemoryArgs(query="sister's name"), store_e)
    assert NEW in listed.content and OLD not in listed.content
    assert ids["old"] not in [n.id for n in store_e.notes.recent(10)]
    evidence = recall(store_e, "What is my sister's name?", settings, lambda: embedder)
    assert [e.id for e in evidence][:1] == [new_id] and ids["old"] not in [e.id for e in evidence]


def test_another_connection_sees_the_supersession(settings: Settings, embedder: Embedder) -> None:
    first = Store(settings.db_path, embedder=embedder)
    ids = _notes(first)
    assert ids["old"] in [h.id for h in first.notes.search_semantic("sister's name")]
    second = Store(settings.db_path, embedder=embedder)
    new_id = second.notes.add(NEW)
    second.notes.supersede(ids["old"], new_id)
    # The first connection's in-memory vectors notice the change in the file.
    found = [h.id for h in first.notes.search_semantic("sister's name")]
    assert new_id in found and ids["old"] not in found
    first.close()
    second.close()


def test_replaces_names_the_note_and_superseded_notes_are_never_briefed(
    store: Store, tokenizer: Tokenizer
) -> None:
    old_id = store.notes.add(OLD)
    missing = save_note(SaveNoteArgs(text=NEW, replaces="note-99"), store, None, "t")
    assert not missing.ok and "no note note-99" in missing.content
    assert [n.text for n in store.notes.recent(10)] == [OLD]  # nothing saved
    out = save_note(SaveNoteArgs(text=NEW, replaces=old_id), store, None, "t")
    assert out.data["replaces"] == old_id
    assert store.notes.supersede(old_id, out.data["id"]).superseded_by == out.data["id"]
    # Naming the old id again corrects the current version, the chain stays one line.
    again = save_note(
        SaveNoteArgs(text="My sister's name is Ana Sofia.", replaces=old_id), store, None, "t"
    )
    assert again.data["replaces"] == out.data["id"]
    assert [n.text for n in store.notes.recent(10)] == ["My sister's name is Ana Sofia."]
    new_texts = [NEW, "My sister's name is Ana Sofia."]
    # A session's checkpoint still quotes the old note (it was saved in that session).
    sid = store.sessions.start()
    cp = Checkpoint(summary="We talked about my sister.", notes=[OLD, *new_texts])
    store.checkpoints.save(sid, 3, cp.to_json(), cp.summary, [])
    briefing = build_briefing(store, budget=750, count=tokenizer.count)
    assert briefing.notes == [new_texts[1]] and OLD not in briefing.text
    assert old_id not in briefing.source_ids


async def test_a_spoken_correction_in_a_session_supersedes_the_note(
    tmp_path: Path, tokenizer: Tokenizer, embedder: Embedder
) -> None:
    call = {"name": "save_note", "arguments": {"text": NEW}}
    llm = ScriptedLLM(tokenizer, [f"<tool_call>\n{json.dumps(call)}\n</tool_call>", "Got it: Ana."])
    runtime = make_runtime(llm, tmp_path, window=8192, embedder=embedder)
    old_id = runtime.store.notes.add(OLD, embedding=embedder.embed([OLD])[0])
    session = runtime.open_session()
    await collect(session, CORRECTION)
    current = [n.text for n in runtime.store.notes.recent(10)]
    assert current == [NEW]
    old = runtime.store.notes.get(old_id)
    assert old is not None and old.superseded_by != ""
    await runtime.close()
    # The next session's briefing lists the current note only.
    second = make_runtime(ScriptedLLM(tokenizer, ["ok"]), tmp_path, window=8192)
    notes = second.open_session().conv.prefix.notes
    assert NEW in notes and OLD not in notes
    await second.close()
