"""Labelled example questions for the state path's classifier (`context.intents`).

Each status intent has a few hundred ways people ask it (`context.intent_examples_status`, with
more in `context.intent_examples_status_tasks`, `context.intent_examples_status_days` and
`context.intent_examples_status_more`);
"none" holds questions that share their words but belong to the model: general knowledge,
other places, commands, small talk (`context.intent_examples_none`, `_none_more` and
`_none_commands`). The classifier is trained on them, and `context.state_vocab` learns from
them which words status questions use.
They are written from what each intent means and are not the evaluation set: that lives in
`testkit`, and a test keeps any of its questions out of these.
"""

from __future__ import annotations

from typing import Literal

from context import intent_examples_none as none
from context import intent_examples_none_commands as none_commands
from context import intent_examples_none_more as none_more
from context import intent_examples_status as status
from context import intent_examples_status_days as days
from context import intent_examples_status_more as more
from context import intent_examples_status_tasks as tasks
from context.state_vocab import Intent

Label = Intent | Literal["none"]


def parse(block: str) -> tuple[str, ...]:
    """The examples of one block: " | " between examples, any number to a line."""
    return tuple(p.strip() for line in block.splitlines() for p in line.split("|") if p.strip())


# "remember" has no examples: its subject is a slot the anchored rules take out of the
# sentence, and only notes about that subject make it a question about state.
EXAMPLES: dict[Label, tuple[str, ...]] = {
    "pending": parse(status.PENDING) + parse(tasks.PENDING) + parse(more.PENDING),
    "approvals": parse(status.APPROVALS) + parse(tasks.APPROVALS) + parse(more.APPROVALS),
    "list": parse(status.LIST) + parse(tasks.LIST) + parse(more.LIST),
    "blocked": parse(status.BLOCKED) + parse(tasks.BLOCKED),
    "schedule": parse(status.SCHEDULE) + parse(days.SCHEDULE) + parse(more.SCHEDULE),
    "time": parse(status.TIME) + parse(days.TIME),
    "date": parse(status.DATE) + parse(days.DATE),
    "context": parse(status.CONTEXT) + parse(days.CONTEXT),
    "none": parse(none.NONE) + parse(none_more.NONE) + parse(none_commands.NONE),
}
