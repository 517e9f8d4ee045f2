"""What is said (`bot.voice.saying`): the stage between the conversation and audio out, fed
frames as a connection feeds it and read back from its queue."""

from __future__ import annotations

from bot.turn.events import AnswerClosed, ReminderEvent, StateAnswer, TextDelta, TurnDone
from bot.turn.inbox import Enough
from bot.voice.audio_out import EndOfAnswer, Flush, Say
from bot.voice.saying import Begin, Saying, SayingOut
from config.settings import SpeechSettings


def _out(saying: Saying) -> list[SayingOut]:
    frames: list[SayingOut] = []
    while not saying.frames.empty():
        frames.append(saying.frames.get_nowait())
    return frames


def _said(frames: list[SayingOut]) -> str:
    return " ".join(f.text for f in frames if isinstance(f, Say))


def test_a_voice_answer_is_said_within_its_budget_and_the_conversation_told_once() -> None:
    saying = Saying(SpeechSettings(spoken_words=60, spoken_sentences=2))
    saying.send(Begin("t1", "voice"))
    for sentence in ("The sea is wide. ", "It is deep. ", "It is blue. ", "It is cold. "):
        saying.send(TextDelta("t1", sentence))
    frames = _out(saying)
    assert _said(frames) == "The sea is wide. It is deep."
    enough = [f for f in frames if isinstance(f, Enough)]
    assert enough == [Enough("t1", "The sea is wide. It is deep.", "budget")]
    # The enough comes after the pieces it keeps, so audio out has them before generation stops.
    assert isinstance(frames[-1], Enough)
    saying.send(AnswerClosed("t1"))
    assert _out(saying) == [EndOfAnswer("t1")]


def test_the_last_piece_waits_for_the_answers_end_and_comes_before_it() -> None:
    saying = Saying(SpeechSettings())
    saying.send(Begin("t1", "text"))
    saying.send(TextDelta("t1", "The answer is three"))
    assert _said(_out(saying)) == ""
    saying.send(AnswerClosed("t1"))
    assert _out(saying) == [Say("t1", "The answer is three"), EndOfAnswer("t1")]


def test_a_flushed_turn_says_nothing_more_and_still_ends() -> None:
    saying = Saying(SpeechSettings())
    saying.send(Begin("t1", "voice"))
    saying.send(TextDelta("t1", "First sentence. Second"))
    assert _said(_out(saying)) == "First sentence."
    saying.send(Flush("t1"))
    saying.send(TextDelta("t1", " sentence. Third one."))
    saying.send(AnswerClosed("t1"))
    assert _out(saying) == [EndOfAnswer("t1")]


def test_a_state_answer_and_a_failed_turn_are_said_whole_in_their_spoken_form() -> None:
    saying = Saying(SpeechSettings(spoken_words=3))
    saying.send(Begin("t1", "voice"))
    answer = StateAnswer(
        "t1", "Tasks: call the bank (task-4).", "tasks", ["task-4"], 1.0, spoken=""
    )
    saying.send(answer)
    assert _said(_out(saying)) == "Tasks: call the bank."
    saying.send(Begin("t2", "voice"))
    saying.send(TurnDone("t2", "Sorry, the model is not answering.", "model", failed=True))
    assert _said(_out(saying)) == "Sorry, the model is not answering."
    # A turn that did not fail says nothing of its TurnDone: its words came as deltas.
    saying.send(Begin("t3", "voice"))
    saying.send(TurnDone("t3", "Done.", "model"))
    assert _out(saying) == []


def test_a_reminder_is_said_by_name_and_events_of_no_turn_say_nothing() -> None:
    saying = Saying(SpeechSettings())
    saying.send(Begin("r1", "reminder"))
    saying.send(ReminderEvent("r1", "Reminder: call the dentist (rem-7).", away=False))
    saying.send(TextDelta("r1", "Not an answer."))
    assert _said(_out(saying)) == "Reminder: call the dentist."
    saying.send(TextDelta("nobody", "Nothing to say. "))
    saying.send(StateAnswer("nobody", "Nothing.", "tasks", [], 1.0))
    assert _out(saying) == []
