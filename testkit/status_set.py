"""The labelled status set: status questions and near misses, split for tuning and reporting.

`status_set.tsv` holds one question a line with its label: a state-path intent, or "none" for
a near miss that looks like a status question but belongs to the model ("what tasks should a
project manager track?", "tell me about time travel"). The wording varies on purpose: plain
and casual register, filler words, and speech-recognition slips ("tasks spending on me").
The split is deterministic (a CRC of the text): tune the rules and the classifier on the
"tune" half, report on the "held_out" half, which nothing is tuned on. `load_file` reads a set
kept elsewhere in the same form (a blind set). `evaluate` runs a resolver over a part and
counts routing (status questions answered by the state path, near misses wrongly taken from
the model, and those the classifier was unsure of), intents, and per-turn latency: of the
routing decision alone, and of the whole answer.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from context.state import StateResolver
from context.state_rules import route
from context.state_vocab import INTENTS
from memory.store import Store

Part = Literal["tune", "held_out", "all"]
DATA = Path(__file__).with_name("status_set.tsv")


@dataclass(frozen=True)
class Labelled:
    text: str
    label: str  # an intent, or "none"

    @property
    def part(self) -> Literal["tune", "held_out"]:
        return "held_out" if zlib.crc32(self.text.lower().encode()) % 2 else "tune"


def load(part: Part = "all") -> list[Labelled]:
    return [i for i in load_file(DATA) if part == "all" or i.part == part]


def load_file(path: Path) -> list[Labelled]:
    """A set in the same form (`label<TAB>question`, "#" comments), such as a blind set. A
    line with no tab, a label that is no intent nor "none", or no question is refused with
    its place."""
    labels = (*INTENTS, "none")
    found: list[Labelled] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        label, sep, text = line.partition("\t")
        label, text = label.strip(), text.strip()
        if not sep or label not in labels or not text:
            raise ValueError(f"{path}:{n}: expected one of {labels}<TAB>question, got {line!r}")
        found.append(Labelled(text, label))
    return found


@dataclass
class Routing:
    """What a resolver did with one part of the set."""

    status: int = 0
    answered: int = 0  # status questions the state path answered
    right_intent: int = 0
    near_misses: int = 0
    taken: int = 0  # near misses the state path answered (it must not)
    missed: list[Labelled] = field(default_factory=list)
    wrongly_taken: list[tuple[Labelled, str]] = field(default_factory=list)
    wrong_intent: list[tuple[Labelled, str]] = field(default_factory=list)
    # Per turn: deciding where the sentence goes (`route`), and the whole answer (routing again,
    # from the kept question vector, and reading the records, a note search included).
    route_ms: list[float] = field(default_factory=list)
    turn_ms: list[float] = field(default_factory=list)
    # Per turn: whether the classifier embedded the question (False: the rules alone decided).
    embedded: list[bool] = field(default_factory=list)
    near_miss: list[bool] = field(default_factory=list)
    # Per turn: which stage placed it (`context.state_rules.Routed.how`).
    how: list[str] = field(default_factory=list)
    # Status questions and near misses the classifier was unsure of (they go to the model).
    unsure_status: list[Labelled] = field(default_factory=list)
    unsure_near: list[Labelled] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.answered / self.status if self.status else 0.0

    @property
    def taken_rate(self) -> float:
        return self.taken / self.near_misses if self.near_misses else 0.0

    @property
    def precision(self) -> float:
        routed = self.answered + self.taken
        return self.answered / routed if routed else 1.0


def evaluate(resolver: StateResolver, items: list[Labelled], now: datetime) -> Routing:
    out = Routing()
    index = resolver.intents
    for item in items:
        before = index.embeddings if index is not None else 0
        t0 = time.perf_counter()
        route(item.text, index)
        out.route_ms.append((time.perf_counter() - t0) * 1000.0)
        t0 = time.perf_counter()
        result, routed = resolver.resolve_routed(item.text, now)
        out.turn_ms.append((time.perf_counter() - t0) * 1000.0)
        out.embedded.append(index is not None and index.embeddings > before)
        out.near_miss.append(item.label == "none")
        out.how.append(routed.how)
        if routed.how == "unsure":
            (out.unsure_near if item.label == "none" else out.unsure_status).append(item)
        if item.label == "none":
            out.near_misses += 1
            if result is not None:
                out.taken += 1
                out.wrongly_taken.append((item, result.intent))
            continue
        out.status += 1
        if result is None:
            out.missed.append(item)
            continue
        out.answered += 1
        if result.intent == item.label:
            out.right_intent += 1
        else:
            out.wrong_intent.append((item, result.intent))
    return out


# Notes a user would have told Annie: what the "what do you remember about X" questions of
# the set ask about. Without notes about X, such a question is the model's (X may be general
# knowledge), so routing is measured against a store that holds them.
NOTES = [
    "The dentist appointment is on the 14th at 9:30 with Dr. Moreau.",
    "My sister Ana's birthday is March 3rd; she likes orchids.",
    "The plumber, Luis, comes on Tuesday to fix the leaky tap.",
    "The car service is booked at the garage on Friday; the car needs new tyres.",
    "The landlord said the rent goes up by 3 percent in January.",
    "The boiler service is due in October; the engineer is from HeatCo.",
    "The garage door code is 4421.",
    "Passport renewal needs two photos and the old passport.",
    "The household budget for groceries is 600 a month.",
    "The vet said the cat needs her booster in spring.",
    "The guest wifi password is blue-harbour-42.",
    "The home insurance renews on the 1st of May with Acme.",
    "The bank called about the mortgage rate review.",
    "The flight to Lisbon leaves at 7:05 from terminal 2, booking reference QX7P2L.",
    "The quarterly review with the team is on the 20th; bring the sales figures.",
    "The school run on Wednesdays is mine; Tom does Fridays.",
    "The tax return is due by January 31st; the accountant has the receipts.",
    "The mulch supplier is GreenYard; they deliver on Thursdays.",
    "Gym membership renews monthly; cancel before the 5th.",
    "The birthday party is at the bowling alley, Saturday at 3.",
    "The library books are due back on the 12th.",
    "The builder quoted 4,000 for the kitchen wall.",
    "The accountant, Priya, prefers email over calls.",
]


def seed(store: Store, now: datetime) -> dict[str, list[str]]:
    """A small realistic store: tasks in every lane, reminders, an approval and the notes."""
    ids: dict[str, list[str]] = {"tasks": [], "reminders": [], "notes": []}
    for title, pending, status in (
        ("sign the lease renewal", "user", "open"),
        ("choose a paint colour", "user", "open"),
        ("draft the reply to the school", "assistant", "open"),
        ("refund from the airline", "external", "blocked"),
        ("buy stamps", "none", "open"),
    ):
        ids["tasks"].append(store.tasks.add(title, pending=pending, status=status))
    for text, hours in (("call mom", 2), ("dentist", 24 + 3), ("bins out", 24 * 3)):
        ids["reminders"].append(store.reminders.add(text, now + timedelta(hours=hours)))
    ids["notes"] = store.notes.add_many([{"text": t, "source": "user"} for t in NOTES])
    return ids
