"""Labelled example questions for the state path's classifier (`context.intents`).

Each status intent has a hundred or more ways people ask it (`context.intent_examples_status`);
"none" holds questions that share their words but belong to the model: general knowledge,
other places, commands, small talk (`context.intent_examples_none`). The classifier is
trained on them, and `context.state_vocab` learns from them which words status questions use.
They are written from what each intent means and are not the evaluation set: that lives in
`testkit`, and a test keeps any of its questions out of these.
"""

from __future__ import annotations

from typing import Literal

from context import intent_examples_none as none
from context import intent_examples_status as status
from context.state_vocab import Intent

Label = Intent | Literal["none"]


def parse(block: str) -> tuple[str, ...]:
    """The examples of one block: " | " between examples, any number to a line."""
    return tuple(p.strip() for line in block.splitlines() for p in line.split("|") if p.strip())


# "remember" has no examples: its subject is a slot the anchored rules take out of the
# sentence, and only notes about that subject make it a question about state.
EXAMPLES: dict[Label, tuple[str, ...]] = {
    "pending": parse(status.PENDING),
    "approvals": parse(status.APPROVALS),
    "list": parse(status.LIST),
    "blocked": parse(status.BLOCKED),
    "schedule": parse(status.SCHEDULE),
    "time": parse(status.TIME),
    "date": parse(status.DATE),
    "context": parse(status.CONTEXT),
    "none": parse(none.NONE),
}
