"""Reminders in the table: firing, announcing, snooze, done, cancel, timers, and the upgrade
of reminders written before they could fire."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlite_utils import Database

from memory.db import NotFoundError
from memory.migrations import migration_names, migrations
from memory.rows import from_iso, utc_now
from memory.store import Store


def test_a_reminder_fires_once_then_waits_to_be_said(tmp_path: Path) -> None:
    with Store(tmp_path / "annie.db") as store:
        now = utc_now()
        due = store.reminders.add("call the dentist", now - timedelta(seconds=1))
        later = store.reminders.add("water the plants", now + timedelta(hours=1))
        assert store.reminders.next_due() == store.reminders.get(due).due  # type: ignore[union-attr]

        fired = store.reminders.fire_due(now)
        assert [r.id for r in fired] == [due]
        assert fired[0].status == "fired" and fired[0].fired_at is not None
        assert store.reminders.fire_due(now) == []  # fires once
        assert [r.id for r in store.reminders.unannounced()] == [due]
        assert store.reminders.next_due() == store.reminders.get(later).due  # type: ignore[union-attr]

        store.reminders.mark_announced([due], "sess-4")
        row = store.reminders.get(due)
        assert row is not None and row.status == "announced" and row.announced_in == "sess-4"
        assert store.reminders.unannounced() == []
        assert store.reminders.last_announced("sess-4") == row
        assert store.reminders.last_announced("sess-5") is None
        # Still open until the user says done.
        assert [r.id for r in store.reminders.open()] == [due, later]


def test_snooze_done_and_cancel(tmp_path: Path) -> None:
    with Store(tmp_path / "annie.db") as store:
        rid = store.reminders.add("stretch", utc_now() - timedelta(seconds=1))
        store.reminders.fire_due()
        store.reminders.mark_announced([rid], "sess-1")

        before = utc_now()
        row = store.reminders.snooze(rid, 10)
        assert row.status == "scheduled" and row.fired_at is None and row.announced_at is None
        delay = (from_iso(row.due) - before).total_seconds()
        assert 599 <= delay <= 601

        assert store.reminders.done(rid).status == "done"
        assert store.reminders.open() == []
        with pytest.raises(ValueError, match="done already"):
            store.reminders.snooze(rid, 5)

        other = store.reminders.add("book the dentist appointment", utc_now() + timedelta(days=1))
        assert [r.id for r in store.reminders.matching("the dentist")] == [other]
        assert [r.id for r in store.reminders.matching("dentists")] == [other]
        assert store.reminders.matching("the plumber") == []
        assert store.reminders.cancel(other).status == "cancelled"
        assert store.reminders.get(other) is not None  # kept, marked
        assert [r.status for r in store.reminders.find()] == ["done", "cancelled"]

        with pytest.raises(NotFoundError):
            store.reminders.done("rem-99")
        with pytest.raises(ValueError):
            store.reminders.snooze("task-1", 5)
        with pytest.raises(ValueError):
            store.reminders.snooze(other, 0)


def test_a_timer_is_a_reminder_with_a_duration() -> None:
    with Store() as store:
        start = utc_now()
        rid = store.reminders.add_timer(300, "tea")
        row = store.reminders.get(rid)
        assert row is not None
        assert (row.kind, row.duration_s, row.text) == ("timer", 300, "5 minute timer: tea")
        assert 299 <= (from_iso(row.due) - start).total_seconds() <= 301
        with pytest.raises(ValueError):
            store.reminders.add_timer(0)


def test_every_write_tells_the_listeners() -> None:
    with Store() as store:
        calls: list[int] = []
        store.reminders.listeners.append(lambda: calls.append(1))
        rid = store.reminders.add("a", utc_now())
        store.reminders.fire_due()
        store.reminders.mark_announced([rid], "sess-1")
        store.reminders.snooze(rid, 1)
        store.reminders.cancel(rid)
        assert len(calls) == 5


def test_reminders_written_before_firing_existed_are_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    names = migration_names()
    db = Database(path)
    with db.atomic():
        migrations.apply(db, stop_before="m005_reminder_firing")
    db.execute(
        "INSERT INTO reminders (text, due, status, created_at) VALUES "
        "('old one', '2026-01-01T09:00:00.000000+00:00', 'scheduled',"
        " '2025-12-31T00:00:00.000000+00:00')"
    )
    db.close()
    with Store(path) as store:
        assert store.schema_version() == names
        row = store.reminders.get("rem-1")
        assert row is not None and (row.status, row.kind, row.fired_at) == (
            "scheduled",
            "reminder",
            None,
        )
        assert [r.id for r in store.reminders.fire_due()] == ["rem-1"]
        with pytest.raises(Exception, match="CHECK"):
            store.conn.execute("UPDATE reminders SET status = 'snoozed'")
