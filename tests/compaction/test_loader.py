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
