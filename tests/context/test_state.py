"""The deterministic state path: routing, seed 000's pending rule, and failure answers."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

import pytest

from config import Settings
from context.state import CANT_READ_TASKS, NOTHING_PENDING, StateResolver
from context.state_rules import match
from memory.store import Store
from tests.context.phrasings import NEAR_MISSES, STATUS_QUESTIONS

NOW = datetime(2026, 9, 1, 10, 30).astimezone()


def test_enough_phrasings() -> None:
    assert len(STATUS_QUESTIONS) >= 40 and len(NEAR_MISSES) >= 40
    assert {i for _, i in STATUS_QUESTIONS} == {
        "approvals", "pending", "list", "schedule", "time", "date", "context",
    }  # fmt: skip


@pytest.mark.parametrize(("text", "intent"), STATUS_QUESTIONS)
def test_status_question_goes_to_the_state_path(
    store: Store, settings: Settings, text: str, intent: str
) -> None:
    result = StateResolver(store, settings, lambda: (1000, 4096)).resolve(text, now=NOW)
    assert result is not None, f"{text!r} should be a state question"
    assert result.intent == intent
    assert result.text and "*" not in result.text and "\n" not in result.text


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_miss_goes_to_the_model(store: Store, settings: Settings, text: str) -> None:
    store.tasks.add("pay the pending invoice", pending="user")
    assert StateResolver(store, settings, lambda: (1, 2)).resolve(text, now=NOW) is None


def test_pending_rule_with_tasks_in_every_state(store: Store, settings: Settings) -> None:
    """pending = tasks where pending != "none" and not done; nothing else counts."""
    expected: set[str] = set()
    for status in ("open", "blocked", "done"):
        for pending in ("none", "user", "assistant", "external"):
            task_id = store.tasks.add(f"{status}-{pending}", pending=pending, status=status)
            if pending != "none" and status != "done":
                expected.add(task_id)
    assert {t.id for t in store.tasks.pending()} == expected
    result = StateResolver(store, settings).resolve("Are there any tasks pending on me?", NOW)
    assert result is not None and result.intent == "pending"
    assert set(result.sources) == expected
    assert result.text == (
        "Two things need you: open-user and blocked-user. "
        "Two things are waiting on me: open-assistant and blocked-assistant. "
        "Two things are waiting on someone else: open-external and blocked-external."
    )
    assert "done" not in result.text and "none" not in result.text


def test_empty_pending_answer(store: Store, settings: Settings) -> None:
    store.tasks.add("nothing waits on this")
    finished = store.tasks.add("already finished", pending="user")
    store.tasks.complete(finished)
    result = StateResolver(store, settings).resolve("Are there any tasks pending on me?", NOW)
    assert result is not None
    assert result.text == NOTHING_PENDING
    # No padding with completed work.
    assert "finished" not in result.text


def test_only_others_pending_never_says_nothing_is_pending(
    store: Store, settings: Settings
) -> None:
    store.tasks.add("draft the reply", pending="assistant")
    result = StateResolver(store, settings).resolve("what's pending?", NOW)
    assert result is not None
    assert result.text == "Nothing is waiting on you. One thing is waiting on me: draft the reply."


def test_many_pending_are_counted_not_all_read_out(store: Store, settings: Settings) -> None:
    store.tasks.add_many({"title": f"form {i}", "pending": "user"} for i in range(25))
    result = StateResolver(store, settings).resolve("what needs me?", NOW)
    assert result is not None
    assert result.text == "25 things need you: form 0, form 1, form 2, and 22 more."


def test_unreadable_task_table_is_never_a_confident_negative(
    store: Store, settings: Settings
) -> None:
    store.tasks.add("call the bank", pending="user")
    assert store.path is not None
    other = sqlite3.connect(store.path)
    other.execute("ALTER TABLE tasks RENAME TO tasks_damaged")
    other.commit()
    other.close()
    resolver = StateResolver(store, settings)
    for text in ("Are there any tasks pending on me?", "what's on my list?"):
        result = resolver.resolve(text, NOW)
        assert result is not None
        assert result.text == CANT_READ_TASKS
        assert result.text != NOTHING_PENDING


def test_no_store_at_all_says_it_cannot_read(settings: Settings) -> None:
    resolver = StateResolver(None, settings, store_error="damaged")
    pending = resolver.resolve("anything pending on me?", NOW)
    assert pending is not None and pending.text == CANT_READ_TASKS
    schedule = resolver.resolve("what's on my schedule today?", NOW)
    assert schedule is not None and schedule.text == "I can't read your schedule right now."
    clock = resolver.resolve("what time is it?", NOW)
    assert clock is not None and clock.text == "It's 10:30 AM."


def test_list_answer_skips_done_work(store: Store, settings: Settings) -> None:
    resolver = StateResolver(store, settings)
    empty = resolver.resolve("what's on my list?", NOW)
    assert empty is not None and empty.text == "Your list is empty."
    store.tasks.add("buy stamps")
    store.tasks.add("renew visa", status="blocked", pending="external")
    store.tasks.complete(store.tasks.add("finished thing"))
    result = resolver.resolve("what's on my list?", NOW)
    assert result is not None
    assert result.text == "You have one open task: buy stamps. One task is blocked: renew visa."


def test_schedule_today_and_tomorrow(store: Store, settings: Settings) -> None:
    resolver = StateResolver(store, settings)
    empty = resolver.resolve("what's on my schedule today?", NOW)
    assert empty is not None and empty.text == "Nothing is scheduled for today."
    today = NOW.replace(hour=15, minute=0)
    rem = store.reminders.add("call mom", today)
    store.reminders.add("dentist", today + timedelta(days=1, minutes=30))
    task = store.tasks.add("send invoice", due=today.replace(hour=17))
    result = resolver.resolve("What's on my schedule today?", NOW)
    assert result is not None
    assert result.text == (
        "Today you have one reminder: call mom at 3 PM. One task is due today: send invoice."
    )
    assert result.sources == [rem, task]
    tomorrow = resolver.resolve("any reminders for tomorrow?", NOW)
    assert tomorrow is not None
    assert tomorrow.text == "Tomorrow you have one reminder: dentist at 3:30 PM."
    # The next thing first, then the ones after it.
    upcoming = resolver.resolve("what's coming up?", NOW)
    assert upcoming is not None
    assert upcoming.text == (
        "Next: call mom, today at 3 PM. After that: send invoice, today at 5 PM; dentist, "
        "tomorrow at 3:30 PM."
    )
    assert upcoming.sources[0] == rem


def test_time_date_and_context(settings: Settings, store: Store) -> None:
    resolver = StateResolver(store, settings, lambda: (13_760, 32_768))
    time_answer = resolver.resolve("what time is it", NOW)
    assert time_answer is not None and time_answer.text == "It's 10:30 AM."
    date_answer = resolver.resolve("what's the date today?", NOW)
    assert date_answer is not None and date_answer.text == "It's Tuesday, September 1, 2026."
    ctx = resolver.resolve("how full is the context?", NOW)
    # "Used" and "left" both said, so the percentage cannot be read the wrong way round.
    assert ctx is not None and ctx.text == "About 42 percent used, 19,008 of 32,768 tokens left."
    unknown = StateResolver(store, settings).resolve("how full is the context?", NOW)
    assert unknown is not None and "can't tell" in unknown.text


def test_a_keyword_only_proposes_the_anchored_rules_decide() -> None:
    # "pending" proposes the intent; no rule allows the rest of the sentence.
    assert match("what did we decide about the pending invoice?") is None
    found = match("pending on me")
    assert found is not None and found.intent == "pending"


def test_latency_is_reported(store: Store, settings: Settings) -> None:
    result = StateResolver(store, settings).resolve("anything pending on me?", NOW)
    assert result is not None and result.latency_ms > 0
