"""Failure behavior: a killed writer loses nothing committed; damaged or locked files give a
clear error that names the file, never a stack trace."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory.db import StoreError
from memory.store import Store

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent(
    """
    import sys
    from memory.store import Store

    store = Store(sys.argv[1])
    sid = store.sessions.start()
    print(sid, flush=True)
    i = 0
    while True:
        content = f"result {i} " + "y" * 3000
        event_id = store.events.append(sid, "tool_result", content, turn_id=str(i))
        # Printed only after append_event returned, i.e. after COMMIT.
        print(event_id, i, flush=True)
        i += 1
    """
)


def test_sigkill_between_transactions_loses_no_committed_event(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    session_id = proc.stdout.readline().strip()
    committed: list[tuple[str, int]] = []
    while len(committed) < 150:
        event_id, number = proc.stdout.readline().split()
        committed.append((event_id, int(number)))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    with Store(path) as store:
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for event_id, i in committed:
            event = store.events.get(event_id)
            assert event is not None, f"{event_id} was committed but is gone"
            assert event.content == f"result {i} " + "y" * 3000
            assert event.session_id == session_id
        stored = store.events.find(session_id)
        # Everything stored is whole and in order; at most the in-flight one is missing.
        assert [e.turn_id for e in stored] == [str(n) for n in range(len(stored))]
        assert len(stored) >= len(committed)
        # The file is writable again after the crash.
        store.events.append(session_id, "system", "recovered")


def test_corrupt_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    path.write_bytes(b"this is not an sqlite database at all " * 200)
    with pytest.raises(StoreError) as info:
        Store(path)
    message = str(info.value)
    assert str(path) in message
    assert "not a database" in message
    assert "Move it aside" in message
    assert info.value.path == str(path)


def test_truncated_header_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    Store(path).close()
    data = path.read_bytes()
    path.write_bytes(b"\x00" * 16 + data[16:])
    with pytest.raises(StoreError, match=r"annie\.db"):
        Store(path)


def test_file_locked_by_another_process_at_open(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE other (x)")
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO other VALUES (1)")
    try:
        with pytest.raises(StoreError) as info:
            Store(path, timeout_s=0.2)
        assert str(path) in str(info.value)
        assert "locked" in str(info.value) and "another Annie" in str(info.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_write_while_locked_is_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    with Store(path, timeout_s=0.2) as store:
        sid = store.sessions.start()
        kept = store.events.append(sid, "user", "before the lock")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreError, match=r"annie\.db: database is locked"):
                store.events.append(sid, "user", "during the lock")
            # Reads still work under WAL while another process writes.
            assert store.events.get(kept) is not None
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        store.events.append(sid, "user", "after the lock")
        assert [e.content for e in store.events.find(sid)] == ["before the lock", "after the lock"]


def test_an_unreadable_task_table_reaches_the_model_as_unreadable_not_as_empty(
    tmp_path: Path,
) -> None:
    from context.snapshot import safe_snapshot

    path = tmp_path / "annie.db"
    store = Store(path)
    store.tasks.add("Send the invoice", pending="user")
    assert "Send the invoice" in safe_snapshot(store).text
    other = sqlite3.connect(path)
    other.execute("DROP TABLE tasks")
    other.commit()
    other.close()
    text = safe_snapshot(store).text
    assert "cannot be read right now" in text
    assert "Nothing needs" not in text
    store.close()
