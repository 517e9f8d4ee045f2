"""The next-session loader on a real SQLite file: budgets, crash rebuilds, merged checkpoints."""

from __future__ import annotations

from pathlib import Path

from bot.tools.registry import default_registry
from compaction.briefing import build_briefing, previous_session
from compaction.checkpoint import Checkpoint
from memory.store import Store
from models import Tokenizer


def test_no_previous_session_gives_an_empty_briefing(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = Store(tmp_path / "annie.db")
    current = store.sessions.start()
    briefing = build_briefing(store, budget=750, count=tokenizer.count, current_session_id=current)
    assert briefing.text == "" and briefing.tokens == 0 and not briefing.rebuilt_from_log


def test_a_crash_after_tier2_merges_the_checkpoint_with_the_later_log(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    store = Store(tmp_path / "annie.db")
    sid = store.sessions.start()
    early = Checkpoint(
        goal="plan the birthday",
        corrections=["actually my sister's name is Ana, not Anna"],
        summary="We chose a jazz theme.",
        covers=["ev-1", "ev-20"],
        turns=10,
    )
    ckpt = store.checkpoints.save(sid, 2, early.to_json(), early.summary, [])
    store.events.append(sid, "user", "The venue reference is QX-7731.")
    store.events.append(sid, "assistant", "Noted.")
    store.events.append(sid, "tool_call", '{"text": "Cake from Rosa\'s"}', name="save_note")
    current = store.sessions.start()

    # A crashed session's tool calls are read through the tools' own metadata.
    prev = previous_session(store, current, default_registry().protects())
    assert prev.rebuilt_from_log and prev.checkpoint_id == ckpt
    assert prev.checkpoint.corrections == early.corrections  # from the tier-2 checkpoint
    assert "QX-7731" in prev.checkpoint.ids  # from the log after it
    assert prev.checkpoint.notes == ["Cake from Rosa's"]

    briefing = build_briefing(store, budget=750, count=tokenizer.count, current_session_id=current)
    for needle in ("ended unexpectedly", "We chose a jazz theme.", early.corrections[0], "QX-7731"):
        assert needle in briefing.text
    assert ckpt in briefing.source_ids


def test_the_briefing_stays_within_its_budget_most_important_first(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    store = Store(tmp_path / "annie.db")
    sid = store.sessions.start()
    cp = Checkpoint(
        goal="plan the birthday",
        corrections=["actually my sister's name is Ana, not Anna"],
        facts=[f"My cousin number {i} lives in town {i}." for i in range(30)],
        summary="We planned a party.",
    )
    store.checkpoints.save(sid, 3, cp.to_json(), cp.summary, [])
    store.tasks.add("Order the cake", pending="user")
    note = store.notes.add("The bakery on Elm Street closes at six.")
    current = store.sessions.start()
    small = build_briefing(store, budget=60, count=tokenizer.count, current_session_id=current)
    assert 0 < small.tokens <= 60 and small.dropped > 0
    assert small.text.startswith("Last conversation (")
    assert "Summary: We planned a party." in small.text
    big = build_briefing(store, budget=750, count=tokenizer.count, current_session_id=current)
    assert big.tokens <= 750
    assert "Correction: actually my sister's name is Ana, not Anna" in big.text
    assert "Order the cake" in big.text
    # Notes are their own section, never a text marker a reader would parse back.
    assert big.notes == ["The bakery on Elm Street closes at six."] and note in big.source_ids
    assert "The bakery" not in big.text


def test_a_small_budget_keeps_the_last_exchange_a_state_answer_included(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    # At a 4,096 window the briefing has under 100 tokens: the last thing said survives it,
    # ahead of a long summary, whether the session closed cleanly or was killed.
    store = Store(tmp_path / "annie.db")
    for tier3 in (True, False):
        sid = store.sessions.start()
        store.events.append(sid, "user", "Remind me to water the tomatoes in bed four.")
        store.events.append(sid, "assistant", "I'll remind you tomorrow morning.")
        asked = store.events.append(sid, "user", "Are there any tasks pending on me?")
        answer = store.events.append(sid, "state_answer", "One task is pending on you: cake.")
        if tier3:
            cp = Checkpoint(summary="We talked about the garden and the party. " * 8)
            store.checkpoints.save(sid, 3, cp.to_json(), cp.summary, [asked, answer])
        current = store.sessions.start()
        b = build_briefing(store, budget=60, count=tokenizer.count, current_session_id=current)
        assert b.tokens <= 60 and b.session_id == sid, b.text
        assert "Annie answered: One task is pending on you: cake." in b.text, b.text
        assert answer in b.source_ids
        assert b.text.count("said last") <= 1, b.text


def test_a_turn_with_tool_rounds_briefs_the_users_words_and_the_final_answer(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    # Annie's words are logged once per round: a preamble before the call, the answer after.
    store = Store(tmp_path / "annie.db")
    for tier3 in (True, False):
        sid = store.sessions.start()
        asked = store.events.append(sid, "user", "Which tasks are waiting on me?")
        first = store.events.append(sid, "assistant", "Let me look.")
        store.events.append(sid, "tool_call", "{}", name="list_tasks")
        store.events.append(sid, "tool_result", "1 task: cake", name="list_tasks")
        answer = store.events.append(sid, "assistant", "One: order the cake.")
        if tier3:
            cp = Checkpoint()
            store.checkpoints.save(sid, 3, cp.to_json(), "", [asked, first, answer])
        current = store.sessions.start()
        b = build_briefing(store, budget=750, count=tokenizer.count, current_session_id=current)
        # A session killed mid-way has its first request as its goal, which says the same.
        said = "User said last: " if tier3 else "Goal: "
        assert f"{said}Which tasks are waiting on me?" in b.text, b.text
        assert "Annie answered: One: order the cake." in b.text, b.text
        assert "Let me look." not in b.text and answer in b.source_ids


def test_the_briefing_names_the_day_ahead_from_reminders_and_the_calendar(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    from datetime import datetime, timedelta

    from memory.calendar import Calendar

    now = datetime(2026, 3, 12, 9, 0).astimezone()
    tomorrow = now + timedelta(days=1)
    ics = tmp_path / "home.ics"
    ics.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n"
        f"BEGIN:VEVENT\r\nUID:dentist@t\r\nSUMMARY:Dentist\r\nDTSTART:{now:%Y%m%d}T150000\r\n"
        f"DTEND:{now:%Y%m%d}T160000\r\nEND:VEVENT\r\n"
        f"BEGIN:VEVENT\r\nUID:far@t\r\nSUMMARY:Conference\r\n"
        f"DTSTART:{now + timedelta(days=5):%Y%m%d}T090000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    store = Store(tmp_path / "annie.db")
    reminder = store.reminders.add("call the landlord", tomorrow.replace(hour=10))
    briefing = build_briefing(
        store, budget=750, count=tokenizer.count, calendar=Calendar([ics]), now=now
    )
    assert "Calendar today at 3 PM: Dentist" in briefing.text
    assert "Reminder tomorrow at 10 AM: call the landlord" in briefing.text
    assert "Conference" not in briefing.text  # five days off: not the day ahead
    assert {"dentist@t", reminder} <= set(briefing.source_ids)
    # A calendar that cannot be read is said, never briefed as an empty day.
    broken = build_briefing(
        store,
        budget=750,
        count=tokenizer.count,
        calendar=Calendar([tmp_path / "gone.ics"]),
        now=now,
    )
    assert "The user's calendar could not be read" in broken.text
    assert "call the landlord" in broken.text
