"""Hybrid search with the real all-MiniLM-L6-v2 embeddings on a real SQLite file."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
import pytest

from config import Settings
from memory.store import Store
from models.base import Embedder

NOTES = [
    "Dentist appointment moved to Thursday afternoon",
    "Buy oat milk, eggs and coffee beans",
    "The garage door code is changed every spring",
    "The landlord prefers calls after 10am, never before",
    "Flight to Lisbon departs from terminal 2",
] + [f"Invoice INV-{48200 + i} from Acme Corp for consulting services" for i in range(20)]


def _rank(hits: list, note_id: str) -> int | None:
    ids = [h.id for h in hits]
    return ids.index(note_id) + 1 if note_id in ids else None


def test_paraphrase_found_that_fts_alone_misses(store_e: Store) -> None:
    ids = store_e.notes.add_many([{"text": t, "source": "test"} for t in NOTES])
    dentist = ids[0]
    query = "when do I see the tooth doctor"
    assert _rank(store_e.notes.search_fts(query, limit=25), dentist) is None
    assert _rank(store_e.notes.search_semantic(query, limit=25), dentist) == 1
    hits = store_e.notes.search(query, limit=5)
    assert hits[0].id == dentist
    assert hits[0].source == "test" and hits[0].timestamp and hits[0].score > 0


def test_exact_words_found_that_embeddings_rank_low(store_e: Store) -> None:
    # The reference is buried in a long note about something else; short notes with
    # near-identical references look closer to the query to the embedding model.
    target_text = (
        "Garden meeting notes: we went through the redesign of the back beds, the budget for "
        "new perennials, replacing the pond pump, a drip irrigation schedule for the summer, "
        "mulch delivery in April and who trims the hedge; supplier reference GX-7741."
    )
    orders = ["paint", "tile", "timber", "glass", "brick", "cement", "pipe", "cable"]
    distractors = [
        f"Supplier reference GX-{7700 + i} for the {w} order" for i, w in enumerate(orders)
    ]
    ids = store_e.notes.add_many([{"text": t} for t in [*NOTES[:5], *distractors, target_text]])
    target = ids[-1]
    query = "GX-7741"
    semantic_rank = _rank(store_e.notes.search_semantic(query, limit=25), target)
    assert semantic_rank is not None and semantic_rank > len(distractors) // 2, semantic_rank
    assert [h.id for h in store_e.notes.search_fts(query)] == [target]
    assert store_e.notes.search(query, limit=5)[0].id == target


def test_embeddings_are_computed_once_and_stored(store_e: Store, embedder: Embedder) -> None:
    note_id = store_e.notes.add("Passport renewal needs two photos")
    row = store_e.conn.execute(
        "SELECT embedding FROM notes WHERE n = ?", (int(note_id.split("-")[1]),)
    ).fetchone()
    stored = np.frombuffer(row[0], dtype=np.float32)
    assert stored.shape == (embedder.dim,)
    assert np.allclose(stored, embedder.embed(["Passport renewal needs two photos"])[0], atol=1e-5)


class CountingEmbedder(Embedder):
    """Wraps the real embedder and counts texts, to show search embeds only the query."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_search_embeds_only_the_query(settings: Settings, embedder: Embedder) -> None:
    counting = CountingEmbedder(embedder)
    with Store.open(settings, embedder=counting) as store:
        store.notes.add_many([{"text": t} for t in NOTES])
        assert len(counting.texts) == len(NOTES)
        counting.texts.clear()
        store.notes.search("tooth doctor")
        store.notes.search("garage code")
        assert counting.texts == ["tooth doctor", "garage code"]
    # A fresh process reads the stored vectors; nothing is re-embedded.
    counting.texts.clear()
    with Store.open(settings, embedder=counting) as store:
        assert store.notes.search("tooth doctor")[0].text.startswith("Dentist")
        assert counting.texts == ["tooth doctor"]


def test_filters_by_kind_and_time(store_e: Store) -> None:
    store_e.notes.add("Decided to take the train to Porto", kind="decision")
    store_e.notes.add("Train tickets are in the email from CP", kind="note")
    decisions = store_e.notes.search("train", kinds=["decision"])
    assert [h.kind for h in decisions] == ["decision"]
    future = datetime.now(UTC) + timedelta(days=1)
    assert store_e.notes.search("train", since=future) == []
    assert len(store_e.notes.search("train", until=future)) == 2


def test_notes_from_another_connection_are_searchable(
    settings: Settings, embedder: Embedder
) -> None:
    with (
        Store.open(settings, embedder=embedder) as first,
        Store.open(settings, embedder=embedder) as second,
    ):
        first.notes.add("Boiler service is booked with the local plumber")
        assert second.notes.search("heating maintenance")[0].text.startswith("Boiler")
        late = first.notes.add("The spare key is under the blue pot")
        assert second.notes.search("where is the extra key")[0].id == late
        first.notes.delete(late)
        assert all(h.id != late for h in second.notes.search("where is the extra key"))


def test_fts_query_syntax_is_inert(store_e: Store) -> None:
    store_e.notes.add('He said "NEAR(a b)" OR AND * - weird')
    assert store_e.notes.search_fts('"NEAR(a b)" OR AND * -') != []
    assert store_e.notes.search_fts("***") == []


def test_a_similarity_floor_says_when_nothing_is_relevant(
    store_e: Store, settings: Settings
) -> None:
    """Fused scores rank; only the cosine floor can answer "is any of this relevant?"."""
    ids = store_e.notes.add_many([{"text": t, "source": "test"} for t in NOTES])
    floor = settings.context.evidence_min_similarity
    hits = store_e.notes.search("when do I see the tooth doctor", limit=3, min_similarity=floor)
    assert [h.id for h in hits][:1] == [ids[0]]
    assert all(h.id in ids for h in hits)
    # Unrelated requests still get fused "hits" without the floor, and none with it.
    for query in ("tell me a joke", "set a timer for five minutes", "what's the weather like"):
        assert store_e.notes.search(query, limit=3)
        assert store_e.notes.search(query, limit=3, min_similarity=floor) == [], query
    # A note that shares only a word, not a meaning, stays out too.
    assert store_e.notes.search("the door of the invoice", limit=3, min_similarity=0.9) == []


def test_a_similarity_floor_without_an_embedder_is_a_clear_error(settings: Settings) -> None:
    store = Store.open(settings)
    store.notes.add("Buy oat milk")
    with pytest.raises(ValueError, match="needs an embedder"):
        store.notes.search("milk", min_similarity=0.3)
    assert store.notes.search("milk")  # lexical search still works
    store.close()
