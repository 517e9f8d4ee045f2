"""A generator for a long errands session: the day-to-day traffic of a household assistant.

The user runs errands through Annie: looks up opening hours and shops (web searches and page
fetches with results of a few hundred tokens), adds tasks and reminders, saves notes, lists
what is open, and chats in between. The planted facts, their needles and questions are
`testkit.trace`'s (corrections, facts about the user, exact ids, notes, tasks), one every
turns/21 turns, so the same protected-fact check reads both traces. Deterministic for a seed;
the records are in the replay format (`bot.turn.replay`).
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from testkit.trace import _FACTS, _QUESTIONS, PlantedFact, _filler, _search_result

_PLACES = [
    "the post office",
    "the hardware store on Mill Road",
    "the pharmacy",
    "the dry cleaner",
    "the recycling centre",
    "the farmers market",
    "the bike repair shop",
    "the library",
    "the garden centre",
    "the key cutter",
    "the tyre shop",
    "the council office",
    "the pet shop",
    "the bakery on Station Street",
    "the optician",
]
_ERRANDS = [
    "Pick up the dry cleaning",
    "Buy light bulbs",
    "Return the parcel",
    "Get the bike tyre fixed",
    "Collect the prescription",
    "Buy bird seed",
    "Drop off the recycling",
    "Get a spare key cut",
    "Buy stamps",
    "Renew the parking permit",
    "Order the birthday cake",
    "Buy compost for the garden",
]
_ACKS = ["Okay.", "Thanks.", "Great, thank you.", "Good to know.", "Right.", "Perfect."]
_TIMES = ["8:30", "9:00", "12:15", "14:00", "16:45", "17:30", "18:00"]
_START = datetime(2026, 9, 1, 9, 0)


def _call(cid: str, name: str, arguments: dict[str, Any], result: str) -> list[dict[str, Any]]:
    """The assistant's call and its recorded result."""
    return [
        {
            "type": "assistant",
            "text": "",
            "tool_calls": [{"id": cid, "name": name, "arguments": arguments}],
        },
        {"type": "tool_result", "id": cid, "name": name, "content": result},
    ]


def _task_list(rng: random.Random, open_tasks: list[str]) -> str:
    shown = open_tasks[-8:]
    rows = [{"id": f"task-{n + 1}", "title": t, "pending": "user"} for n, t in enumerate(shown)]
    return json.dumps({"tasks": rows, "count": len(open_tasks)}, ensure_ascii=False)


def _errand_turn(
    rng: random.Random, turn: int, cid: str, open_tasks: list[str]
) -> list[dict[str, Any]]:
    """One ordinary errands turn: a search, a fetch, a task, a reminder, a note, a list or talk."""
    place = rng.choice(_PLACES)
    roll = rng.random()
    if roll < 0.30:
        ask = f"When is {place} open this weekend?"
        result = _search_result(rng, f"{place} opening hours", rng.randint(120, 500))
        said = f"{place.capitalize()} is open until {rng.choice(_TIMES)} on Saturday."
        return [
            {"type": "user", "text": ask},
            *_call(cid, "web_search", {"query": f"{place} opening hours"}, result),
            {"type": "assistant", "text": said},
        ]
    if roll < 0.40:
        slug = place.replace("the ", "").replace(" ", "-")
        url = f"https://shops.example.org/{slug}"
        result = _search_result(rng, place, rng.randint(150, 450))
        return [
            {"type": "user", "text": f"Open the page for {place}."},
            *_call(cid, "fetch_webpage", {"url": url}, result),
            {"type": "assistant", "text": _filler(rng, rng.randint(15, 35))},
        ]
    if roll < 0.55:
        title = f"{rng.choice(_ERRANDS)} ({turn})"
        open_tasks.append(title)
        return [
            {"type": "user", "text": f"Add a task: {title.lower()}."},
            *_call(cid, "create_task", {"title": title, "pending": "user"}, "saved"),
            {"type": "assistant", "text": "Added to your list."},
        ]
    if roll < 0.65:
        due = _START + timedelta(hours=turn)
        text = f"Go to {place}"
        args = {"text": text, "due": due.strftime("%Y-%m-%dT%H:%M")}
        return [
            {"type": "user", "text": f"Remind me to go to {place} at {due:%H:%M}."},
            *_call(cid, "set_reminder", args, "saved"),
            {"type": "assistant", "text": f"I'll remind you at {due:%H:%M}."},
        ]
    if roll < 0.72:
        note = f"{place.capitalize()} closes at {rng.choice(_TIMES)} on Sundays"
        return [
            {"type": "user", "text": f"Save a note that {note[0].lower() + note[1:]}."},
            *_call(cid, "save_note", {"text": note}, "saved"),
            {"type": "assistant", "text": "Saved."},
        ]
    if roll < 0.78:
        return [
            {"type": "user", "text": "What's on my errands list?"},
            *_call(cid, "list_tasks", {}, _task_list(rng, open_tasks)),
            {"type": "assistant", "text": f"You have {len(open_tasks)} errands open."},
        ]
    return [
        {"type": "user", "text": rng.choice(_ACKS)},
        {"type": "assistant", "text": _filler(rng, rng.randint(8, 30))},
    ]


def generate(
    turns: int = 1000, *, seed: int = 11
) -> tuple[list[dict[str, Any]], list[PlantedFact]]:
    """Trace records and the facts planted in them (`testkit.trace`'s, one every turns/21)."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    planted: list[PlantedFact] = []
    fact_every = max(1, turns // (len(_FACTS) + 1))
    fact_turns = {fact_every * (i + 1): fact for i, fact in enumerate(_FACTS)}
    open_tasks: list[str] = []
    for turn in range(1, turns + 1):
        cid = f"e{turn}"
        fact = fact_turns.get(turn)
        if fact is None:
            records.extend(_errand_turn(rng, turn, cid, open_tasks))
            continue
        category, text, call, needle = fact
        planted.append(PlantedFact(turn, category, needle, *_QUESTIONS[needle]))
        records.append({"type": "user", "text": text})
        if call is None:
            records.append({"type": "assistant", "text": "Got it, thanks for telling me."})
            continue
        records.extend(_call(cid, call["name"], call["arguments"], "saved"))
        records.append({"type": "assistant", "text": "Done, I saved that."})
    return records, planted


def write(
    path: Path, turns: int = 1000, *, seed: int = 11, window: int | None = None
) -> list[PlantedFact]:
    """Write the trace as JSON lines (with a session line when `window` is given)."""
    records, planted = generate(turns, seed=seed)
    lines = [{"type": "session", "window": window}] if window else []
    with path.open("w", encoding="utf-8") as fh:
        for record in [*lines, *records]:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return planted
