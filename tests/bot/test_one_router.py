"""`ask` and a live session route a question the same way: both decide through the runtime's
chain of answerers with the same stages loaded (the embedding stage included, loaded at the
first question that needs it). The whole labelled status set goes through `ask` and through a
live session; every question takes the same path in both."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.commands.ask import Answer, Asker
from bot.runtime import Runtime
from bot.turn.answers import Answered, Decision
from bot.turn.events import StateAnswer, TextDelta, TurnDone
from config import load_settings
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from testkit.status_set import load
from tests.bot.conftest import collect


async def test_ask_and_a_live_session_take_the_same_path_for_every_labelled_question(
    annie_home: Path, tokenizer: Tokenizer
) -> None:
    settings = load_settings(context={"window": 4096})
    labelled = load("all")
    to_model: list[str] = []

    def model(text: str, decision: Decision) -> Answer:
        to_model.append(text)
        return Answer("from the model", "model")

    def ask_all() -> dict[str, str]:
        # As `python -m bot ask -` runs: its own event loop, one question a line.
        asker = Asker(settings, model=model)
        try:
            return {item.text: asker.ask(item.text).path for item in labelled}
        finally:
            asker.close()

    by_ask = await asyncio.to_thread(ask_all)

    runtime = Runtime(settings, llm=ScriptedLLM(tokenizer, lambda prompt: "From the model."))
    try:
        session = runtime.open_session()
        by_session = {}
        for item in labelled:
            decision = await session.chain.decide(item.text, session.id)
            by_session[item.text] = "state" if isinstance(decision, Answered) else "model"
        # The embedding stage ran in the live session as in `ask`: it loaded the model itself.
        assert runtime.has_embedder
        # And a turn in the session follows its chain: a status question and a near miss.
        status = next(i.text for i in labelled if i.label == "pending")
        near = next(i.text for i in labelled if i.label == "none")
        state_turn = await collect(session, status)
        assert any(isinstance(e, StateAnswer) for e in state_turn)
        model_turn = await collect(session, near)
        assert any(isinstance(e, TextDelta) for e in model_turn)
        assert [e.path for e in model_turn if isinstance(e, TurnDone)] == ["model"]
    finally:
        await runtime.close()

    differ = {q: (by_ask[q], by_session[q]) for q in by_ask if by_ask[q] != by_session[q]}
    assert differ == {}
    assert sorted(to_model) == sorted(q for q, path in by_ask.items() if path == "model")
    # Both answered most status questions from state (the figure itself is `bench state`'s).
    status_questions = [i.text for i in labelled if i.label != "none"]
    from_state = sum(by_ask[q] == "state" for q in status_questions)
    assert from_state / len(status_questions) > 0.9
