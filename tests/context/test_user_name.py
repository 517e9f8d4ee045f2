"""What Annie calls the user: asked by an anchored rule, read from the newest saying in the
notes or the user's own words, never guessed; told in one session, known in the next.

Real SQLite files, the real state path, and the real session loop with the scripted model on
the real tokenizer.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from bot.turn.events import StateAnswer, TurnDone
from config import Settings
from context.state import StateResolver
from context.state_answers import NO_NAME
from context.state_rules import route
from context.user_name import name_in
from memory.store import Store
from models import Embedder, Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime

NOW = datetime(2026, 3, 12, 10, 0).astimezone()


@pytest.mark.parametrize(
    "question",
    [
        "What do you call me?",
        "What's my name?",
        "Do you know my name?",
        "Hey Annie, what name do I go by?",
        "What should you call me?",
        "Do you remember my name?",
        "remind me what my name is",
        "what did I tell you my name was",
    ],
)
def test_name_questions_take_the_state_path(question: str) -> None:
    routed = route(question)
    assert routed.how == "rule" and routed.match is not None and routed.match.name


@pytest.mark.parametrize(
    "other",
    [
        "what is my name on the lease",
        "who am I",
        "call me Sam",  # a saying, not a question
        "what's your name",
        "what's my sister's name",
    ],
)
def test_other_sentences_are_not_name_questions(other: str) -> None:
    found = route(other).match
    assert found is None or not found.name


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My name is Samuel.", "Samuel"),
        ("Actually, call me Sam", "Sam"),
        ("my name's priya", "Priya"),
        ("I go by Mary Ann these days", "Mary Ann"),
        ("User prefers to be called Jo.", "Jo"),
        ("Don't call me Samuel, call me Sam.", "Sam"),
        ("call me back later", None),
        ("call me when you land", None),
        ("Please don't call me Sammy.", None),
        ("what's my name?", None),
    ],
)
def test_a_name_is_read_from_what_was_said(text: str, name: str | None) -> None:
    assert name_in(text) == name


def test_the_newest_saying_stands_and_none_is_never_a_guess(
    store: Store, settings: Settings
) -> None:
    resolver = StateResolver(store, settings)
    empty = resolver.resolve("What do you call me?", now=NOW)
    assert empty is not None and empty.text == NO_NAME and empty.sources == []
    store.notes.add("My name is Samuel.", source="model")
    store.notes.add("Call me back about the boiler.", source="model")  # names nobody
    newer = store.notes.add("The user prefers to be called Sam.", source="model")
    answer = resolver.resolve("what's my name", now=NOW)
    assert answer is not None and answer.intent == "remember"
    assert answer.text.startswith("I call you Sam: you told me ")
    assert answer.sources == [newer]


async def test_told_in_one_session_known_in_the_next(
    tmp_path: Path, tokenizer: Tokenizer, embedder: Embedder
) -> None:
    llm = ScriptedLLM(tokenizer, ["Nice to meet you, Ines."], n_ctx=8192)
    runtime = make_runtime(llm, tmp_path, window=8192, embedder=embedder)
    first = runtime.open_session()
    await collect(first, "Hi! Please call me Ines from now on.")
    await runtime.close()

    second_llm = ScriptedLLM(tokenizer, [], n_ctx=8192)  # the model must not be called
    runtime = make_runtime(second_llm, tmp_path, window=8192, embedder=embedder)
    second = runtime.open_session()
    events = await collect(second, "Do you remember what to call me?")
    (answer,) = [e for e in events if isinstance(e, StateAnswer)]
    (done,) = [e for e in events if isinstance(e, TurnDone)]
    assert done.path == "state" and not done.failed
    assert answer.text.startswith("I call you Ines: you told me ")
    (said,) = runtime.store.events.find(first.id, kinds=["user"])
    assert len(answer.sources) == 1
    assert runtime.store.episodes.info(answer.sources)[answer.sources[0]].event_id == said.id
    await runtime.close()
