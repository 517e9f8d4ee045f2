"""Notes with provenance: version, confidence, sensitivity, expiry, the record's time, the
event they came from, typed note-write records, and contradictions flagged, not guessed.

Real SQLite files throughout; the note tool's own write path (`save_note`), no stand-ins.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from sqlite_utils import Database

from bot.tools.memory_tools import SaveNoteArgs, SearchMemoryArgs, save_note, search_memory
from bot.tools.note_writes import Origin, origin_of
from compaction.briefing import build_briefing
from memory.db import NotFoundError
from memory.migrations import migration_names, migrations
from memory.provenance import DISPUTED, INFERRED, SAID, asks_private, claim, disagree
from memory.rows import to_iso, utc_now
from memory.store import Store
from models import Tokenizer

ANN = "My sister's name is Ann."
ANNA = "My sister's name is Anna."


def test_an_existing_database_migrates_with_its_notes_intact(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    names = migration_names()
    stop = names.index("m007_note_provenance_and_mood")
    db = Database(path)
    with db.atomic():
        migrations.apply(db, stop_before=names[stop])
    written = "2026-01-01T00:00:00.000000+00:00"
    db.execute(
        "INSERT INTO notes (kind, source, text, created_at) VALUES ('fact', 'old', ?, ?)",
        [ANN, written],
    )
    db.close()

    with Store(path) as store:
        assert store.schema_version() == names
        note = store.notes.get("note-1")
        assert note is not None and note.text == ANN
        # Version 1, fully trusted, normal, never expiring, as fresh as when it was written.
        assert (note.version, note.confidence, note.sensitivity) == (1, 1.0, "normal")
        assert note.expires_at is None and note.updated_at == written
        assert note.source_event == "" and note.contradicts == ""
        assert [h.id for h in store.notes.search_fts("sister")] == ["note-1"]
        assert store.moods.latest() == []
        # The file itself refuses a sensitivity it does not know.
        with pytest.raises(sqlite3.IntegrityError):
            store.conn.execute("UPDATE notes SET sensitivity = 'secret' WHERE n = 1")
    columns = Database(path)["notes"].columns_dict
    assert {"version", "confidence", "sensitivity", "expires_at", "updated_at"} <= set(columns)
    assert {"source_event", "contradicts"} <= set(columns)


def test_stamping_provenance_moves_the_record_time(store: Store) -> None:
    note_id = store.notes.add("The boiler service is every October.")
    before = store.provenance.get(note_id)
    later = utc_now() + timedelta(minutes=5)
    after = store.provenance.stamp(note_id, sensitivity="private", confidence=0.7, now=later)
    assert after.private and after.confidence == 0.7
    assert after.updated_at == to_iso(later) and after.created_at == before.created_at
    with pytest.raises(ValueError, match="sensitivity must be normal or private"):
        store.provenance.stamp(note_id, sensitivity="secret")
    with pytest.raises(ValueError, match="between 0 and 1"):
        store.provenance.stamp(note_id, confidence=1.5)
    with pytest.raises(NotFoundError):
        store.provenance.stamp("note-99", sensitivity="private")


@pytest.mark.parametrize(
    ("a", "b", "contradicts"),
    [
        (ANN, ANNA, True),
        ("The user's sister is called Ann", "my sister's name is Anna.", True),
        ("My favourite colour is blue.", "The user's favourite colour is green.", True),
        ("My sister lives in Porto.", "My sister lives in Lisbon.", True),
        # Same subject, the value only gains words: no contradiction.
        (ANN, "My sister's name is Ann Smith.", False),
        # Different subjects, or no owner to speak of: no claim to compare.
        ("My sister lives in Porto.", ANNA, False),
        ("The weather is nice.", "The weather is awful.", False),
        ("My dentist appointment is on Tuesday.", "I like tea.", False),
    ],
)
def test_contradictions_are_found_by_rule(a: str, b: str, contradicts: bool) -> None:
    x, y = claim(a), claim(b)
    assert (x is not None and y is not None and disagree(x, y)) == contradicts


def test_a_contradicting_note_is_flagged_kept_and_settled(store: Store) -> None:
    old_id = store.notes.add(ANN)
    out = save_note(SaveNoteArgs(text=ANNA), store, None, "t", "my sister's name is Anna")
    new_id = out.data["id"]
    assert out.ok and out.data["contradicts"] == old_id
    assert old_id in out.content and "Ask the user which one is right" in out.content
    both = store.provenance.of([old_id, new_id])
    assert not both[old_id].superseded_by and not both[new_id].superseded_by  # both kept
    assert both[old_id].confidence == DISPUTED and both[new_id].confidence == DISPUTED
    assert [(n.id, o.id) for n, o in store.provenance.disputes()] == [(new_id, old_id)]

    # The user says Anna: saving that note again settles it (no second copy).
    again = save_note(SaveNoteArgs(text=ANNA), store, None, "t", "Anna, it's Anna")
    assert again.data == {"id": new_id, "replaces": old_id}
    assert [n.text for n in store.notes.recent(10)] == [ANNA]
    settled = store.provenance.get(new_id)
    assert settled.confidence == SAID and settled.contradicts == ""
    assert store.provenance.disputes() == []


def test_a_correction_with_replaces_counts_versions(store: Store) -> None:
    first = save_note(SaveNoteArgs(text=ANN), store, None, "t").data["id"]
    second = save_note(SaveNoteArgs(text=ANNA, replaces=first), store, None, "t").data["id"]
    third = save_note(
        SaveNoteArgs(text="My sister's name is Anna Maria.", replaces=first), store, None, "t"
    ).data["id"]
    versions = store.provenance.of([first, second, third])
    assert [versions[i].version for i in (first, second, third)] == [1, 2, 3]
    # Without a conversation there is no event to come from, and no log to write to.
    assert store.events.find(kinds=["note_write"]) == []


def test_note_writes_are_typed_records_with_their_source_event(store: Store) -> None:
    sid = store.sessions.start()
    said = "Remember that my passport expires on 2027-05-01, keep this between us"
    user_event = store.events.append(sid, "user", said, turn_id="t1", role="user")
    origin = origin_of(store, sid, "t1", f"session {sid}")
    assert origin.source_event == user_event and origin.said == said
    args = SaveNoteArgs(text="The user's passport expires on 2027-05-01.", expires="2027-05-01")
    out = save_note(args, store, None, origin.source, origin.said, origin)
    note = store.provenance.get(out.data["id"])
    assert note.source_event == user_event and note.private  # private from the user's words
    assert note.expires_at is not None and note.expires_at.startswith("2027-0")
    assert note.confidence == SAID  # the note restates the user's own words
    (record,) = store.events.find(sid, kinds=["note_write"])
    assert record.content == args.text and record.turn_id == "t1"
    assert record.meta["note_id"] == note.id and record.meta["source_event"] == user_event
    assert record.meta["sensitivity"] == "private" and record.meta["at"] >= record.created_at[:19]
    # The reply is the model's; the write is its own record, not text in an answer.
    assert store.events.find(sid, kinds=["assistant"]) == []


def test_confidence_marks_annie_reading_of_the_words(store: Store) -> None:
    out = save_note(
        SaveNoteArgs(text="The user prefers window seats on long flights."),
        store,
        None,
        "t",
        "book me something for the trip",
    )
    assert store.provenance.get(out.data["id"]).confidence == INFERRED


@pytest.mark.parametrize(
    ("said", "private"),
    [
        ("keep this between us: the safe code is 4412", True),
        ("this is private, my salary is 50k", True),
        ("don't tell anyone but I'm applying for a new job", True),
        ("my sister's name is Ann", False),
        ("the private road by the house is closed", True),  # precise over clever: it says so
    ],
)
def test_private_is_read_from_the_users_words(said: str, private: bool) -> None:
    assert asks_private(said) == private


def test_bad_expiry_saves_nothing(store: Store) -> None:
    out = save_note(SaveNoteArgs(text="Back on Friday.", expires="next friday"), store, None, "t")
    assert not out.ok and "not an ISO date" in out.content
    assert store.notes.recent(10) == []


def test_private_and_expired_notes_stay_out_of_the_briefing(
    store: Store, tokenizer: Tokenizer
) -> None:
    kept = store.notes.add("The user's favourite tea is Earl Grey.")
    secret = store.notes.add("The user's bank PIN hint is the first dog's name.")
    store.provenance.stamp(secret, sensitivity="private")
    gone = store.notes.add("The user is in Lisbon this week.")
    store.provenance.stamp(gone, expires_at=to_iso(utc_now() - timedelta(days=1)))
    old = store.notes.add(ANN)
    save_note(SaveNoteArgs(text=ANNA), store, None, "t", "")
    briefing = build_briefing(store, budget=750, count=tokenizer.count)
    assert "The user's favourite tea is Earl Grey." in briefing.notes
    assert kept in briefing.source_ids
    assert not any("PIN" in n for n in briefing.notes) and "PIN" not in briefing.text
    assert not any("Lisbon" in n for n in briefing.notes)
    assert f"contradicts {old}" in briefing.text and "which is right" in briefing.text


def test_search_memory_leaves_private_notes_out_when_data_can_leave(store: Store) -> None:
    secret = store.notes.add("The bank PIN hint is the first dog's name.")
    store.provenance.stamp(secret, sensitivity="private")
    store.notes.add("The bank branch is on Rua Augusta.")
    args = SearchMemoryArgs(query="bank")
    local = search_memory(args, store)
    assert "PIN" in local.content
    out = search_memory(args, store, sends_out=True)
    assert "PIN" not in out.content and "Rua Augusta" in out.content
    assert "one private note left out" in out.content


def test_origin_without_a_turn_has_no_source_event(store: Store) -> None:
    assert origin_of(store, "", "", "assistant") == Origin("assistant")


def test_saving_the_users_own_words_makes_a_note_not_a_twin_of_their_episode(
    store: Store,
) -> None:
    """The user's words are an episode with the same text; saving them as a note must write a
    note (before, the episode counted as the note's twin, and nothing was saved)."""
    session = store.sessions.start()
    store.events.append(session, "user", "My bike lock code is 7071", role="user")
    out = save_note(SaveNoteArgs(text="My bike lock code is 7071"), store, None, "t")
    note = store.notes.get(out.data["id"])
    assert note is not None and note.kind == "note" and note.text == "My bike lock code is 7071"
    assert [h.id for h in store.notes.search_fts("bike lock", written_only=True)] == [note.id]
