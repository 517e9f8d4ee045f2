"""A generator for long, tool-heavy session traces with planted facts, for tests and the bench.

The trace uses the replay format (JSON lines of user / assistant / tool_result records). Two
of every three turns call a tool whose result is several hundred tokens, like seed 003's
searches, and 20 facts are planted along the way: corrections, things the user said about
themselves, exact ids, saved notes and tasks. Each fact has a `needle`, the exact string that
must still be in the final context or the checkpoint after hundreds of turns of compaction,
and a question whose answer (any of `expect`, as a whole word) shows the model recalled it.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_TOPICS = [
    "Netflix earnings",
    "Iraq news",
    "Iran news",
    "solar panels",
    "rust compiler release",
    "marathon training",
    "sourdough starter",
    "electric bikes",
    "the Mars rover",
    "coral reefs",
    "heat pumps",
    "jazz festivals",
    "chess openings",
    "tide tables",
    "used cameras",
    "volcano activity",
    "bird migration",
    "train strikes",
    "vaccine trials",
    "mortgage rates",
]
_VOCABULARY = (
    "report analysts said the company quarter growth market update officials statement week "
    "data shows people local region expected further review early results new plan according "
    "sources published research team study details price rise fall percent million annual "
    "season record level public response change policy event first latest since year city"
)
_WORDS = _VOCABULARY.split()

# (category, user text or None, tool call or None, needle)
_FACTS: list[tuple[str, str, dict[str, Any] | None, str]] = [
    (
        "correction",
        "Actually my sister's name is Ana, not Anna.",
        None,
        "Actually my sister's name is Ana, not Anna.",
    ),
    (
        "correction",
        "Correction: the party is on Saturday, not Friday.",
        None,
        "Correction: the party is on Saturday, not Friday.",
    ),
    (
        "correction",
        "I meant the blue folder, not the red one.",
        None,
        "I meant the blue folder, not the red one.",
    ),
    (
        "correction",
        "Actually the flight leaves at 7:40, not 8:40.",
        None,
        "Actually the flight leaves at 7:40, not 8:40.",
    ),
    (
        "fact",
        "My dentist is Dr. Okafor on Elm Street.",
        None,
        "My dentist is Dr. Okafor on Elm Street.",
    ),
    ("fact", "I am allergic to penicillin.", None, "I am allergic to penicillin."),
    ("fact", "My favourite tea is genmaicha.", None, "My favourite tea is genmaicha."),
    (
        "fact",
        "I prefer window seats on long flights.",
        None,
        "I prefer window seats on long flights.",
    ),
    ("id", "The ticket number for the broken router is INC-40213.", None, "INC-40213"),
    ("id", "My booking reference is QX-7731.", None, "QX-7731"),
    ("id", "The parcel tracking code is PKG-5581-AZ.", None, "PKG-5581-AZ"),
    ("id", "Use invoice INV-2291 for the refund.", None, "INV-2291"),
    (
        "note",
        "Please save a note that the garage code is 4471.",
        {"name": "save_note", "arguments": {"text": "Garage code is 4471"}},
        "Garage code is 4471",
    ),
    (
        "note",
        "Note down that Ben's birthday is 14 March.",
        {"name": "save_note", "arguments": {"text": "Ben's birthday is 14 March"}},
        "Ben's birthday is 14 March",
    ),
    (
        "note",
        "Save a note: the wifi password is larch-meadow-92.",
        {"name": "save_note", "arguments": {"text": "Wifi password is larch-meadow-92"}},
        "Wifi password is larch-meadow-92",
    ),
    (
        "note",
        "Remember in your notes that I park on level 3.",
        {"name": "save_note", "arguments": {"text": "User parks on level 3"}},
        "User parks on level 3",
    ),
    (
        "task",
        "Add a task to renew my passport before June 3.",
        {
            "name": "create_task",
            "arguments": {"pending": "user", "title": "Renew passport before June 3"},
        },
        "Renew passport before June 3",
    ),
    (
        "task",
        "Remind me to call the plumber on Tuesday.",
        {
            "name": "create_task",
            "arguments": {"pending": "user", "title": "Call the plumber on Tuesday"},
        },
        "Call the plumber on Tuesday",
    ),
    (
        "task",
        "Put returning the library books on my list.",
        {
            "name": "create_task",
            "arguments": {"pending": "user", "title": "Return the library books"},
        },
        "Return the library books",
    ),
    (
        "task",
        "Add a task: book the car service for next month.",
        {
            "name": "create_task",
            "arguments": {"pending": "user", "title": "Book the car service for next month"},
        },
        "Book the car service for next month",
    ),
]

# needle -> (question asked after the session, accepted answers)
_QUESTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Actually my sister's name is Ana, not Anna.": ("What is my sister's name?", ("Ana",)),
    "Correction: the party is on Saturday, not Friday.": ("Which day is the party?", ("Saturday",)),
    "I meant the blue folder, not the red one.": ("Which folder did I mean?", ("blue",)),
    "Actually the flight leaves at 7:40, not 8:40.": ("What time does my flight leave?", ("7:40",)),
    "My dentist is Dr. Okafor on Elm Street.": ("Who is my dentist?", ("Okafor",)),
    "I am allergic to penicillin.": ("What am I allergic to?", ("penicillin",)),
    "My favourite tea is genmaicha.": ("What is my favourite tea?", ("genmaicha",)),
    "I prefer window seats on long flights.": ("Which seats do I prefer?", ("window",)),
    "INC-40213": ("What is the ticket number for the broken router?", ("INC-40213",)),
    "QX-7731": ("What is my booking reference?", ("QX-7731",)),
    "PKG-5581-AZ": ("What is the parcel tracking code?", ("PKG-5581-AZ",)),
    "INV-2291": ("Which invoice should the refund use?", ("INV-2291",)),
    "Garage code is 4471": ("What is the garage code?", ("4471",)),
    "Ben's birthday is 14 March": ("When is Ben's birthday?", ("14 March", "March 14")),
    "Wifi password is larch-meadow-92": ("What is the wifi password?", ("larch-meadow-92",)),
    "User parks on level 3": ("Which level do I park on?", ("3", "three", "third")),
    "Renew passport before June 3": ("When must I renew my passport by?", ("June 3", "3 June")),
    "Call the plumber on Tuesday": ("Which day should I call the plumber?", ("Tuesday",)),
    "Return the library books": ("What do I need to return?", ("library books",)),
    "Book the car service for next month": ("What should I book for next month?", ("car service",)),
}


@dataclass(frozen=True)
class PlantedFact:
    turn: int
    category: str
    needle: str
    question: str = ""
    expect: tuple[str, ...] = ()

    def recalled(self, answer: str) -> bool:
        """Whether `answer` contains an expected answer as a whole word (case-insensitive)."""
        return any(re.search(rf"(?<!\w){re.escape(e)}(?!\w)", answer, re.I) for e in self.expect)


def _filler(rng: random.Random, words: int) -> str:
    out: list[str] = []
    while len(out) < words:
        sentence = rng.sample(_WORDS, k=min(len(_WORDS), rng.randint(8, 16)))
        sentence[0] = sentence[0].capitalize()
        out.extend(sentence)
        out[-1] += "."
    return " ".join(out)


def _search_result(rng: random.Random, topic: str, words: int) -> str:
    items = []
    slug = topic.replace(" ", "-")
    per = max(20, words // 5)
    for i in range(5):
        items.append(
            {
                "title": f"{topic.title()} - result {i + 1}",
                "url": f"https://news.example.org/{slug}/{rng.randint(1000, 9999)}",
                "snippet": _filler(rng, per),
            }
        )
    return json.dumps({"query": topic, "results": items}, ensure_ascii=False)


def generate(
    turns: int = 300, *, seed: int = 7, result_words: tuple[int, int] = (350, 1400)
) -> tuple[list[dict[str, Any]], list[PlantedFact]]:
    """Trace records and the facts planted in them (one fact every turns/20 turns)."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    planted: list[PlantedFact] = []
    fact_every = max(1, turns // (len(_FACTS) + 1))
    fact_turns = {fact_every * (i + 1): fact for i, fact in enumerate(_FACTS)}
    call_no = 0
    for turn in range(1, turns + 1):
        fact = fact_turns.get(turn)
        if fact is not None:
            category, text, call, needle = fact
            records.append({"type": "user", "text": text})
            planted.append(PlantedFact(turn, category, needle, *_QUESTIONS[needle]))
            if call is not None:
                call_no += 1
                cid = f"c{call_no}"
                records.append(
                    {"type": "assistant", "text": "", "tool_calls": [{"id": cid, **call}]}
                )
                records.append(
                    {"type": "tool_result", "id": cid, "name": call["name"], "content": "saved"}
                )
                records.append({"type": "assistant", "text": "Done, I saved that."})
            else:
                records.append({"type": "assistant", "text": "Got it, thanks for telling me."})
            continue
        topic = rng.choice(_TOPICS)
        if turn % 3 == 0:
            records.append(
                {
                    "type": "user",
                    "text": rng.choice(["Interesting.", "Tell me more.", "Compare them.", "Okay."]),
                }
            )
            records.append({"type": "assistant", "text": _filler(rng, rng.randint(25, 60))})
            continue
        call_no += 1
        cid = f"c{call_no}"
        name = "web_search" if turn % 2 else "fetch_webpage"
        args = (
            {"query": topic}
            if name == "web_search"
            else {"url": f"https://news.example.org/{topic.replace(' ', '-')}"}
        )
        records.append({"type": "user", "text": f"Search for the latest on {topic}."})
        records.append(
            {
                "type": "assistant",
                "text": "",
                "tool_calls": [{"id": cid, "name": name, "arguments": args}],
            }
        )
        records.append(
            {
                "type": "tool_result",
                "id": cid,
                "name": name,
                "content": _search_result(rng, topic, rng.randint(*result_words)),
            }
        )
        records.append({"type": "assistant", "text": _filler(rng, rng.randint(20, 45))})
    return records, planted


def write(
    path: Path, turns: int = 300, *, seed: int = 7, window: int | None = None
) -> list[PlantedFact]:
    records, planted = generate(turns, seed=seed)
    with path.open("w", encoding="utf-8") as fh:
        if window:
            fh.write(json.dumps({"type": "session", "window": window}) + "\n")
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return planted
