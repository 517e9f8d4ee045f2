"""Which words ask to delete a note, and which notes they name."""

from __future__ import annotations

import pytest

from context.forget import named


@pytest.mark.parametrize(
    ("said", "words"),
    [
        ("Delete the note about the gate code", ["gate", "code"]),
        ("please forget the note on Leo's allergy", ["leo", "allergy"]),
        ("remove my note that says call the bank", ["call", "bank"]),
        ("Could you erase the notes about the party?", None),  # a question
        ("delete the reminder about the dentist", None),  # a reminder, not a note
        ("what's in the note about the gate code", None),
        ("delete the note", None),
    ],
)
def test_a_request_to_delete_a_note_names_it_by_its_words(
    said: str, words: list[str] | None
) -> None:
    assert named(said) == words
