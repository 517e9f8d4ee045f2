"""What was said is remembered: every user turn and answer is an episode, written with its
event, embedded later, found by the same search as notes, and never mistaken for a note."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

from config import load_settings
from context.provenance import with_provenance
from context.recall import recall
from memory.episodes import Said
from memory.store import Store
from models.embed import Embedder


def test_words_said_are_episodes_and_payloads_are_not(tmp_path: Path) -> None:
    with Store(tmp_path / "a.db") as store:
        s = store.sessions.start()
        user = store.events.append(s, "user", "My sister's wedding is on the 12th.", role="user")
        store.events.append(s, "tool_call", {"name": "save_note"}, role="assistant")
        store.events.append(s, "tool_result", "saved note-1", role="tool")
        answer = store.events.append(s, "assistant", "Lovely, I'll remember.", role="assistant")
        store.events.append(s, "assistant", "   ", role="assistant")
        ids = store.episodes.in_session(s)
        info = store.episodes.info(sorted(ids))
        assert len(ids) == 2
        assert sorted((i.speaker, i.event_id) for i in info.values()) == [
            ("annie", answer),
            ("user", user),
        ]
        assert {i.session_id for i in info.values()} == {s}
        # Episodes are not notes: the briefing's and the page's lists leave them out.
        assert store.notes.recent() == []
        assert store.notes.search_fts("wedding", written_only=True) == []
        assert [h.kind for h in store.notes.search_fts("wedding")] == ["episode"]


def test_a_checkpoint_summary_is_an_episode_of_its_session(tmp_path: Path) -> None:
    with Store(tmp_path / "a.db") as store:
        s = store.sessions.start()
        ckpt = store.checkpoints.save(s, 2, {}, "We planned the trip to Lisbon in May.", [])
        (row,) = store.episodes.info(sorted(store.episodes.in_session(s))).values()
        assert (row.kind, row.event_id, row.session_id) == ("summary", ckpt, s)
        store.checkpoints.save(s, 3, {}, "", [])  # no summary, no episode
        assert store.episodes.count() == 1


def test_episodes_are_embedded_later_and_then_found_by_meaning(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Store(tmp_path / "a.db", embedder=embedder) as store:
        s = store.sessions.start()
        store.notes.add("The boiler service is booked for Friday.")
        store.events.append(s, "user", "I really can't stand coriander in my food.", role="user")
        query = "which herb do I dislike?"
        # Written without waiting for the model: not yet among the semantic results.
        assert [h.kind for h in store.notes.search_semantic(query, limit=5)] == ["note"]
        assert store.episodes.missing() == 1
        # Another connection embeds it; this one notices without being told.
        with Store(tmp_path / "a.db", embedder=embedder) as other:
            assert other.episodes.embed_missing(embedder) == 1
        assert store.episodes.missing() == 0
        hits = store.notes.search_semantic(query, limit=5)
        assert hits[0].kind == "episode" and "coriander" in hits[0].text
        # And this connection's own embedding keeps its matrix in order.
        store.events.append(s, "user", "Please book a table for Saturday.", role="user")
        assert store.episodes.embed_missing(embedder) == 1
        hits = store.notes.search_semantic("a table booked for Saturday", limit=1)
        assert "table for Saturday" in hits[0].text
        assert store.notes.embeddings([h.id for h in hits]).any()


def test_recall_finds_an_earlier_conversation_and_never_the_one_asking(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = load_settings(environ={"ANNIE_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    with Store(tmp_path / "a.db", embedder=embedder) as store:
        earlier = store.sessions.start()
        store.events.append(earlier, "user", "My daughter Ines is allergic to kiwi.", role="user")
        store.events.append(earlier, "assistant", "Noted, no kiwi for Ines.", role="assistant")
        now = store.sessions.start()
        question = "What is Ines allergic to?"
        store.events.append(now, "user", question, role="user")
        store.episodes.embed_missing(embedder)
        found = recall(store, question, settings, lambda: embedder, session_id=now)
        assert found, "the earlier conversation was not recalled"
        assert all(e.session_id == earlier for e in found)
        assert found[0].kind == "episode" and found[0].speaker == "user"
        # The turn comes with the answer to it, as one excerpt of that conversation.
        assert found[0].text == (
            "You: My daughter Ines is allergic to kiwi.\nAnnie: Noted, no kiwi for Ines."
        )
        assert len(found[0].shows) == 2
        # Asked again later, the same question is no evidence for itself either; what was
        # said about Ines still is.
        later = store.sessions.start()
        again = recall(store, question, settings, lambda: embedder, session_id=later)
        assert again and all(question not in e.text for e in again)
        assert any("allergic to kiwi" in e.text for e in again)


def test_imported_turns_keep_their_speaker_time_and_session(tmp_path: Path) -> None:
    t0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = [
        Said("s1", t0, "Caroline", "I went to a support group yesterday."),
        Said("s1", t0 + timedelta(seconds=30), "Melanie", "That's great to hear!"),
        Said("s2", t0 + timedelta(days=20), "user", "Remind me what Caroline did."),
    ]
    with Store(tmp_path / "a.db") as store:
        done = store.episodes.import_turns(turns, source="talk.jsonl")
        assert (done["sessions"], done["episodes"]) == (2, 3)
        info = store.episodes.info(done["ids"])
        first, second, third = (info[i] for i in done["ids"])
        assert first.session_id == second.session_id != third.session_id
        assert (first.speaker, third.speaker) == ("Caroline", "user")
        hit = store.notes.search_fts("support group")[0]
        assert hit.text == "Caroline: I went to a support group yesterday."
        assert hit.timestamp.startswith("2023-05-08T13:56")
        events = store.events.find(third.session_id)
        assert [(e.kind, e.content) for e in events] == [("user", "Remind me what Caroline did.")]
        assert store.episodes.missing() == 3  # no embedder given: embedded at the next start


def test_a_kill_mid_conversation_loses_no_episode_of_a_logged_turn(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    child = textwrap.dedent(
        f"""
        import os, signal, sys
        from memory.store import Store
        store = Store({str(db)!r})
        s = store.sessions.start()
        for i in range(10_000):
            store.events.append(s, "user", f"turn {{i}} from the user", role="user")
            store.events.append(s, "tool_result", "x" * 200, role="tool")
            store.events.append(s, "assistant", f"answer {{i}}", role="assistant")
            if i == 5:
                print("ready", flush=True)
        """
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.Popen(
        [sys.executable, "-c", child], stdout=subprocess.PIPE, env=env, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with Store(db) as store:
        said = store.events.find(kinds=["user", "assistant"])
        assert len(said) >= 12
        episodes = {i.event_id for i in store.episodes.info(_all_rows(store)).values()}
        assert episodes == {e.id for e in said}
        assert store.all("PRAGMA integrity_check")[0][0] == "ok"


def _all_rows(store: Store) -> list[str]:
    return [f"note-{r['n']}" for r in store.all("SELECT n FROM notes")]


def test_words_asked_to_be_kept_private_never_reach_a_prompt_that_sends_out(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = load_settings(environ={"ANNIE_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    with Store(tmp_path / "a.db", embedder=embedder) as store:
        earlier = store.sessions.start()
        said = [
            ("user", "The bank card arrived in the post today."),
            ("assistant", "Good, the bank card is here."),
            ("user", "Keep this between us: the bank card PIN is 4417."),
            ("assistant", "Understood, the PIN 4417 stays with me."),
            ("user", "Also the bank card needs activating by Friday."),
        ]
        for kind, text in said:
            store.events.append(earlier, kind, text, role=kind)
        store.episodes.embed_missing(embedder)
        rows = store.all("SELECT text, sensitivity FROM notes ORDER BY n")
        assert [r["sensitivity"] for r in rows] == [
            "normal",
            "normal",
            "private",
            "private",  # the answer to private words may repeat them
            "normal",
        ]
        now = store.sessions.start()
        found = recall(
            store, "What is my bank card PIN?", settings, lambda: embedder, session_id=now
        )
        assert any("4417" in e.text for e in found)  # kept for a prompt that sends nothing out
        # A private turn is shown only as itself, never beside another recalled turn.
        beside = {i for e in found for i in e.shows if i != e.id}
        assert beside and not store.provenance.private_among(beside)
        out = with_provenance(store, found, sends_out=True)
        assert out and all("4417" not in e.text for e in out)
