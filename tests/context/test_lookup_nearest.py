"""An item no record holds in words gets a "no" only where nothing lies near it in meaning;
otherwise the nearest records are said, never as a yes (real all-MiniLM-L6-v2)."""

from __future__ import annotations

from datetime import UTC, datetime

from context.lookup import Record, done_answer, membership_answer, nearest
from models import Embedder

NOW = datetime(2026, 12, 7, 9, tzinfo=UTC)
TASKS = [
    Record("t1", "Email the landlord re: boiler", "task"),
    Record("t2", "Pay council tax", "task", done=True),
    Record("t3", "Tidy Cats litter 20lb", "task"),
]
EVENTS = [Record("e1", "Winter tyres fitted – Kwik Fit", "event", "2026-12-10T09:00:00+00:00")]
PLACES = {"list": TASKS, "schedule": EVENTS}


def test_a_record_said_in_other_words_is_named_not_denied(embedder: Embedder) -> None:
    # On the calendar, not the list, and in no word the same: the nearest by meaning.
    said = membership_answer("snow tires", "list", PLACES, NOW, embedder.embed)
    assert said.text.startswith("Not on your list as snow tires; the nearest I have:"), said.text
    assert '"Winter tyres fitted – Kwik Fit"' in said.text and said.sources == ["e1"]
    # A done one is said as done.
    paid = membership_answer("the council tax bill", "list", PLACES, NOW, embedder.embed)
    assert '"Pay council tax", done' in paid.text and "t2" in paid.sources, paid.text


def test_nothing_near_is_a_plain_no_and_without_a_model_too(embedder: Embedder) -> None:
    assert nearest("renew my passport", TASKS + EVENTS, embedder.embed) == []
    said = membership_answer("renew my passport", "list", PLACES, NOW, embedder.embed)
    assert said.text == "No, renew my passport isn't on your list." and not said.sources
    # Without an embedding model only words are compared.
    bare = membership_answer("snow tires", "list", PLACES, NOW, None)
    assert bare.text == "No, snow tires isn't on your list."


def test_at_most_three_are_said_and_a_done_question_says_each_state(embedder: Embedder) -> None:
    many = [Record(f"t{i}", f"Buy cat food, {brand}", "task") for i, brand in
            enumerate(["Whiskas", "Felix", "Purina", "Sheba", "Iams"])]  # fmt: skip
    assert len(nearest("something for the cat to eat", many, embedder.embed)) == 3
    # Two tasks equally near (so neither is taken as the one meant): each said with its state.
    tyres = [
        Record("w", "Winter tyres fitted – Kwik Fit", "task"),
        Record("s", "Summer tyres into storage", "task", done=True),
        *TASKS,
    ]
    said = done_answer("the snow tires", tyres, NOW, embedder.embed)
    assert said.text.startswith("Not on your list as the snow tires; the nearest I have:")
    assert '"Winter tyres fitted – Kwik Fit", still open' in said.text, said.text
    assert '"Summer tyres into storage", done' in said.text and set(said.sources) == {"w", "s"}
