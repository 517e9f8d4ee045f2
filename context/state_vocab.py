"""The slot and vocabulary rules that confirm a classifier's proposal on the state path.

The anchored rules in `context.state_rules` know a fixed set of sentence shapes. People ask
the same status questions in many more shapes, and a classifier over sentence embeddings
finds the likely intent of those; but on the deterministic state path a classifier never decides.
These rules do: a proposed intent is answered only when every word of the normalized
sentence belongs to that intent's vocabulary (its own words plus the words any question is
built from) and the sentence holds one of the intent's slot words. One word from outside
("what time is it in Tokyo", "what tasks should a project manager track") sends the turn to
the model. The check is a set lookup per word, so it also serves as the prefilter that
decides whether a turn is worth embedding at all.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

# The status questions the state path answers.
Intent = Literal[
    "approvals", "pending", "list", "blocked", "schedule", "time", "date", "context", "remember"
]
INTENTS: tuple[Intent, ...] = get_args(Intent)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words any status question may be built from; none of them says what the question is about.
_COMMON = _words(
    """
    what is are there any anything something some do does i me my mine you your the a an
    have has got get still right now currently at moment just please tell show give read check
    can could would will let know so like okay ok hey annie of for on in to it that this how
    many much which all yet else again be am we us our see status quick question mind telling
    there up out doing going looking look looks whats s
    """
)

_WORDS: dict[Intent, str] = {
    "approvals": """
        approve approval approvals confirm confirmation confirmations sign off go ahead awaiting
        waiting pending open requests request want need needs anything from supposed
        """,
    "pending": """
        pending waiting wait waits outstanding need needs needed needing attention end side
        blocking holding hold owe anyone anybody left take care handle deal doing should must
        tasks task items item things thing stuff open from today input reply answer response
        decision todo supposed morning afternoon evening tonight
        """,
    "list": """
        list lists tasks task todo todos plate open current active remaining go through run
        working items things today
        """,
    "blocked": """
        blocked block stuck held stalled waiting wait pending from others other people someone
        somebody else anyone anybody who working tasks task items things with
        """,
    "schedule": """
        schedule calendar agenda reminder reminders planned scheduled coming next due today
        tomorrow tonight week afternoon morning evening appointments appointment free busy
        happening day thing things when
        """,
    "time": "time hour o clock late noon current say says",
    "date": """
        date day days today month year week weekday weekend monday tuesday wednesday thursday
        friday saturday sunday and time
        """,
    "context": """
        context memory working tokens token window full room space used using use usage left
        remaining free running run close percent percentage count big size
        """,
}
# Each intent's slot words: without one the sentence is not about that intent at all.
_SLOTS: dict[Intent, str] = {
    # Not "ok" or "go": "are you okay", "I have to go" are no questions about approvals.
    "approvals": "approve approval approvals confirm confirmation confirmations sign ahead",
    "pending": (
        "pending waiting outstanding need needs needed needing attention end side blocking "
        "holding owe left care handle should supposed"
    ),
    "list": "list lists tasks task todo todos plate working",
    "blocked": "blocked block stuck held stalled others people someone somebody",
    "schedule": (
        "schedule calendar agenda reminder reminders planned scheduled coming next due "
        "today tomorrow tonight week afternoon morning evening appointments appointment free busy"
    ),
    "time": "time hour clock late noon",
    "date": (
        "date day today month year weekday weekend monday tuesday wednesday thursday friday "
        "saturday sunday"
    ),
    "context": "context memory tokens token window full room space",
}
VOCAB: dict[Intent, frozenset[str]] = {i: _COMMON | _words(w) for i, w in _WORDS.items()}
SLOTS: dict[Intent, frozenset[str]] = {i: _words(w) for i, w in _SLOTS.items()}
_WEEK = re.compile(r"\bweek\b")


def covering(core: str) -> list[Intent]:
    """The intents whose vocabulary holds every word of `core` and whose slot it fills."""
    words = set(core.split())
    return [i for i, vocab in VOCAB.items() if words <= vocab and words & SLOTS[i]]


def day_word(core: str) -> str:
    """The day a covered schedule question names, in the anchored rules' terms."""
    if "tomorrow" in core:
        return "tomorrow"
    if _WEEK.search(core):
        return "this week"
    if any(w in core for w in ("today", "tonight", "morning", "afternoon", "evening")):
        return "today"
    return ""
