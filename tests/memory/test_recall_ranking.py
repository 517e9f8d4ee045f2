"""Ranking for recall: by meaning with a lexical share, dated notes, near-duplicates passed over."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from config import Settings
from context.recall import recall
from memory.store import Store
from models.base import Embedder

MAYA = [
    "Maya's shoe size is 38.",
    "Maya lives in Bristol.",
    "Maya is coming over on Friday for dinner.",
    "Maya recommended the novel Piranesi.",
    "Watched Dune with Maya; worth it.",
]


def test_scores_keep_notes_that_share_only_a_name_below_the_one_asked_about(
    tmp_path: Path, embedder: Embedder
) -> None:
    store = Store(tmp_path / "annie.db", embedder=embedder)
    ids = store.notes.add_many([{"text": t} for t in MAYA])
    query = "What size footwear does Maya take?"
    blended = store.notes.search(query, limit=5, lexical_weight=0.1)
    assert blended[0].id == ids[0]
    # The score is the cosine plus the lexical share: comparable across queries, unlike ranks.
    cosine = {h.id: h.score for h in store.notes.search_semantic(query, limit=5)}
    assert all(cosine[h.id] <= h.score <= cosine[h.id] + 0.1 + 1e-6 for h in blended)
    # An identifier the embedding hardly sees is still lifted by its exact words.
    code = store.notes.add("Invoice INV-48213 was paid by bank transfer.")
    assert store.notes.search("INV-48213", limit=1, lexical_weight=0.1)[0].id == code
    store.close()


def test_notes_keep_the_time_they_were_written_and_filter_by_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    store = Store(tmp_path / "annie.db", embedder=embedder)
    march = datetime(2026, 3, 3, 9, 30, tzinfo=UTC)
    old, new = store.notes.add_many(
        [{"text": "The boiler is leaking.", "created_at": march}, {"text": "The boiler works."}]
    )
    row = store.notes.get(old)
    assert row is not None and row.created_at.startswith("2026-03-03T09:30")
    since = datetime(2026, 3, 4, tzinfo=UTC)
    assert [h.id for h in store.notes.search("boiler", since=since, lexical_weight=0.1)] == [new]
    assert [h.id for h in store.notes.search("boiler", until=since, lexical_weight=0.1)] == [old]
    store.close()


def test_recall_passes_over_a_restatement_but_keeps_notes_that_differ_in_a_word(
    tmp_path: Path, embedder: Embedder, settings: Settings
) -> None:
    store = Store(tmp_path / "annie.db", embedder=embedder)
    texts = [
        "Mia is coming over on Tuesday for dinner.",
        "Mia is coming over for dinner on Tuesday.",
        "Mia is coming over on Friday for dinner.",
        "Mia is allergic to gluten.",
        "Tom lives in Leeds.",
    ]
    ids = store.notes.add_many([{"text": t} for t in texts])
    settings.context.evidence_hits = 3
    now = datetime(2026, 3, 27, 19, 0, tzinfo=UTC)
    found = [
        e.id
        for e in recall(
            store, "When is Mia coming over for dinner?", settings, lambda: embedder, now
        )
    ]
    assert len(found) == 3
    # The same words in another order add nothing: one of the two takes a place.
    assert len({ids[0], ids[1]} & set(found)) == 1
    # Friday is as close to Tuesday by meaning, but it is the other answer: both are recalled.
    assert ids[2] in found
    store.close()


def _a_friend_among_many(store: Store) -> list[str]:
    """Mia's eleven facts among her visits and errands, and the same facts about others."""
    facts = [
        "Mia's shoe size is 38.",
        "Mia was born on June 9.",
        "Mia reacts badly to gluten, never serve it.",
        "Mia always asks for rooibos.",
        "Mia's mobile number is 07700 900123.",
        "Mia works at Northwind Logistics.",
        "Mia's spaniel called Rufus lives with them.",
        "Mia lives in Bristol.",
        "Gift idea for Mia: a telescope.",
        "Mia is married to Kwame.",
        "Mia drives a blue Golf.",
    ]
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    meals = ["dinner", "lunch", "drinks", "coffee", "brunch"]
    chatter = [f"Mia is coming over on {d} for {m}." for d in days for m in meals]
    chatter += [f"Borrowed the {t} from Mia." for t in ("drill", "step ladder", "camping stove")]
    others = [f"{n}'s favourite drink is {d}." for n, d in [("Tom", "lemonade"), ("Leo", "tea")]]
    others += [f"{n} is allergic to peanuts." for n in ("Tom", "Leo", "Sam")]
    ids = store.notes.add_many([{"text": t} for t in facts + chatter + others])
    return ids[: len(facts)]


def test_a_question_about_someone_finds_the_fact_asked_not_their_visits(
    tmp_path: Path, embedder: Embedder, settings: Settings
) -> None:
    store = Store(tmp_path / "annie.db", embedder=embedder)
    facts = _a_friend_among_many(store)
    settings.context.evidence_hits = 3
    now = datetime(2026, 3, 27, 19, 0, tzinfo=UTC)
    asked = {
        "Is Mia allergic to anything?": facts[2],
        "is mia allergic to anything": facts[2],  # typed, without capitals
        "Is there any food Mia can't have?": facts[2],
        "Does Mia have a dog?": facts[6],
        "Which motor is Mia's?": facts[10],
    }
    for question, right in asked.items():
        found = recall(store, question, settings, lambda: embedder, now)
        assert right in [e.id for e in found], (question, [e.text for e in found])
        # Three places do not go to three rewordings of one visit.
        assert sum("coming over" in e.text for e in found) <= 2, question
    store.close()
