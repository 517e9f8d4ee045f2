"""`python -m bot route` as a user runs it: which stage would answer, read only."""

from __future__ import annotations

import json
from pathlib import Path

from testkit.cli import bot


def test_route_names_the_stage_intent_and_slots(annie_home: Path) -> None:
    bot("tasks", "add", "do the laundry")
    texts = [
        "is laundry on my to-do list",
        "what time is it in Tokyo",
        "",
        "tell me a joke about penguins",
        "bye for now",
    ]
    result = bot("route", "-", "--json", stdin="\n".join(texts) + "\n")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(p["stage"], p["intent"]) for p in lines] == [
        ("state", "find"),
        ("state", "clock"),
        ("model", None),
        ("model", None),
    ]
    assert lines[0]["slots"] == {"item": "laundry", "within": "list"}
    assert lines[1]["slots"] == {"place": "tokyo"}
    assert all(p["why"] for p in lines)
    # Read only: placing a question changed nothing.
    assert json.loads(bot("tasks", "list", "--json").stdout)[0]["status"] == "open"


def test_route_plain_text_and_an_empty_text(annie_home: Path) -> None:
    plain = bot("route", "how long is left on the pasta timer")
    assert plain.returncode == 0 and plain.stdout.startswith("state timers item=pasta")
    empty = bot("route", "  ")
    assert empty.returncode == 2 and "empty" in empty.stderr and "Traceback" not in empty.stderr
