"""A model's answer to a status-like question is held against the records before it is said:
"nothing is pending" with work waiting is replaced by the state path's own answer. Real
SQLite, a scripted model for the session turns."""

from __future__ import annotations

from pathlib import Path

from bot.turn.answers import TO_MODEL
from bot.turn.events import TextDelta, TurnDone
from context.answer_check import HOLD_CHARS, AnswerCheck, Facts, read_facts, status_like
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime

PENDING = "One thing needs you: sign the lease."


def test_a_denial_is_replaced_as_it_streams() -> None:
    check = AnswerCheck(Facts(pending=PENDING))
    said = ""
    for piece in ("You have ", "nothing pend", "ing right now. Anything", " else?"):
        said += check.feed(piece)
        # The sentence that denies pending work is never passed on, not even in part.
        assert "nothing" not in said.lower()
    said += check.flush()
    assert said == f"{PENDING} Anything else?"
    assert check.corrected
    assert check.rewrite("Nothing is pending. Have a nice day!") == f"{PENDING} Have a nice day!"


def test_an_empty_list_claim_is_corrected_and_true_answers_pass() -> None:
    listing = "You have one open task: buy stamps."
    check = AnswerCheck(Facts(open_tasks=listing))
    assert check.rewrite("Your task list is empty.") == listing
    # Nothing pending is true here (no task waits on the user): left as said.
    assert check.rewrite("Nothing is pending right now.") == "Nothing is pending right now."
    # With nothing in the records to deny, text passes through at once, unbuffered.
    idle = AnswerCheck(Facts())
    assert not idle.active and idle.feed("Nothing is pend") == "Nothing is pend"


def test_facts_come_from_the_store(store: Store) -> None:
    assert read_facts(store) == Facts()
    store.tasks.add("buy stamps")
    assert read_facts(store) == Facts("", "You have one open task: buy stamps.")
    store.tasks.add("sign the lease", pending="user")
    facts = read_facts(store)
    assert facts.pending == "One thing needs you: sign the lease."
    assert read_facts(None) == Facts()


def test_only_status_like_questions_are_checked() -> None:
    for text in ("anything on my plate?", "what do I still have to do", "Anything waiting on me?"):
        assert status_like(text), text
    for text in ("tell me a joke", "what is the capital of France", "remind me to call mum"):
        assert not status_like(text), text


async def test_a_model_answer_denying_pending_work_is_not_spoken_as_is(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(tokenizer, ["You have nothing pending right now. Enjoy your day!"])
    runtime = make_runtime(llm, tmp_path)
    try:
        runtime.store.tasks.add("sign the lease", pending="user")
        session = runtime.open_session()
        # As when the state path is unsure: the question goes to the model with the snapshot.
        events = await collect(session, "anything on my plate I need to handle?", decided=TO_MODEL)
        # The prompt carried the snapshot with the pending task.
        assert "sign the lease" in llm.prompts[-1]
        spoken = "".join(e.text for e in events if isinstance(e, TextDelta))
        done = next(e for e in events if isinstance(e, TurnDone))
        assert "nothing pending" not in spoken.lower()
        assert spoken == done.text == f"{PENDING} Enjoy your day!"
        # The conversation keeps what was said, so the next turn does not build on the denial.
        kept = [i.content for i in session.conv.items if i.kind == "assistant"]
        assert kept and "nothing pending" not in kept[-1].lower()
    finally:
        await runtime.close()


async def test_other_answers_stream_untouched(tokenizer: Tokenizer, tmp_path: Path) -> None:
    llm = ScriptedLLM(tokenizer, ["Nothing is pending in a good joke, but here is one."])
    runtime = make_runtime(llm, tmp_path)
    try:
        runtime.store.tasks.add("sign the lease", pending="user")
        session = runtime.open_session()
        events = await collect(session, "tell me a joke", decided=TO_MODEL)
        done = next(e for e in events if isinstance(e, TurnDone))
        assert done.text == "Nothing is pending in a good joke, but here is one."
    finally:
        await runtime.close()


def test_text_with_no_sentence_end_keeps_streaming() -> None:
    # Code or a list has no sentence end for a long while: it is checked and passed on once
    # it outgrows the hold, so a spoken budget downstream can still stop the answer.
    check = AnswerCheck(Facts(pending=PENDING))
    code = "```javascript\nfunction remember(ref) { let kept = [ref, ref, ref]; "
    said = ""
    for _ in range(6):
        said += check.feed(code)
    assert len(said) >= len(code) * 6 - HOLD_CHARS and said.startswith("```javascript")
    assert not check.corrected
