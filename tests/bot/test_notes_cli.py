"""`python -m bot notes add|list` as a user runs them, on a real store in ANNIE_HOME.

What a question recalls from the notes is `memory recall`: tests/bot/test_memory_cli.py.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bot.cli import main
from memory.store import Store
from testkit.cli import bot


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(list(args)) == 0
    found: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return found


def test_notes_from_stdin_are_stored_and_listed_in_order(
    annie_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["notes", "add", "The spare key is under the blue flowerpot by the shed."]) == 0
    assert capsys.readouterr().out.split()[0] == "note-1"
    lines = (
        "Maya's shoe size is 38.\n\nThe plumber's number is 07700 900123.\nMaya lives in Bristol.\n"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    assert main(["notes", "add", "-"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3  # the blank line is no note

    # As a user runs it, in a process of its own.
    shown = bot("notes", "list")
    assert shown.returncode == 0, shown.stderr
    assert [line.split()[0] for line in shown.stdout.splitlines()] == [
        f"note-{i}" for i in range(1, 5)
    ]
    listed = run_json(capsys, "notes", "list", "--json")
    assert [(n["id"], n["text"]) for n in listed] == [
        ("note-1", "The spare key is under the blue flowerpot by the shed."),
        ("note-2", "Maya's shoe size is 38."),
        ("note-3", "The plumber's number is 07700 900123."),
        ("note-4", "Maya lives in Bristol."),
    ]


def test_bad_input_exits_2_and_writes_nothing(
    annie_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (
        ["notes", "add", "   "],
        ["notes", "add", "a note", "--at", "next tuesday"],
    ):
        assert main(args) == 2, args
        assert "error" in capsys.readouterr().err
    with Store(annie_home / "annie.db") as store:
        assert not store.notes.any()
    assert main(["notes", "list"]) == 0
    assert capsys.readouterr().out.strip() == "no notes"
    # Recall moved to `memory recall`: `notes recall` is no longer an action.
    with pytest.raises(SystemExit) as gone:
        main(["notes", "recall", "the boiler"])
    assert gone.value.code == 2
    assert "invalid choice: 'recall'" in capsys.readouterr().err
