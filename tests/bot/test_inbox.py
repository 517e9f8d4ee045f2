"""The conversation driven through its one inbox: turns in order, each closed on the outbox;
controls that act at once, in the middle of a turn or before it begins; idle-time work that
waits for a voiced answer's first sound. A real session over a real SQLite file; the model
is scripted (its real-engine path is tested in `test_session_loop.py`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.turn.events import AnswerClosed, Event, TextDelta, TurnDone
from bot.turn.inbox import Amend, Enough, Interrupt, Sounding, UserMessage
from bot.turn.session import Session
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import make_runtime

STORY = "Once upon a time there was a dragon who loved tea. " * 10


async def until_closed(session: Session, turn_id: str, seen: list[Event]) -> list[Event]:
    """The outbox's events up to and with `turn_id`'s `AnswerClosed` (all kept in `seen`)."""
    while True:
        event = await asyncio.wait_for(session.outbox.get(), 60)
        seen.append(event)
        if isinstance(event, AnswerClosed) and event.turn_id == turn_id:
            return seen


async def until_text(session: Session) -> list[Event]:
    """The outbox's events up to and with the answer's first text."""
    seen: list[Event] = []
    while not any(isinstance(e, TextDelta) for e in seen):
        seen.append(await asyncio.wait_for(session.outbox.get(), 60))
    return seen


def done_of(events: list[Event], turn_id: str) -> TurnDone:
    return next(e for e in events if isinstance(e, TurnDone) and e.turn_id == turn_id)


async def test_turns_are_taken_in_order_each_closed_on_the_outbox(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(tokenizer, ["First answer.", "Second answer."], token_delay_s=0.01)
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    try:
        session.send(UserMessage("One?", "t1"))
        session.send(UserMessage("Two?", "t2"))  # sent before the first has an answer
        events = await until_closed(session, "t2", [])
        closed = [i for i, e in enumerate(events) if isinstance(e, AnswerClosed)]
        of_first = [i for i, e in enumerate(events) if getattr(e, "turn_id", "") == "t1"]
        of_second = [i for i, e in enumerate(events) if isinstance(e, TextDelta | TurnDone)
                     and e.turn_id == "t2"]  # fmt: skip
        assert [events[i].turn_id for i in closed] == ["t1", "t2"]  # type: ignore[attr-defined]
        # Every event of the first turn comes before its close, and the second's after it.
        assert max(of_first) == closed[0] and min(of_second) > closed[0]
        assert done_of(events, "t1").text == "First answer."
        assert done_of(events, "t2").text == "Second answer."
        assert [i.content for i in session.conv.items if i.kind == "assistant"] == [
            "First answer.",
            "Second answer.",
        ]
    finally:
        await runtime.close()


async def test_an_interrupt_acts_at_once_and_keeps_what_was_heard(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    # The story stalls after its first sentence until the call is cancelled: only the
    # interrupt can end it, however slow the machine.
    llm = ScriptedLLM(tokenizer, [STORY], stall_after_tokens=13)
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    try:
        session.send(UserMessage("Tell me a story.", "story", voiced=True))
        seen = await until_text(session)
        session.send(Interrupt("story", "Once upon"))  # a control: not behind the turn
        events = await until_closed(session, "story", seen)
        done = done_of(events, "story")
        assert done.interrupted and done.text == "Once upon"
        last = session.conv.items[-1]
        assert last.content == "Once upon" and last.interrupted
        # Far less was generated than the story: generation stopped at the interrupt.
        streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert len(streamed) < len(STORY) / 2
    finally:
        await runtime.close()


async def test_a_turn_interrupted_before_it_began_says_nothing(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(tokenizer, ["A slow first answer, word by word.", "Never said."],
                      token_delay_s=0.02)  # fmt: skip
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    try:
        session.send(UserMessage("First?", "first"))
        session.send(UserMessage("Second?", "second"))
        session.send(Interrupt("second", ""))  # the user cut in before it was answered
        events = await until_closed(session, "second", [])
        assert done_of(events, "first").text == "A slow first answer, word by word."
        second = done_of(events, "second")
        assert second.interrupted and second.text == ""
        assert not [e for e in events if isinstance(e, TextDelta) and e.turn_id == "second"]
        # An interrupt for a turn that has ended changes nothing.
        session.send(Interrupt("first", "A slow"))
        assert session.conv.items[-1].content == ""
    finally:
        await runtime.close()


async def test_enough_and_amend_keep_what_the_front_end_used(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(tokenizer, [STORY, "The tide is high at six. And low at noon."],
                      token_delay_s=0.02)  # fmt: skip
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    try:
        session.send(UserMessage("Tell me a story.", "story"))
        seen = await until_text(session)
        session.send(Enough("story", "Once upon a time there was a dragon who loved tea."))
        events = await until_closed(session, "story", seen)
        done = done_of(events, "story")
        assert not done.interrupted
        assert done.text == "Once upon a time there was a dragon who loved tea."

        # The next answer was complete when the user cut in: keep what they heard.
        session.send(UserMessage("When is the tide?", "tide"))
        await until_closed(session, "tide", [])
        session.send(Amend("tide", "The tide is high at six.", "model"))
        amended = await asyncio.wait_for(session.outbox.get(), 10)
        assert isinstance(amended, TurnDone) and amended.interrupted
        assert (amended.turn_id, amended.text) == ("tide", "The tide is high at six.")
        assert session.conv.items[-1].content == "The tide is high at six."
    finally:
        await runtime.close()


async def test_idle_work_waits_for_a_voiced_answer_to_sound(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(tokenizer, ["Sure."])
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    try:
        session.send(UserMessage("Hello.", "hello", voiced=True))
        await until_closed(session, "hello", [])
        idle = asyncio.ensure_future(session.wait_idle())
        for _ in range(20):  # many turns of the loop: nothing it waits on can come
            await asyncio.sleep(0)
        assert not idle.done()  # held: the answer has not sounded yet
        session.send(Sounding())
        await asyncio.wait_for(idle, 60)
    finally:
        await runtime.close()
