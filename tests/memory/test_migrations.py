"""Schema migrations from a blank file and from every earlier version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlite_utils import Database

from memory.migrations import migration_names, migrations
from memory.store import Store

EXPECTED_TABLES = {
    "sessions",
    "events",
    "notes",
    "notes_fts",
    "tasks",
    "reminders",
    "private_version",
    "approvals",
    "checkpoints",
    "turn_metrics",
    "_sqlite_migrations",
}


def test_names_are_numbered_in_order() -> None:
    names = migration_names()
    assert names == sorted(names)
    assert [n[:4] for n in names] == [f"m{i:03d}" for i in range(1, len(names) + 1)]


def test_blank_file_gets_every_table(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    with Store(path) as store:
        assert store.schema_version() == migration_names()
    db = Database(path)
    assert set(db.table_names()) >= EXPECTED_TABLES
    assert db["tasks"].columns_dict == {
        "n": int,
        "title": str,
        "status": str,
        "pending": str,
        "due": str,
        "source": str,
        "created_at": str,
        "updated_at": str,
    }
    assert set(db["approvals"].columns_dict) == {
        "n", "tool", "params", "requester", "status", "created_at", "expires_at",
        "resolved_at", "result", "target",
    }  # fmt: skip
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    Store(path).close()
    with Store(path) as store:
        assert store.schema_version() == migration_names()
        rows = store.conn.execute("SELECT count(*) FROM _sqlite_migrations").fetchone()
        assert rows[0] == len(migration_names())


def test_the_file_refuses_a_bad_pending_value(tmp_path: Path) -> None:
    with Store(tmp_path / "annie.db") as store, pytest.raises(sqlite3.IntegrityError):
        store.conn.execute(
            "INSERT INTO tasks (title, pending, created_at, updated_at)"
            " VALUES ('x', 'maybe', '', '')"
        )


@pytest.mark.parametrize("stop", range(1, len(migration_names())))
def test_upgrade_from_each_earlier_version(tmp_path: Path, stop: int) -> None:
    """Build the file as version `stop` left it, write data, then open it with this version."""
    path = tmp_path / "annie.db"
    names = migration_names()
    db = Database(path)
    with db.atomic():
        migrations.apply(db, stop_before=names[stop])
    assert [m.name for m in migrations.applied(db)] == names[:stop]
    # Data written by the old version: a note (before the FTS index existed, at version 1),
    # a session with an event, and a pending task.
    db.execute(
        "INSERT INTO notes (kind, source, text, created_at) VALUES "
        "('note', 'old', 'Invoice INV-20931 was paid in March', '2026-01-01T00:00:00.000000+00:00')"
    )
    db.execute("INSERT INTO sessions (started_at) VALUES ('2026-01-01T00:00:00.000000+00:00')")
    db.execute(
        "INSERT INTO events (session_n, kind, content, created_at) VALUES "
        "(1, 'user', 'hello from the old version', '2026-01-01T00:00:00.000000+00:00')"
    )
    db.execute(
        "INSERT INTO tasks (title, pending, created_at, updated_at) VALUES "
        "('renew passport', 'user', '2026-01-01T00:00:00.000000+00:00',"
        " '2026-01-01T00:00:00.000000+00:00')"
    )
    db.close()

    with Store(path) as store:
        assert store.schema_version() == names
        assert [h.text for h in store.notes.search_fts("INV-20931")] == [
            "Invoice INV-20931 was paid in March"
        ]
        event = store.events.get("ev-1")
        assert event is not None and event.content == "hello from the old version"
        assert [t.title for t in store.tasks.pending()] == ["renew passport"]
        store.metrics.record("sess-1", "turn-1", {"stt": 120.0, "llm": 800.0}, "model")
        assert store.metrics.find()[0].total_ms == 920.0
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_state_path_queries_use_the_partial_indexes(tmp_path: Path) -> None:
    from memory.work import PENDING_WHERE

    with Store(tmp_path / "annie.db") as store:
        store.tasks.add_many({"title": f"t{i}", "pending": "user"} for i in range(50))
        store.conn.execute("ANALYZE")
        plans = {
            "pending": f"SELECT * FROM tasks WHERE pending = 'user' AND {PENDING_WHERE} "
            "ORDER BY n LIMIT 3",
            "due": "SELECT * FROM tasks WHERE status != 'done' AND due >= '2026' AND due < '2027'",
        }
        used = {
            name: " ".join(str(r[-1]) for r in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            for name, sql in plans.items()
        }
        assert "tasks_pending_open" in used["pending"]
        assert "tasks_due_open" in used["due"]
