"""Labelled example questions for the state path's classifier (`context.intents`).

Each status intent has a few hundred ways people ask it (`context.intent_examples_status`, with
more in `context.intent_examples_status_tasks`, `context.intent_examples_status_days` and
`context.intent_examples_status_more`);
"none" holds questions that share their words but belong to the model: general knowledge,
other places, commands, small talk (`context.intent_examples_none`, `_none_more` and
`_none_commands`). The classifier is trained on them, and `context.state_vocab` learns from
them which words status questions use.
More of both, written by others from a one-paragraph description of what Annie answers, are in
`intent_examples.tsv` (`label<TAB>question`). They are written from what each intent means and
are not the evaluation sets: those live in `testkit` and `tests/fixtures/status_blind`, and a
test keeps any of their questions out of these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from context import intent_examples_none as none
from context import intent_examples_none_commands as none_commands
from context import intent_examples_none_more as none_more
from context import intent_examples_status as status
from context import intent_examples_status_days as days
from context import intent_examples_status_more as more
from context import intent_examples_status_tasks as tasks
from context.state_vocab import INTENTS, Intent

Label = Intent | Literal["none"]
WRITTEN = Path(__file__).with_name("intent_examples.tsv")


def parse(block: str) -> tuple[str, ...]:
    """The examples of one block: " | " between examples, any number to a line."""
    return tuple(p.strip() for line in block.splitlines() for p in line.split("|") if p.strip())


def read_labelled(path: Path) -> list[tuple[str, str]]:
    """The (label, question) lines of a `label<TAB>question` file ("#" comments): these
    examples, the labelled set and the blind sets share the form. A line with no tab, a
    label that is no intent nor "none", or no question is refused with its place."""
    labels = (*INTENTS, "none")
    found: list[tuple[str, str]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        label, sep, text = line.partition("\t")
        label, text = label.strip(), text.strip()
        if not sep or label not in labels or not text:
            raise ValueError(f"{path}:{n}: expected one of {labels}<TAB>question, got {line!r}")
        found.append((label, text))
    return found


def written(path: Path = WRITTEN) -> dict[str, tuple[str, ...]]:
    """The examples of a `label<TAB>question` file, by label."""
    found: dict[str, list[str]] = {}
    for label, text in read_labelled(path):
        found.setdefault(label, []).append(text)
    return {label: tuple(texts) for label, texts in found.items()}


_WRITTEN = written()

# "remember" holds questions about the user alone: another subject is a slot the anchored rules
# take out of the sentence, and only notes about that subject make it a question about state.
_EXAMPLES: dict[Label, tuple[str, ...]] = {
    "pending": parse(status.PENDING) + parse(tasks.PENDING) + parse(more.PENDING),
    "approvals": parse(status.APPROVALS) + parse(tasks.APPROVALS) + parse(more.APPROVALS),
    "list": parse(status.LIST) + parse(tasks.LIST) + parse(more.LIST),
    "blocked": parse(status.BLOCKED) + parse(tasks.BLOCKED),
    "schedule": parse(status.SCHEDULE) + parse(days.SCHEDULE) + parse(more.SCHEDULE),
    "time": parse(status.TIME) + parse(days.TIME),
    "date": parse(status.DATE) + parse(days.DATE),
    "context": parse(status.CONTEXT) + parse(days.CONTEXT),
    "remember": parse(more.REMEMBER),
    "none": parse(none.NONE) + parse(none_more.NONE) + parse(none_commands.NONE),
}
EXAMPLES: dict[Label, tuple[str, ...]] = {
    label: texts + _WRITTEN.get(label, ()) for label, texts in _EXAMPLES.items()
}
