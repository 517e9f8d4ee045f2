"""The store's records on a real SQLite file: sessions, events, tasks, reminders, approvals,
checkpoints, turn metrics and the work index."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.db import NotFoundError
from memory.store import Store


def test_events_are_append_only_whole_and_ordered(store: Store) -> None:
    sid = store.sessions.start({"front_end": "test"})
    big = "x" * 200_000  # a tool result is stored whole, however large
    ids = [
        store.events.append(sid, "user", "what's on my list?", turn_id="t1", role="user", tokens=7),
        store.events.append(
            sid, "tool_call", {"name": "list_tasks", "arguments": {}}, turn_id="t1"
        ),
        store.events.append(sid, "tool_result", big, turn_id="t1", name="list_tasks", call_id="c1"),
        store.events.append(sid, "assistant", "Two tasks.", turn_id="t1", role="assistant"),
    ]
    assert len(set(ids)) == 4
    result = store.events.get(ids[2])
    assert result is not None and result.content == big and result.call_id == "c1"
    assert [e.id for e in store.events.find(sid)] == ids
    assert [e.kind for e in store.events.find(sid, kinds=["tool_result"])] == ["tool_result"]
    assert [e.id for e in store.events.find(since=ids[1])] == ids[2:]
    assert [e.id for e in store.events.find(sid, limit=2, newest_first=True)] == ids[:1:-1]
    assert store.events.find(turn_id="t1")[0].tokens == 7


def test_event_for_unknown_session_is_refused(store: Store) -> None:
    with pytest.raises(NotFoundError, match="sess-99"):
        store.events.append("sess-99", "user", "hi")
    with pytest.raises(ValueError, match="bad event kind"):
        store.events.append(store.sessions.start(), "User Message", "hi")


def test_sessions_and_last_session(store: Store) -> None:
    first = store.sessions.start({"n": 1})
    store.sessions.end(first)
    second = store.sessions.start()
    last = store.sessions.last(exclude=second)
    assert last is not None and last.id == first and last.ended_at is not None
    assert last.meta == {"n": 1}
    newest = store.sessions.last()
    assert newest is not None and newest.id == second


def test_tasks_lifecycle_and_validation(store: Store) -> None:
    t = store.tasks.add("file taxes", pending="user", due="2026-04-15")
    row = store.tasks.get(t)
    assert row is not None and row.pending == "user" and row.status == "open"
    assert row.due is not None and row.due.startswith("2026-04-1")
    done = store.tasks.complete(t)
    assert done.status == "done" and done.pending == "none"
    assert store.tasks.pending() == []
    with pytest.raises(ValueError, match="pending must be one of"):
        store.tasks.add("x", pending="maybe")
    with pytest.raises(ValueError, match="not an ISO date"):
        store.tasks.add("x", due="next tuesday")
    with pytest.raises(NotFoundError, match="task-99"):
        store.tasks.complete("task-99")
    with pytest.raises(ValueError, match="not a task id"):
        store.tasks.complete("banana")
    assert [r.title for r in store.tasks.find()] == ["file taxes"]


def test_ids_are_never_reused_after_delete(store: Store) -> None:
    a = store.notes.add("first")
    store.notes.delete(a)
    b = store.notes.add("second")
    assert a != b
    with pytest.raises(NotFoundError):
        store.notes.delete(a)


def test_reminders_between(store: Store) -> None:
    base = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
    early = store.reminders.add("stand-up", base)
    store.reminders.add("dentist", base + timedelta(days=1))
    hits = store.reminders.between(base - timedelta(hours=1), base + timedelta(hours=1))
    assert [r.id for r in hits] == [early]


def test_approvals_keep_exact_params_and_expire(store: Store) -> None:
    params = {"note_id": "note-7", "nested": {"a": [1, 2.5, "ü"]}}
    now = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
    a = store.approvals.request("delete_note", params, "sess-1", ttl_s=60, now=now)
    row = store.approvals.get(a)
    assert row is not None and row.params == params and row.status == "pending"
    assert [r.id for r in store.approvals.pending(now + timedelta(seconds=59))] == [a]
    assert store.approvals.pending(now + timedelta(seconds=61)) == []
    assert row.expired(now + timedelta(seconds=61))
    store.approvals.resolve(a, "declined")
    with pytest.raises(ValueError, match="is declined"):
        store.approvals.resolve(a, "approved")


def test_checkpoints_and_turn_metrics(store: Store) -> None:
    sid = store.sessions.start()
    assert store.checkpoints.latest(sid) is None
    store.checkpoints.save(sid, 2, {"goal": "plan trip"}, "older", ["ev-1"])
    c = store.checkpoints.save(sid, 2, {"goal": "plan trip", "decisions": ["train"]}, "s", ["ev-2"])
    latest = store.checkpoints.latest(sid)
    assert latest is not None and latest.id == c and latest.data["decisions"] == ["train"]
    assert latest.tail_event_ids == ["ev-2"]
    store.metrics.record(sid, "t1", {"state": 0.4}, "state")
    assert store.metrics.find(sid)[0].path == "state"


def test_work_index_lanes(store: Store) -> None:
    now = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
    active = store.tasks.add("write report")
    blocked = store.tasks.add("ship release", status="blocked", pending="external")
    mine = store.tasks.add("approve budget", pending="user", due=now + timedelta(hours=2))
    done = store.tasks.add("old thing", pending="user")
    store.tasks.complete(done)
    rem = store.reminders.add("call mom", now + timedelta(hours=1))
    index = store.projections.work_index(now=now)
    assert [t.id for t in index.active] == [active, mine]
    assert [t.id for t in index.blocked] == [blocked] and index.blocked_count == 1
    assert [t.id for t in index.pending_user] == [mine]
    assert [t.id for t in index.pending_others] == [blocked]
    assert [s.id for s in index.next_scheduled] == [rem, mine]
    assert done not in index.source_ids()
    assert index.updated_at is not None and index.as_of.startswith("2026-09-01T12:00")


def test_in_memory_store() -> None:
    with Store() as s:
        s.tasks.add("x", pending="assistant")
        assert s.tasks.counts()["assistant"] == 1
        assert s.path_label == ":memory:"


def test_store_on_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    from memory.db import StoreError

    with pytest.raises(StoreError, match="is a folder"):
        Store(tmp_path)


def test_recent_notes_newest_first(store: Store) -> None:
    ids = [store.notes.add(f"note {i}") for i in range(4)]
    store.notes.delete(ids[3])
    assert [n.id for n in store.notes.recent(limit=2)] == [ids[2], ids[1]]


def test_turn_metrics_total_is_the_measured_total_when_stages_overlap(store: Store) -> None:
    session = store.sessions.start()
    # The first token falls inside the model stage; summing would count it twice.
    stages = {"state_ms": 0.4, "model_ms": 900.0, "llm_first_token": 300.0, "total_ms": 950.0}
    store.metrics.record(session, "turn-1", stages, "model")
    store.metrics.record(session, "turn-2", {"stt": 120.0, "tts": 80.0}, "voice/state")
    totals = [m.total_ms for m in store.metrics.find(session)]
    assert totals == [950.0, 200.0]


def test_a_bad_row_in_a_batch_leaves_nothing_behind(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    with Store(path) as store:
        store.tasks.add("kept")
        with pytest.raises(ValueError, match="pending must be one of"):
            store.tasks.add_many([{"title": "first"}, {"title": "second", "pending": "later"}])
        with pytest.raises(ValueError, match="a note needs some text"):
            store.notes.add_many([{"text": "fine"}, {"text": "  "}])
    with Store(path) as reopened:
        assert [t.title for t in reopened.tasks.find()] == ["kept"]
        assert reopened.notes.recent() == []


def test_a_write_inside_a_write_commits_with_it(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    with Store(path) as store:
        sid = store.sessions.start()
        with pytest.raises(RuntimeError, match="abandon"), store.write():
            store.events.append(sid, "user", "one")
            store.tasks.add("two")
            raise RuntimeError("abandon the whole write")
        with store.write():
            store.events.append(sid, "user", "three")
            store.tasks.add("four")
    with Store(path) as reopened:
        assert [e.content for e in reopened.events.find(sid)] == ["three"]
        assert [t.title for t in reopened.tasks.find()] == ["four"]
