"""Per-turn recall on the real model and embedder: related notes reach the evidence lane.

Six notes exist, so the briefing (which lists the five newest) leaves the oldest, the cabin's
Wi-Fi password, out of view: only recall can bring it back.
"""

from __future__ import annotations

from pathlib import Path

from bot.turn.events import LatencyEvent
from models.base import LLM, Embedder
from tests.bot.conftest import collect, make_runtime

WIFI = "The Wi-Fi password for the cabin is pinecone42."
OTHERS = [
    "The user's sister Maya visits in June.",
    "The user prefers oat milk in coffee.",
    "Dentist appointment moved to Thursday at nine.",
    "Project Falcon's budget is forty thousand.",
    "The landlord prefers calls after ten in the morning.",
]


async def test_a_related_note_is_recalled_once_and_unrelated_turns_recall_nothing(
    llm: LLM, embedder: Embedder, tmp_path: Path
) -> None:
    runtime = make_runtime(llm, tmp_path, embedder=embedder)
    wifi_id = runtime.store.notes.add(WIFI, embedding=embedder.embed([WIFI])[0])
    for text in OTHERS:
        runtime.store.notes.add(text, embedding=embedder.embed([text])[0])
    session = runtime.open_session()
    assert WIFI not in session.conv.prefix.system_content()
    assert wifi_id not in session.conv.prefix.source_ids
    assert len(session.conv.prefix.source_ids) >= 5  # the five newest notes are in view

    events = await collect(session, "What's the wifi password at the cabin?")
    assert session.last_assembly is not None
    evidence = session.last_assembly.envelope.retrieved_evidence
    assert [e.source_id for e in evidence] == [f"{wifi_id}@t1"]
    assert "pinecone42" in session.last_assembly.prompt
    assert "retrieved" in evidence[0].admission_reason
    assert "recall_ms" in next(e for e in events if isinstance(e, LatencyEvent)).stages

    # Unrelated turns add no evidence, and asking again does not admit the note twice.
    for text in ("Tell me a joke.", "Set a timer for five minutes.", "Where is the cabin wifi?"):
        await collect(session, text)
        assert session.last_assembly is not None
        assert len(session.last_assembly.envelope.retrieved_evidence) == 1, text
    # A note the briefing already shows is never admitted again as evidence.
    await collect(session, "How does the user take their coffee?")
    assert session.last_assembly is not None
    assert len(session.last_assembly.envelope.retrieved_evidence) == 1
    await session.close()


async def test_recall_loads_no_embedder_while_nothing_is_stored(llm: LLM, tmp_path: Path) -> None:
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    # Words no status question is made of: the state path has nothing to embed either.
    events = await collect(session, "Write a limerick about otters.")
    assert session.last_assembly is not None
    assert session.last_assembly.envelope.retrieved_evidence == []
    assert runtime.store.notes.embedder is None
    assert "recall_ms" in next(e for e in events if isinstance(e, LatencyEvent)).stages
    await session.close()


async def test_once_the_embedder_loads_the_runtimes_store_searches_by_meaning(
    llm: LLM, embedder: Embedder, tmp_path: Path
) -> None:
    """search_memory uses the runtime's store: without an embedder it would be lexical only."""
    runtime = make_runtime(llm, tmp_path, embedder=embedder)
    assert runtime.store.notes.embedder is None
    assert runtime.embedder is embedder
    assert runtime.store.notes.embedder is embedder
    note_id = runtime.store.notes.add("Dentist appointment moved to Thursday afternoon")
    query = "when do I see the tooth doctor"
    assert runtime.store.notes.search_fts(query) == []
    assert [h.id for h in runtime.store.notes.search(query, limit=1)] == [note_id]


async def test_notes_only_near_a_question_reach_the_model_marked_as_only_related(
    llm: LLM, embedder: Embedder, tmp_path: Path
) -> None:
    runtime = make_runtime(llm, tmp_path, embedder=embedder)
    maya = ["Maya lives in Bristol.", "Maya's shoe size is 38.", "Watched Dune with Maya."]
    for text in [*maya, *OTHERS]:  # the briefing shows the five newest: none of Maya's
        runtime.store.notes.add(text, embedding=embedder.embed([text])[0])
    session = runtime.open_session()
    # No note says what she is allergic to: her notes come, each marked in the prompt.
    await collect(session, "Is Maya allergic to anything?")
    assert session.last_assembly is not None
    evidence = session.last_assembly.envelope.retrieved_evidence
    assert evidence and all("only related" in e.admission_reason for e in evidence)
    assert session.last_assembly.prompt.count("; only related]") == len(evidence)
    # When one of them is what is asked, it comes again, not marked.
    await collect(session, "What size footwear does Maya take?")
    evidence = session.last_assembly.envelope.retrieved_evidence
    shoes = [e for e in evidence if "shoe" in e.content]
    assert len(shoes) == 2 and "only related" not in shoes[-1].admission_reason
    await session.close()
