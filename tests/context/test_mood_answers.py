"""How the user is feeling: routed by an anchored rule, read back by the state path with when
it was said, briefed next session for the model alone, never said unprompted.

Real SQLite files, the real state path, and the real session loop with the scripted model on
the real tokenizer.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.turn.events import ReminderEvent, StateAnswer, TurnDone
from config import Settings
from context.state import StateResolver
from context.state_answers import NO_MOOD, said_when
from context.state_rules import route
from memory.mood import Feeling
from memory.store import Store
from models import Embedder, Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime

# A Thursday at 10:00 local time.
NOW = datetime(2026, 3, 12, 10, 0).astimezone()


@pytest.mark.parametrize(
    "question",
    [
        "How am I feeling lately?",
        "how have I been feeling",
        "Hey Annie, how have I been feeling recently?",
        "How was I feeling yesterday?",
        "What mood was I in last week?",
        "How did I say I was feeling?",
        "What's my mood been like lately?",
        "Do you know how I'm feeling?",
    ],
)
def test_mood_questions_take_the_state_path(question: str) -> None:
    routed = route(question)
    assert routed.how == "rule" and routed.match is not None and routed.match.mood


@pytest.mark.parametrize(
    "other",
    [
        "how are you feeling",  # about Annie
        "how am I doing on my tasks",
        "I'm feeling great today",  # a statement, not a question
        "what do you remember about my sister",
    ],
)
def test_other_sentences_are_not_mood_questions(other: str) -> None:
    found = route(other).match
    assert found is None or not found.mood


@pytest.mark.parametrize(
    ("said", "spoken"),
    [
        (NOW.replace(hour=8), "this morning"),
        (NOW - timedelta(days=1, hours=-9), "yesterday evening"),
        (NOW - timedelta(days=2, hours=-9), "on Tuesday evening"),
        (NOW - timedelta(days=3, hours=-4), "on Monday afternoon"),
        (NOW - timedelta(days=30), "on February 10"),
    ],
)
def test_when_it_was_said_is_put_as_a_person_would(said: datetime, spoken: str) -> None:
    from memory.rows import to_iso

    assert said_when(to_iso(said), NOW) == spoken


def test_the_state_path_reads_the_mood_back_or_says_there_is_none(
    store: Store, settings: Settings
) -> None:
    resolver = StateResolver(store, settings)
    empty = resolver.resolve("How am I feeling lately?", now=NOW)
    assert empty is not None and empty.text == NO_MOOD and empty.sources == []
    earlier, last = store.sessions.start(), store.sessions.start()
    monday = NOW - timedelta(days=3, hours=-4)
    tuesday = NOW - timedelta(days=2, hours=-9)
    store.moods.record(earlier, "ev-2", Feeling("great", "feel", "I feel great"), monday)
    mood_id = store.moods.record(
        last, "ev-5", Feeling("stressed about my move", "be", "I'm stressed about my move"), tuesday
    )
    answer = resolver.resolve("how have I been feeling", now=NOW)
    assert answer is not None and answer.intent == "remember"
    assert answer.text == (
        "On Tuesday evening you said you were stressed about your move. "
        "Before that, on Monday afternoon, you said you felt great."
    )
    assert answer.sources[0] == mood_id


async def test_a_session_records_the_mood_and_the_next_one_reads_it_back(
    tmp_path: Path, tokenizer: Tokenizer, embedder: Embedder
) -> None:
    llm = ScriptedLLM(tokenizer, ["Rest well tonight.", "Noted."], n_ctx=8192)
    runtime = make_runtime(llm, tmp_path, window=8192, embedder=embedder)
    first = runtime.open_session()
    await collect(first, "I'm exhausted after the move.")
    await collect(first, "My brother is exhausted too.")  # someone else's: not recorded
    (mood,) = runtime.store.moods.latest(limit=5)
    user_events = runtime.store.events.find(first.id, kinds=["user"])
    assert mood.event_id == user_events[0].id and mood.feeling == "exhausted after the move"
    assert mood.words == "I'm exhausted after the move." and mood.session_id == first.id
    await runtime.close()

    # Next session: the briefing carries it for the model, marked as not to be raised.
    second_llm = ScriptedLLM(tokenizer, [], n_ctx=8192)  # the model must not be called
    runtime = make_runtime(second_llm, tmp_path, window=8192, embedder=embedder)
    second = runtime.open_session()
    briefing = second.conv.prefix.briefing
    assert 'Only if asked how they feel: they said "I\'m exhausted after the move."' in briefing
    # A reminder falling due is said without it.
    runtime.store.reminders.add("call the landlord", datetime.now().astimezone())
    said = [e for e in await second.announce() if isinstance(e, ReminderEvent)]
    assert said and "landlord" in said[0].text and "exhausted" not in said[0].text
    events = await collect(second, "How am I feeling lately?")
    (answer,) = [e for e in events if isinstance(e, StateAnswer)]
    (done,) = [e for e in events if isinstance(e, TurnDone)]
    assert done.path == "state" and not done.failed
    assert "you said you were exhausted after the move" in answer.text
    assert answer.text.startswith("This ") or answer.text.startswith("Last night")
    assert answer.sources == [mood.id]
    await runtime.close()
