"""What users say, written blind: does the rule pass note what is worth keeping, and nothing
else?

The set (`tests/fixtures/remember_blind/`) was written by someone who never saw the rules: 120
utterances a file, 65 stating a fact, a preference, a person, a plan or a date with the words a
good note must hold (a day said relative to the set's "now" given as the day itself), and 55
that a careless rule would remember. `dev.tsv` is developed on; `heldout.tsv` was scored once,
after the last change to the rules (docs/memory.md), and its misses were shown in that run, so
it is marked read: a rule changed after it is measured on a new set, not this one. No rule
quotes either file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from context.noticed import notice

FIXTURES = Path(__file__).parents[1] / "fixtures" / "remember_blind"
# Per file: the share of memorable lines noted with every key word, and the most lines of no
# note's worth given one; the figures when the file was last measured (docs/memory.md).
FLOORS = {"dev.tsv": (1.0, 0), "heldout.tsv": (0.70, 0)}


@dataclass
class Score:
    noted: int = 0
    memorable: int = 0
    kind_right: int = 0
    false: int = 0
    plain: int = 0


def score(name: str) -> tuple[Score, list[str]]:
    lines = (FIXTURES / name).read_text().splitlines()
    now = datetime.fromisoformat(lines[0].split("now:", 1)[1].strip())
    out, misses = Score(), []
    for line in lines[1:]:
        said, kind, keys = line.split("\t")
        notes = notice(said, now)
        if kind == "-":
            out.plain += 1
            if notes:
                out.false += 1
                misses.append(f"noted {said!r}: {[n.text for n in notes]}")
            continue
        out.memorable += 1
        words = keys.split(";")
        held = [n for n in notes if all(w in n.text.lower() for w in words)]
        if not held:
            misses.append(f"missed {said!r} ({keys}): {[n.text for n in notes]}")
            continue
        out.noted += 1
        out.kind_right += held[0].kind == kind
    return out, misses


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_blind_statements_are_noted_and_nothing_else(name: str) -> None:
    got, misses = score(name)
    share = got.noted / got.memorable
    print(
        f"{name}: noted {got.noted}/{got.memorable}, kind right {got.kind_right}/{got.noted}, "
        f"noted with nothing to keep {got.false}/{got.plain}"
    )
    floor, most_false = FLOORS[name]
    assert share >= floor and got.false <= most_false, "\n".join(misses)
