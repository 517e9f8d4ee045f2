"""`python -m bot tasks` and `python -m bot ask` as a user runs them, in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from bot.commands.ask import Answer, Asker
from bot.turn.answers import TO_MODEL, Decision
from config import Settings
from memory.store import Store
from testkit.cli import bot


def test_tasks_add_list_done(annie_home: Path) -> None:
    added = bot("tasks", "add", "call the plumber", "--pending", "user", "--due", "2026-09-02")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("task-1  [open]  call the plumber  waiting on user")
    assert bot("tasks", "add", "water plants").returncode == 0
    listed = bot("tasks", "list", "--json")
    rows = json.loads(listed.stdout)
    assert [(r["id"], r["title"], r["pending"]) for r in rows] == [
        ("task-1", "call the plumber", "user"),
        ("task-2", "water plants", "none"),
    ]
    done = bot("tasks", "done", "task-1")
    assert done.returncode == 0 and "[done]" in done.stdout
    assert "call the plumber" not in bot("tasks", "list").stdout
    assert "call the plumber" in bot("tasks", "list", "--all").stdout
    assert (annie_home / "annie.db").is_file()


def test_tasks_bad_input_exits_2_and_writes_nothing() -> None:
    for args in (
        ("tasks", "add", "x", "--pending", "maybe"),
        ("tasks", "add", "x", "--due", "next tuesday"),
        ("tasks", "add", "   "),
        ("tasks", "done", "task-99"),
        ("tasks", "done", "banana"),
    ):
        result = bot(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert "error" in result.stderr and "Traceback" not in result.stderr
    assert json.loads(bot("tasks", "list", "--json").stdout) == []


def test_ask_state_path() -> None:
    bot("tasks", "add", "sign the lease", "--pending", "user")
    plain = bot("ask", "Are there any tasks pending on me?")
    assert plain.returncode == 0
    assert plain.stdout.strip() == "One thing needs you: sign the lease."
    as_json = json.loads(bot("ask", "Are there any tasks pending on me?", "--json").stdout)
    assert as_json["path"] == "state" and as_json["sources"] == ["task-1"]
    assert set(as_json) == {"answer", "path", "sources", "latency_ms"}
    assert as_json["latency_ms"] < 1000


def test_ask_stdin_prints_one_json_line_per_question() -> None:
    # Status questions only: the model path of `ask` is exercised by the conversation
    # tests; here the point is one process, one JSON line per question, blank lines skipped.
    questions = [
        "what time is it?",
        "what's the date today?",
        "anything pending on me?",
        "",
        "what's on my list?",
    ]
    result = bot("ask", "-", stdin="\n".join(questions) + "\n")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a["path"] for a in lines] == ["state", "state", "state", "state"]
    assert lines[0]["answer"].startswith("It's ") and lines[1]["answer"].startswith("It's ")
    assert lines[2]["answer"] == "Nothing needs you right now."
    assert lines[3]["answer"] == "Your list is empty."


def test_ask_with_a_damaged_database_says_it_cannot_read(annie_home: Path) -> None:
    db = annie_home / "annie.db"
    db.write_bytes(b"garbage, not sqlite " * 500)
    result = bot("ask", "Are there any tasks pending on me?")
    assert result.returncode == 0
    assert result.stdout.strip() == "I can't read your task list right now."
    assert str(db) in result.stderr and "Traceback" not in result.stderr
    listed = bot("tasks", "list")
    assert listed.returncode == 1
    assert str(db) in listed.stderr and "Move it aside" in listed.stderr
    assert "Traceback" not in listed.stderr
    # Nothing was overwritten.
    assert db.read_bytes() == b"garbage, not sqlite " * 500


def test_asker_sends_near_misses_to_the_model_hook(settings: Settings) -> None:
    """`Asker` takes the model path as a plain callable; near misses must reach it."""
    asked: list[str] = []

    def model(text: str, decision: Decision) -> Answer:
        assert decision is TO_MODEL
        asked.append(text)
        return Answer("from the model", "model")

    asker = Asker(settings, model=model)
    try:
        state = asker.ask("Are there any tasks pending on me?")
        near = asker.ask("what did we decide about the pending invoice?")
    finally:
        asker.close()
    assert state.path == "state" and state.answer == "Nothing needs you right now."
    assert near.path == "model" and near.answer == "from the model"
    assert asked == ["what did we decide about the pending invoice?"]
    with Store.open(settings) as store:
        kinds = [e.kind for e in store.events.find()]
    assert kinds == ["user", "state_answer", "user"]
