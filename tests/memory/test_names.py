"""The name index: which notes mention a person or a place by name, kept in step with writes."""

from __future__ import annotations

from pathlib import Path

from memory.store import Store


def test_names_are_words_capitalized_within_a_sentence_and_found_in_any_case(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "annie.db")
    ids = store.notes.add_many(
        [
            {"text": "Ines lives in York."},
            {"text": "Watched Dune with Ines; brilliant."},
            {"text": "Water is dripping from under the boiler."},
            {"text": "Podcast worth finishing: episode 4 of In Our Time."},
            {"text": "The opening time at the gym is 7:30."},
        ]
    )
    index = store.notes.names.current()
    # "Ines" stems to "in" in the full-text index; here it is the two notes that name her.
    assert [f"note-{n}" for n in index.mentions("ines")] == ids[:2]
    assert index.is_name("Ines") and index.is_name_alone("ines")
    # Capitalized only where a note starts: not a name.
    assert not index.is_name("water")
    # One word of a title is a name only when said with its capital.
    assert index.is_name("Time") and not index.is_name_alone("time")
    assert index.capitalized_share("time") == 0.5
    found, total = store.notes.names_among(["ines", "time", "water", "Dune"])
    assert found == {"ines": (2, 1.0), "dune": (1, 1.0)} and total == 5
    store.close()


def test_the_index_follows_new_superseded_and_deleted_notes(tmp_path: Path) -> None:
    store = Store(tmp_path / "annie.db")
    first = store.notes.add("Call Priya back about the school fete.")
    assert store.notes.mentioning("Priya") == [first]
    second = store.notes.add("Priya's partner is called Kwame.")
    assert store.notes.mentioning("priya") == [first, second]
    # Another connection's write is seen too (the index checks the table's signature).
    other = Store(tmp_path / "annie.db")
    third = other.notes.add("Borrowed the drill from Priya.")
    assert store.notes.mentioning("Priya") == [first, second, third]
    corrected = store.notes.add("Priya's partner is called Kwabena.")
    store.notes.supersede(second, corrected)
    assert store.notes.mentioning("Priya") == [first, third, corrected]
    other.notes.delete(first)
    assert store.notes.mentioning("Priya") == [third, corrected]
    assert store.notes.mentioning("Kwame") == []
    other.close()
    store.close()
