"""The labelled example questions the state path's classifier learns from, read from data files.

Each status intent's examples are in `context/examples/<intent>.txt`, one question a line, "#"
starting a comment; `none.txt` holds the near misses: questions that share the status
questions' words but belong to the model (general knowledge, other places, commands, small
talk). The classifier (`context.intents`) is trained on them, and `context.state_vocab` learns
from them which words status questions use. Intents whose questions carry an argument ("is
laundry on my list", "what time is it in Dallas") are placed by anchored rules alone and have
no examples. None of these is an evaluation text: those live in `testkit`, `tests/fixtures`
and a test keeps every one of them out of these files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from context.state_vocab import Intent

Label = Intent | Literal["none"]
FOLDER = Path(__file__).with_name("examples")
# The labels with examples, in the order the classifier's weights index them: a new label
# goes last, or the shipped weights no longer match (`python -m context.intents` writes them).
LABELS: tuple[Label, ...] = (
    "pending",
    "approvals",
    "list",
    "blocked",
    "schedule",
    "time",
    "date",
    "context",
    "remember",
    "none",
)


def read_examples(path: Path) -> tuple[str, ...]:
    """The questions of one examples file: one a line, blank lines and "#" comments skipped."""
    found: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if text and not text.startswith("#"):
            found.append(text)
    return tuple(found)


def examples(folder: Path = FOLDER) -> dict[Label, tuple[str, ...]]:
    """Every label's examples, by label, in `LABELS` order. A missing file is refused with
    its path, and a file for no label too: a misspelt name would otherwise teach nothing."""
    known = {f"{label}.txt" for label in LABELS}
    strays = sorted(p.name for p in folder.glob("*.txt") if p.name not in known)
    if strays:
        raise ValueError(f"{folder}: {', '.join(strays)} name no label of {LABELS}")
    found: dict[Label, tuple[str, ...]] = {}
    for label in LABELS:
        path = folder / f"{label}.txt"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: the examples of {label!r} are missing")
        found[label] = read_examples(path)
    return found


EXAMPLES: dict[Label, tuple[str, ...]] = examples()
