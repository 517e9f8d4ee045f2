"""The checkpoint's record of the work, by rules: plan, blockers, attempts, failures, times.

Pure rules over log entries, the merge of two checkpoints, an old checkpoint read from a real
SQLite file, and the retry guard's reading of a real event log.
"""

from __future__ import annotations

import re
from pathlib import Path

from compaction.attempts import Attempt, earlier_failure
from compaction.briefing import build_briefing
from compaction.checkpoint import ATTEMPTS_CAP, PLAN_CAP, Checkpoint, merge, render
from compaction.protected import LogEntry, extract, plan_sentences
from memory.store import Store

SAID = "2026-12-01T10:00:00+00:00"
ARGS = {"to": "marta@example.org", "subject": "Lease"}
ARGS_JSON = '{"to": "marta@example.org", "subject": "Lease"}'
ERROR = "error: the mail server refused marta@example.org (550 no such user)"


def _call(n: int, name: str, args: dict[str, str], call_id: str) -> LogEntry:
    return LogEntry(f"ev-{n}", "tool_call", "", name, args, call_id, at=SAID)


def _result(n: int, name: str, text: str, call_id: str, ok: bool = True) -> LogEntry:
    return LogEntry(f"ev-{n}", "tool_result", text, name, {}, call_id, ok, SAID)


def _session() -> list[LogEntry]:
    return [
        LogEntry(
            "ev-1",
            "user",
            "First email Marta the lease, then book the van. I'm blocked on the bank's transfer.",
        ),
        _call(2, "send_email", ARGS, "c1"),
        _result(3, "send_email", ERROR, "c1", ok=False),
        _call(4, "load_tool_group", {"group": "web"}, "c2"),
        _result(5, "load_tool_group", "loaded web", "c2"),
        _call(6, "create_task", {"title": "Book the van", "due": "2026-12-04"}, "c3"),
        _result(7, "create_task", "created task-4", "c3"),
        LogEntry("ev-8", "assistant", "I'll remind you on Thursday.", at=SAID),
    ]


def test_rules_read_the_plan_blockers_attempts_failures_and_times() -> None:
    cp = extract(_session(), {"create_task": "task"})
    assert cp.plan == ["First email Marta the lease, then book the van."]
    assert cp.blockers == ["I'm blocked on the bank's transfer."]
    [failure] = cp.failures
    assert (failure.tool, failure.arguments, failure.error, failure.id) == (
        "send_email",
        ARGS_JSON,
        ERROR,
        "ev-3",
    )
    # Loading a group is plumbing, not an attempt at the user's work.
    assert [(a.tool, a.outcome) for a in cp.attempts] == [
        ("send_email", "failed"),
        ("create_task", "ok"),
    ]
    assert cp.commitment_times["Book the van"] == {"said": SAID, "due": "2026-12-04"}
    assert cp.commitment_times["I'll remind you on Thursday."] == {"said": SAID}
    text = render(cp)
    assert f"- send_email {ARGS_JSON} failed (ev-3): {ERROR}" in text
    # One heading per day the commitments were made on; the minute where it changes.
    assert "Commitments (made on 2026-12-01):" in text
    assert re.search(r"^- Book the van \((?:at 10:00 UTC; )?due 2026-12-04\)$", text, re.M)
    assert "10:00 UTC" in text and text.count("2026-12-01") == 1
    assert "- create_task" in text and text.count("send_email") == 1  # shown once, as failed
    assert failure.failure_line() in cp.protected_items()


def test_a_plan_needs_a_next_step_and_a_blocker_needs_its_words() -> None:
    assert plan_sentences("First of all, thanks for the help.") == []
    assert plan_sentences("First I'll pack. Then we drive to Porto.") == [
        "First I'll pack. Then we drive to Porto."
    ]
    assert plan_sentences("The plan is to leave on Friday.") == ["The plan is to leave on Friday."]
    cp = extract([LogEntry("ev-1", "user", "I waited for ages. We're waiting on the plumber.")])
    assert cp.blockers == ["We're waiting on the plumber."]


def test_merge_keeps_failures_and_times_and_settles_a_call_that_then_worked() -> None:
    earlier = extract(_session(), {"create_task": "task"})
    later = extract(
        [
            _call(20, "create_task", {"title": "Book the van", "due": "2026-12-06"}, "c9"),
            _result(21, "create_task", "updated task-4", "c9"),
            LogEntry("ev-22", "user", "First call the bank, then the van people."),
        ],
        {"create_task": "task"},
    )
    later.commitment_times["Book the van"]["said"] = "2026-12-02T08:00:00+00:00"
    merged = merge(earlier, later)
    assert [f.id for f in merged.failures] == ["ev-3"]  # an unrelated later span keeps it
    # The commitment keeps when it was first made; the due time the user moved is the new one.
    assert merged.commitment_times["Book the van"] == {"said": SAID, "due": "2026-12-06"}
    assert merged.plan[-1] == "First call the bank, then the van people."

    # The same call, key order aside, succeeding later settles the failure.
    worked = extract(
        [
            _call(30, "send_email", {"subject": "Lease", "to": "marta@example.org"}, "c1"),
            _result(31, "send_email", "sent", "c1"),
        ]
    )
    settled = merge(merged, worked)
    assert settled.failures == []
    assert settled.attempts[-1].outcome == "ok" and settled.attempts[-1].id == "ev-31"

    # Only the newest plans and attempts are carried.
    many = Checkpoint(
        plan=[f"First step {i}, then step {i + 1}." for i in range(9)],
        attempts=[Attempt("web_search", f'{{"query": "q{i}"}}', "ok", f"ev-{i}") for i in range(9)],
    )
    capped = merge(Checkpoint(), many)
    assert len(capped.plan) == PLAN_CAP and len(capped.attempts) == ATTEMPTS_CAP
    assert capped.attempts[-1].id == "ev-8"


def test_a_checkpoint_stored_before_these_fields_existed_still_loads(tmp_path: Path) -> None:
    # The fields a checkpoint had before plan, blockers, attempts, failures and times, plus
    # one nobody knows: exactly what an older release stored.
    old = {
        "goal": "Plan the party",
        "decisions": ["the trio plays"],
        "commitments": ["I'll remind you about the cake"],
        "corrections": ["actually it is Ana, not Anna"],
        "facts": [],
        "open_questions": [],
        "pending_tasks": [],
        "approvals": [],
        "notes": [],
        "ids": ["QX-7731"],
        "summary": "We planned the party.",
        "covers": ["ev-1", "ev-9"],
        "turns": 3,
        "written_by": "an older release",
    }
    cp = Checkpoint.from_json(old)
    assert cp.corrections == ["actually it is Ana, not Anna"] and cp.turns == 3
    assert (cp.plan, cp.blockers, cp.attempts, cp.failures) == ([], [], [], [])
    assert cp.commitment_times == {}
    assert "- I'll remind you about the cake" in render(cp)
    assert merge(cp, extract(_session())).failures[0].id == "ev-3"

    store = Store(tmp_path / "annie.db")
    session_id = store.sessions.start()
    store.events.append(session_id, "user", "Let's plan the party.")
    store.checkpoints.save(session_id, 3, old, old["summary"], [])
    briefing = build_briefing(store, budget=750, count=lambda text: len(text.split()))
    assert "Correction: actually it is Ana, not Anna" in briefing.text
    assert "Promised: I'll remind you about the cake" in briefing.text
    store.close()


def test_the_guard_reads_a_failure_from_the_log_until_the_user_asks_again(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "annie.db")
    sid = store.sessions.start()

    def call(turn: str, args: str, result: str, meta: dict[str, object]) -> str:
        store.events.append(sid, "tool_call", args, turn_id=turn, name="send_email", call_id="c1")
        return store.events.append(
            sid, "tool_result", result, turn_id=turn, name="send_email", call_id="c1", meta=meta
        )

    assert earlier_failure(store, sid, "send_email", ARGS) is None
    failed = call("t1", ARGS_JSON, ERROR, {"ok": False})
    found = earlier_failure(store, sid, "send_email", {"subject": "Lease", "to": ARGS["to"]})
    assert found is not None and (found.id, found.error) == (failed, ERROR)
    assert earlier_failure(store, sid, "send_email", {**ARGS, "to": "m@example.org"}) is None
    # A refusal logged since says nothing new: the original failure still stands.
    call("t2", ARGS_JSON, "error: not run again", {"ok": False, "not_run": "repeats"})
    assert earlier_failure(store, sid, "send_email", ARGS) is not None
    store.events.append(sid, "user", "Please send it to Marta.", turn_id="t3")
    assert earlier_failure(store, sid, "send_email", ARGS) is not None
    store.events.append(sid, "user", "The server is back, try again.", turn_id="t4")
    assert earlier_failure(store, sid, "send_email", ARGS) is None
    # A run after that which worked settles it for good.
    call("t5", ARGS_JSON, "sent", {"ok": True})
    assert earlier_failure(store, sid, "send_email", ARGS) is None
    assert earlier_failure(store, "", "send_email", ARGS) is None
    store.close()
