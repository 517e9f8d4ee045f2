"""The mood record: written by rules from the user's own words only, kept per session with
its time and the words, read back newest first. Real SQLite files."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.mood import Feeling, feeling_in
from memory.rows import to_iso, utc_now
from memory.store import Store


@pytest.mark.parametrize(
    ("said", "feeling", "verb"),
    [
        ("I'm exhausted", "exhausted", "be"),
        ("I feel great today", "great", "feel"),
        ("I'm stressed about the move.", "stressed about the move", "be"),
        ("Honestly I've been so tired lately", "so tired", "be"),
        ("I'm not feeling great", "not feeling great", "be"),
        ("I'm exhausted, what's on my schedule tomorrow?", "exhausted", "be"),
        ("Feeling a bit low today.", "feeling a bit low", "be"),
    ],
)
def test_a_mood_stated_in_the_users_words_is_read(said: str, feeling: str, verb: str) -> None:
    found = feeling_in(said)
    assert found is not None and (found.feeling, found.verb) == (feeling, verb)
    assert found.words in said  # the user's own words, as said


@pytest.mark.parametrize(
    "said",
    [
        "How am I feeling lately?",  # a question
        "am I tired?",
        "my wife is exhausted",  # someone else
        "I'm happy to help with the party",  # idioms that borrow a feeling word
        "I'm sick of waiting for the plumber",
        "I'm good at chess",
        "if I'm tired tomorrow, move the run to Friday",  # a supposition
        "Ugh. Whatever. Fine.",  # tone alone says nothing
        "Set a timer for ten minutes",
    ],
)
def test_nothing_is_read_from_anything_else(said: str) -> None:
    assert feeling_in(said) is None


def test_moods_are_kept_per_session_with_time_and_words(store: Store) -> None:
    first, second = store.sessions.start(), store.sessions.start()
    earlier = utc_now() - timedelta(days=2)
    store.moods.record(first, "ev-1", Feeling("great", "feel", "I feel great"), earlier)
    said = store.moods.observe(second, "ev-7", "I'm exhausted. Anything due today?")
    assert said is not None and said.feeling == "exhausted" and said.event_id == "ev-7"
    assert said.words == "I'm exhausted." and said.session_id == second
    store.moods.observe(second, "ev-9", "I'm stressed about the move")
    assert store.moods.observe(second, "ev-10", "what's next?") is None
    # Newest first, one per session: the session's last statement stands for it.
    latest = store.moods.latest(limit=5)
    assert [(m.session_id, m.feeling) for m in latest] == [
        (second, "stressed about the move"),
        (first, "great"),
    ]
    assert latest[1].said_at == to_iso(earlier)
    by_session = store.moods.of_sessions([first, second, ""])
    assert by_session[first].verb == "feel" and by_session[second].event_id == "ev-9"
    assert store.moods.of_sessions([]) == {}
