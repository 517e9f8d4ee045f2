"""`python -m bot notes add|list|recall` as a user runs them, on a real store in ANNIE_HOME."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bot.cli import main
from context.recall import IN_WINDOW_BONUS
from memory.store import Store
from testkit.cli import bot


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(list(args)) == 0
    found: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return found


def test_notes_from_stdin_are_listed_and_a_question_recalls_the_right_one_first(
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
    found = run_json(capsys, "notes", "recall", "What size footwear does Maya take?", "--json")
    assert [f["id"] for f in found][:2] == ["note-2", "note-4"]
    assert found[0]["certain"] is True
    # Nothing says what she is allergic to: her notes come back, marked as only related.
    found = run_json(capsys, "notes", "recall", "Is Maya allergic to anything?", "--json")
    assert found and not any(f["certain"] for f in found)
    scores = [float(str(f["score"])) for f in found]
    assert scores == sorted(scores, reverse=True)
    found = run_json(capsys, "notes", "recall", "where did we hide the door key?", "--json")
    assert found[0]["id"] == "note-1"
    assert found[0]["text"] == "The spare key is under the blue flowerpot by the shed."
    assert run_json(capsys, "notes", "recall", "Tell me a joke.", "--json") == []


def test_last_tuesday_picks_the_tuesday_note_over_a_newer_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 2026-03-27 is a Friday: "last Tuesday" is the 24th.
    tuesday = (
        "The boiler is making a banging noise when the heating comes on.",
        "2026-03-24T10:00",
    )
    newer = ("The boiler pressure dropped to one bar, topped it up.", "2026-03-26T09:00")
    for text, at in (tuesday, newer):
        assert main(["notes", "add", text, "--at", at]) == 0
    capsys.readouterr()
    now = ("--now", "2026-03-27T19:00")
    found = run_json(capsys, "notes", "recall", "what's up with the boiler?", "--json", *now)
    assert sorted(str(f["text"]) for f in found) == sorted([newer[0], tuesday[0]])
    asked = "What did I tell you last Tuesday about the boiler?"
    found = run_json(capsys, "notes", "recall", asked, "--json", *now)
    assert [f["text"] for f in found] == [tuesday[0], newer[0]]
    assert str(found[0]["at"]).startswith("2026-03-24")
    assert float(str(found[0]["score"])) > IN_WINDOW_BONUS > float(str(found[1]["score"]))
    # Asked a week later, "last Tuesday" holds no note: both come back, neither lifted by time.
    later = ("--now", "2026-04-03T19:00")
    found = run_json(capsys, "notes", "recall", asked, "--json", *later)
    assert len(found) == 2 and all(float(str(f["score"])) < IN_WINDOW_BONUS for f in found)


def test_bad_input_exits_2_and_writes_nothing(
    annie_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (
        ["notes", "add", "   "],
        ["notes", "add", "a note", "--at", "next tuesday"],
        ["notes", "recall", "  "],
        ["notes", "recall", "the boiler", "--now", "soon"],
    ):
        assert main(args) == 2, args
        assert "error" in capsys.readouterr().err
    with Store(annie_home / "annie.db") as store:
        assert not store.notes.any()
    assert main(["notes", "list"]) == 0
    assert capsys.readouterr().out.strip() == "no notes"
