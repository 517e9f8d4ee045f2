"""The evidence lane's hedge: recall says when it found only notes near the question."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from config import Settings
from context.admission import RELATED, admit_turn
from context.conversation import Conversation, Prefix
from context.inputs import Request
from context.ledger import Ledger
from context.recall import recall
from context.state import StateResolver
from memory.store import Store
from models.base import Embedder, Tokenizer
from tests.memory.test_recall_ranking import MAYA as RANKED

NOW = datetime(2026, 3, 27, 19, 0, tzinfo=UTC)
# The ranking tests' notes about Maya, and another person's allergy.
MAYA = [*RANKED, "Tom is allergic to kiwi."]


def _store(tmp_path: Path, embedder: Embedder) -> Store:
    store = Store(tmp_path / "annie.db", embedder=embedder)
    store.notes.add_many(
        [
            {"text": t, "created_at": datetime(2026, 3, 2 + i, 9, 0, tzinfo=UTC)}
            for i, t in enumerate(MAYA)
        ]
    )
    return store


def test_a_note_that_says_what_was_asked_makes_a_sure_lane(
    tmp_path: Path, embedder: Embedder, settings: Settings
) -> None:
    store = _store(tmp_path, embedder)
    found = recall(store, "What size footwear does Maya take?", settings, lambda: embedder, NOW)
    assert found and found[0].text == MAYA[0]
    assert all(e.certain for e in found)
    store.close()


def test_notes_only_about_the_same_person_are_hedged_in_the_lane_the_model_reads(
    tmp_path: Path, embedder: Embedder, tokenizer: Tokenizer, settings: Settings
) -> None:
    store = _store(tmp_path, embedder)
    # No note says what Maya is allergic to (Tom's allergy is another person's): the notes
    # about her are near, none is the answer.
    asked = "Is Maya allergic to anything?"
    found = recall(store, asked, settings, lambda: embedder, NOW)
    # The notes about her come first; further places may hold other allergies, all hedged.
    assert found and all("Maya" in e.text for e in found[:3])
    assert not any(e.certain for e in found)
    conv = Conversation("c", Prefix(""))
    admitted = admit_turn(
        conv,
        Request(asked, "t1", "e1"),
        None,
        found,
        ledger=Ledger(tokenizer, window=settings.context.window),
        ctx=settings.context,
    )
    lane = [i for i in admitted.items if i.lane == "evidence"]
    assert lane and all(RELATED in i.content and not i.meta["certain"] for i in lane)
    assert all("only related" in i.reason for i in lane)
    # The system prompt says what the hedge means.
    prompt = (Path(__file__).parents[2] / "config" / "system_prompt.md").read_text()
    assert '"only related"' in prompt
    store.close()


def test_a_question_tied_to_a_time_is_sure_only_of_a_note_from_that_time(
    tmp_path: Path, embedder: Embedder, settings: Settings
) -> None:
    store = Store(tmp_path / "annie.db", embedder=embedder)
    store.notes.add_many(
        [
            {
                "text": "The boiler is leaking from the valve.",
                "created_at": datetime(2026, 3, 3, 9, 0, tzinfo=UTC),
            },
            {
                "text": "Bought two loaves at the market.",
                "created_at": datetime(2026, 3, 26, 9, 0, tzinfo=UTC),
            },
        ]
    )
    early = recall(
        store,
        "What did I tell you in early March about the boiler?",
        settings,
        lambda: embedder,
        NOW,
    )
    assert early and early[0].text.startswith("The boiler") and early[0].certain
    # Yesterday holds no note on the boiler: the March note is still put forward, hedged.
    yesterday = recall(
        store, "What did I tell you yesterday about the boiler?", settings, lambda: embedder, NOW
    )
    assert yesterday and yesterday[0].text.startswith("The boiler")
    assert not yesterday[0].certain
    store.close()


def test_the_state_path_does_not_list_notes_near_a_subject_as_notes_about_it(
    store_e: Store, settings: Settings
) -> None:
    store_e.notes.add_many([{"text": t} for t in MAYA])
    resolver = StateResolver(store_e, settings)
    near = resolver.resolve("What did I tell you about Maya's allergies?", NOW)
    assert near is not None
    assert near.text.startswith("I have nothing noted about Maya's allergies. The nearest")
    assert near.sources  # the notes it read back are named
    store_e.notes.add("Maya is allergic to kiwi.")
    found = resolver.resolve("What did I tell you about Maya's allergies?", NOW)
    assert found is not None and found.text.startswith("About Maya's allergies, I have")
    assert "Maya is allergic to kiwi" in found.text
