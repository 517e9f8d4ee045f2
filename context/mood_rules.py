"""The anchored rules for questions about the user's own mood ("how am I feeling lately?").

Checked on normalized text (`context.normalize`) before every other state rule; a match reads
back what the user said about how they feel (`memory.mood`, `context.state_answers`). Only
questions about the user match: "how are you feeling" asks about Annie, "how am I doing on my
tasks" about work, and a statement ("I'm feeling great") is recorded, not answered.
"""

from __future__ import annotations

import re

_LATELY = (
    r"(?: (?:lately|recently|these days|of late|today|this week|last week|yesterday|last time"
    r"|the other day|this morning|last night|tonight))?"
)
# Questions about the user's own mood, anchored like every rule: "how are you feeling" asks
# about Annie, "how am I doing on my tasks" about work, and neither matches.
_MOOD_RULES = [
    re.compile(
        rf"(?:do you know |do you remember )?how (?:am i|i am|was i|i was|have i been|i have been"
        rf"|had i been) feeling{_LATELY}"
    ),
    re.compile(
        rf"how (?:did|do|have) i (?:say i (?:was|am|felt|feel|was feeling|have been feeling)"
        rf"|feel|felt|been){_LATELY}"
    ),
    re.compile(rf"what (?:is|was|has been) my mood(?: been)?(?: like)?{_LATELY}"),
    re.compile(rf"what mood (?:am|was|have) i (?:been )?in{_LATELY}"),
    re.compile(
        rf"what (?:did|have) i (?:say|said|tell you|told you) about (?:how i (?:feel|felt"
        rf"|was feeling|am feeling|have been feeling)|my mood|my feelings?){_LATELY}"
    ),
]


def mood_question(core: str) -> bool:
    """Whether normalized `core` asks how the user has said they feel."""
    return any(rule.fullmatch(core) for rule in _MOOD_RULES)
