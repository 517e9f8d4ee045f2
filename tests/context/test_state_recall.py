"""State path recall: held-out routing, the new intents and answers, and honest failures.

Routing is measured on the held-out half of the labelled set (`testkit.status_set`) with the
real all-MiniLM-L6-v2 model; every answer is read from a real SQLite file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt

from config import Settings
from context.intents import IntentIndex
from context.state import (
    CANT_READ_NOTES,
    CANT_READ_SCHEDULE,
    CANT_READ_TASKS,
    NOTHING_PENDING,
    StateResolver,
)
from context.state_rules import INTENTS
from memory.store import Store
from models import Embedder
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from testkit import status_set

NOW = datetime(2026, 9, 1, 10, 30).astimezone()  # a Tuesday


def _damage(store: Store, table: str) -> None:
    """Another connection renames a table, as a broken migration or a bad copy would."""
    assert store.path is not None
    other = sqlite3.connect(store.path)
    other.execute(f"ALTER TABLE {table} RENAME TO {table}_damaged")
    other.commit()
    other.close()


def test_the_labelled_set_is_large_varied_and_split_deterministically() -> None:
    every = status_set.load()
    status = [i for i in every if i.label != "none"]
    near = [i for i in every if i.label == "none"]
    assert len(status) >= 300 and len(near) >= 300
    assert len({i.text.lower() for i in every}) == len(every)  # no duplicates across halves
    assert {i.label for i in status} == set(INTENTS)
    tune, held = status_set.load("tune"), status_set.load("held_out")
    assert len(tune) + len(held) == len(every)
    assert {i.text for i in tune}.isdisjoint(i.text for i in held)
    # Both halves hold every intent and enough near misses to measure 1%.
    assert {i.label for i in held} == {*INTENTS, "none"}
    assert sum(i.label == "none" for i in held) >= 100
    # Speech slips and fillers are part of the set, not only clean text.
    texts = " ".join(i.text.lower() for i in every)
    assert "tasks spending on me" in texts and "um, so, like" in texts


def test_held_out_routing_meets_the_targets(
    store_e: Store, settings: Settings, index: IntentIndex
) -> None:
    status_set.seed(store_e, NOW)
    held = status_set.load("held_out")
    resolver = StateResolver(store_e, settings, lambda: (13_760, 32_768), intents=index)
    routing = status_set.evaluate(resolver, held, NOW)
    missed = [i.text for i in routing.missed]
    taken = [i.text for i, _ in routing.wrongly_taken]
    assert routing.recall >= 0.97, missed
    assert routing.taken_rate <= 0.01, taken
    # The rules alone, on the same questions, are precise but narrow: the stage adds recall.
    alone = status_set.evaluate(StateResolver(store_e, settings, lambda: (1, 2)), held, NOW)
    assert alone.taken == 0
    assert routing.answered - alone.answered >= 40


def test_the_issue_examples_are_answered_from_state(
    store_e: Store, settings: Settings, index: IntentIndex
) -> None:
    store_e.tasks.add("renew the parking permit", pending="user")
    resolver = StateResolver(store_e, settings, lambda: (13_760, 32_768), intents=index)
    expected = {
        "Do you know what time it is?": "time",
        "tasks spending on me?": "pending",
        "is there anything I need to do": "pending",
        "what day is it today": "date",
        "how much of your memory are you using right now": "context",
        "What do I still need to take care of?": "pending",
        "Is anything blocked?": "blocked",
    }
    for text, intent in expected.items():
        result = resolver.resolve(text, NOW)
        assert result is not None and result.intent == intent, text
    pending = resolver.resolve("um, so, like, is anything pending on me?", NOW)
    assert pending is not None and "renew the parking permit" in pending.text


def test_without_an_embedder_the_rules_still_answer(store: Store, settings: Settings) -> None:
    store.tasks.add("call the bank", pending="user")
    index = IntentIndex(lambda: None)
    resolver = StateResolver(store, settings, intents=index)
    pending = resolver.resolve("tasks spending on me?", NOW)
    assert pending is not None and pending.text == "One thing needs you: call the bank."
    assert resolver.resolve("what's blocked?", NOW) is not None
    # A phrasing only the classifier knows goes to the model, and nothing is embedded.
    assert resolver.resolve("am I busy later", NOW) is None
    assert resolver.resolve("tell me about time travel", NOW) is None
    assert index.embeddings == 0 and not index.warm()


class BrokenEmbedder(Embedder):
    dim = 384

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise RuntimeError("the model file went away")


def test_a_failing_embedder_costs_the_candidates_not_the_turn(
    store: Store, settings: Settings
) -> None:
    store.tasks.add("call the bank", pending="user")
    resolver = StateResolver(store, settings, intents=IntentIndex(BrokenEmbedder))
    assert resolver.resolve("am I busy later", NOW) is None
    pending = resolver.resolve("tasks spending on me?", NOW)
    assert pending is not None and pending.text == "One thing needs you: call the bank."


def test_pending_counts_tasks_and_approvals(store: Store, settings: Settings) -> None:
    resolver = StateResolver(store, settings)
    empty = resolver.resolve("anything pending on me?", NOW)
    assert empty is not None and empty.text == NOTHING_PENDING
    task = store.tasks.add("sign the lease", pending="user")
    approval = store.approvals.request(
        "delete_note", {"note_id": "note-4"}, "s-1", 600, NOW, target="delete the note 'gate'"
    )
    result = resolver.resolve("anything pending on me?", NOW, session_id="s-1")
    assert result is not None
    assert result.text == (
        "One thing waits for your approval: delete the note 'gate'. Say yes or no. "
        "One thing needs you: sign the lease."
    )
    assert result.sources == [approval, task]


def test_blocked_and_waiting_on_others(store: Store, settings: Settings) -> None:
    resolver = StateResolver(store, settings)
    empty = resolver.resolve("is anything blocked?", NOW)
    assert empty is not None
    assert empty.text == "Nothing is blocked, and nothing is waiting on anyone."
    blocked = store.tasks.add("fix the fence", status="blocked")
    refund = store.tasks.add("airline refund", pending="external")
    draft = store.tasks.add("draft the reply", pending="assistant")
    store.tasks.add("mine to do", pending="user")
    result = resolver.resolve("what's waiting on someone else?", NOW)
    assert result is not None and result.intent == "blocked"
    assert result.text == (
        "One task is blocked: fix the fence. "
        "One thing is waiting on someone else: airline refund. "
        "One thing is waiting on me: draft the reply."
    )
    assert result.sources == [blocked, refund, draft]


def test_a_blocked_task_that_waits_on_someone_is_named_once(
    store: Store, settings: Settings
) -> None:
    visa = store.tasks.add("visa appointment", status="blocked", pending="external")
    quote = store.tasks.add("builder's quote", pending="external")
    result = StateResolver(store, settings).resolve("anything stuck?", NOW)
    assert result is not None
    assert result.text == (
        "One task is blocked: visa appointment. "
        "One thing is waiting on someone else: builder's quote."
    )
    assert result.sources == [visa, quote]


def test_schedule_this_week_and_next(store: Store, settings: Settings) -> None:
    resolver = StateResolver(store, settings)
    empty = resolver.resolve("what do I have this week?", NOW)
    assert empty is not None and empty.text == "Nothing is scheduled for this week."
    thursday = store.reminders.add("bins out", NOW.replace(hour=19, minute=0) + timedelta(days=2))
    store.reminders.add("next week's thing", NOW + timedelta(days=8))
    due = store.tasks.add("send the invoice", due=NOW + timedelta(days=4))  # Saturday
    week = resolver.resolve("what do I have this week?", NOW)
    assert week is not None
    assert week.text == (
        "This week you have one reminder: bins out on Thursday, September 3 at 7 PM. "
        "One task is due this week: send the invoice."
    )
    assert week.sources == [thursday, due]
    upcoming = resolver.resolve("what's next?", NOW)
    assert upcoming is not None
    assert upcoming.text == (
        "Next: bins out, on Thursday, September 3 at 7 PM. After that: send the invoice, on "
        "Saturday, September 5 at 10:30 AM; next week's thing, on Wednesday, September 9 at "
        "10:30 AM."
    )


def test_overdue_and_next_with_nothing_scheduled(store: Store, settings: Settings) -> None:
    resolver = StateResolver(store, settings)
    none = resolver.resolve("anything overdue?", NOW)
    assert none is not None and none.intent == "schedule" and none.text == "Nothing is overdue."
    late = store.tasks.add("renew the insurance", due=NOW - timedelta(days=2))
    store.tasks.complete(store.tasks.add("paid the bill", due=NOW - timedelta(days=1)))
    store.tasks.add("later thing", due=NOW + timedelta(days=3))
    overdue = resolver.resolve("what's overdue?", NOW)
    assert overdue is not None
    assert overdue.text == (
        "One thing is overdue: renew the insurance, due on August 30 at 10:30 AM."
    )
    assert overdue.sources == [late]
    # Nothing scheduled ahead: "what's next" still answers, with the first task on the list.
    fresh = StateResolver(Store(), settings)
    assert fresh.store is not None
    first = fresh.store.tasks.add("buy stamps")
    nxt = fresh.resolve("what's next?", NOW)
    assert nxt is not None and nxt.text == "Nothing is scheduled. First on your list: buy stamps."
    assert nxt.sources == [first]


def test_what_annie_remembers_comes_from_the_notes(store: Store, settings: Settings) -> None:
    dentist = store.notes.add("The dentist appointment is on the 14th at 9:30.")
    store.notes.add("The plumber comes on Tuesday.")
    resolver = StateResolver(store, settings)
    result = resolver.resolve("what do you remember about the dentist?", NOW)
    assert result is not None and result.intent == "remember"
    assert result.text == (
        "About the dentist, I have one note: The dentist appointment is on the 14th at 9:30."
    )
    assert result.sources == [dentist]
    asked_of_notes = resolver.resolve("what notes do you have on my boat?", NOW)
    assert asked_of_notes is not None
    assert asked_of_notes.text == "I have nothing noted about your boat."
    # Only the notes that hold every word of the name, not every note sharing one.
    store.notes.add("The booking for the plumber is on Friday.")
    flight = store.notes.add("Flight booking reference QX7P2L.")
    booking = resolver.resolve("what do you remember about the booking reference", NOW)
    assert booking is not None and booking.sources == [flight]
    # No note about it, and it may be general knowledge: the model's question.
    assert resolver.resolve("what do you know about black holes?", NOW) is None
    # The user's own things are not general knowledge, and what they said is asked of the notes:
    # "nothing noted" is the answer, never the model's guess.
    for text, said in {
        "what do you know about my allergies?": "your allergies",
        "what did I mention about the black holes talk": "the black holes talk",
        "remind me what I told you about my landlord": "your landlord",
    }.items():
        owned = resolver.resolve(text, NOW)
        assert owned is not None and owned.text == f"I have nothing noted about {said}.", text


def test_what_annie_remembers_about_the_user_is_her_newest_notes(
    store: Store, settings: Settings
) -> None:
    resolver = StateResolver(store, settings)
    empty = resolver.resolve("what do you remember about me?", NOW)
    # The notes table was read: "nothing yet" is true, not a guess.
    assert empty is not None and empty.text == "I haven't noted anything about you yet."
    tea = store.notes.add("I prefer tea to coffee.")
    ana = store.notes.add("My sister Ana lives in Porto.")
    about = resolver.resolve("what do you remember about me", NOW)
    assert about is not None and about.intent == "remember" and about.sources == [ana, tea]
    assert about.text.startswith("About you, my newest notes say: My sister Ana lives in Porto")


def test_remember_with_embeddings_finds_the_note(
    store_e: Store, settings: Settings, index: IntentIndex
) -> None:
    ids = status_set.seed(store_e, NOW)
    resolver = StateResolver(store_e, settings, intents=index)
    result = resolver.resolve("um, what do you remember about my sister?", NOW)
    assert result is not None and result.intent == "remember"
    about_sister = next(n for n in status_set.NOTES if "sister" in n)
    sister = ids["notes"][status_set.NOTES.index(about_sister)]
    assert sister in result.sources and sister not in result.text  # ids are for the page
    assert result.text.startswith("About your sister,")


def test_time_date_and_memory_use(store: Store, settings: Settings, index: IntentIndex) -> None:
    resolver = StateResolver(store, settings, lambda: (13_760, 32_768), intents=index)
    weekend = resolver.resolve("is it the weekend?", NOW)
    assert weekend is not None and weekend.text == "It's Tuesday, September 1, 2026."
    late = resolver.resolve("what hour is it", NOW)
    assert late is not None and late.text == "It's 10:30 AM."
    memory = resolver.resolve("how much memory are you using", NOW)
    assert memory is not None
    assert memory.text == "About 42 percent used, 19,008 of 32,768 tokens left."


def test_unreadable_state_says_it_cannot_tell(store: Store, settings: Settings) -> None:
    store.tasks.add("call the bank", pending="user")
    store.notes.add("The dentist is on Friday.")

    def broken_meter() -> tuple[int, int]:
        raise RuntimeError("meter gone")

    resolver = StateResolver(store, settings, broken_meter)
    meter = resolver.resolve("how full is your context?", NOW)
    assert meter is not None and meter.text.startswith("I can't tell")
    _damage(store, "reminders")
    week = resolver.resolve("what do I have this week?", NOW)
    assert week is not None and week.text == CANT_READ_SCHEDULE
    _damage(store, "tasks")
    for text in ("is anything blocked?", "what's waiting on someone else?"):
        answer = resolver.resolve(text, NOW)
        assert answer is not None and answer.text == CANT_READ_TASKS
    _damage(store, "notes")
    notes = resolver.resolve("what notes do you have about the dentist?", NOW)
    assert notes is not None and notes.text == CANT_READ_NOTES
    assert "nothing" not in notes.text.lower()


def test_no_store_never_answers_nothing(settings: Settings, index: IntentIndex) -> None:
    resolver = StateResolver(None, settings, store_error="damaged", intents=index)
    for text in ("tasks spending on me?", "is anything blocked?", "what do I have this week?"):
        answer = resolver.resolve(text, NOW)
        assert answer is not None and answer.text.startswith("I can't read"), text
    # "What do you know about X" without notes to read is the model's, not "nothing".
    assert resolver.resolve("what do you know about the dentist?", NOW) is None


def test_runtime_sessions_share_one_candidate_stage(
    store: Store, settings: Settings, embedder: Embedder
) -> None:
    from bot.runtime import Runtime

    runtime = Runtime(settings, store=store, embedder=embedder)
    first, second = runtime.answer_chain().resolver, runtime.answer_chain().resolver
    assert first is not None and second is not None
    assert first.intents is second.intents is runtime.intents
    found = first.resolve("am I busy later", NOW)
    assert found is not None and found.intent == "schedule"
    # No embedding model loaded yet: the state path loads it at the first question the rules
    # alone cannot place, so every front end routes the same from its first question on.
    bare = Runtime(settings, store=store)
    resolver = bare.answer_chain().resolver
    assert resolver is not None and not bare.has_embedder
    assert resolver.resolve("what time is it", NOW) is not None and not bare.has_embedder
    found = resolver.resolve("am I busy later", NOW)
    assert found is not None and found.intent == "schedule" and bare.has_embedder


async def test_a_session_answers_from_state_and_sends_the_rest_to_the_model(
    tokenizer: Tokenizer, embedder: Embedder, tmp_path: Path
) -> None:
    from bot.turn.events import StateAnswer, TurnDone
    from tests.bot.conftest import collect, make_runtime

    llm = ScriptedLLM(tokenizer, ["Time travel is a staple of fiction."])
    runtime = make_runtime(llm, tmp_path, embedder=embedder)
    session = runtime.open_session()
    busy = await collect(session, "Am I busy later?")
    state = next(e for e in busy if isinstance(e, StateAnswer))
    assert state.intent == "schedule" and state.text == "Nothing is scheduled."
    memory = await collect(session, "How much of your memory are you using right now?")
    used = session.usage()
    meter = next(e for e in memory if isinstance(e, StateAnswer))
    assert meter.intent == "context" and f"of {used.window:,} tokens" in meter.text
    travel = await collect(session, "um, so, like, tell me about time travel")
    done = next(e for e in travel if isinstance(e, TurnDone))
    assert done.path == "model" and done.text == "Time travel is a staple of fiction."
    assert len(llm.prompts) == 1
    await runtime.close()
