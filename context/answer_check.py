"""A model's answer held against the records before it is spoken.

Status-like questions the state path does not answer alone go to the model, which reads the
Work Index snapshot in its prompt. A small model may still say "nothing is pending" or "your
list is empty" while work waits, and a confident wrong answer is the worst one Annie can give.
`AnswerCheck` reads the answer sentence by sentence as it streams: a sentence that claims
nothing waits on the user while tasks or approvals do, or that the list is empty while tasks
are open, is not passed on; the state path's own answer is said in its place, once. Only the
answers to status-like questions are held (`for_turn`: every word one the status examples
use, not an order or a question about the world), and only when the records hold something
such a sentence could deny; any other answer streams through untouched, clause by clause.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from context import state_answers
from context.intent_examples import EXAMPLES
from context.normalize import normalize
from context.state_rules import elsewhere
from context.state_vocab import COMMON, Vocabulary
from memory.db import StoreError

if TYPE_CHECKING:
    from memory.store import Store

# "Nothing is pending", "you're all caught up", "you don't have anything to do".
_NOTHING_PENDING = re.compile(
    r"\b(?:nothing (?:is |else is )?(?:pending|outstanding|waiting (?:on|for) you|needs you"
    r"|needs your (?:attention|input|approval)|for you to (?:do|approve))"
    r"|(?:you have|you've got|there is|there's|there are) (?:nothing|no (?:pending|outstanding)"
    r" \w+)(?: (?:pending|outstanding|waiting|to do|to approve|on your plate))?"
    r"|you(?:'re| are) (?:all )?(?:caught up|clear|all set)"
    r"|you (?:do not|don't) have (?:anything|any (?:pending|outstanding) \w+)"
    r"(?: (?:pending|to do|waiting))?|no one is waiting on you|nobody is waiting on you)\b",
    re.IGNORECASE,
)
# "Your task list is empty", "you have no open tasks", "nothing is on your list".
_EMPTY_LIST = re.compile(
    r"\b(?:your (?:task |to-?do )?list is (?:empty|clear)|(?:you have|you've got) no (?:open )?"
    r"(?:tasks|to-?dos)|you (?:do not|don't) have any (?:open )?(?:tasks|to-?dos)"
    r"|nothing is on your (?:task |to-?do )?list|there are no (?:open )?tasks)\b",
    re.IGNORECASE,
)
# The most text held back waiting for a sentence's end (a denial is one short sentence).
HOLD_CHARS = 160
# A sentence ends at ., ! or ? followed by a space, or at a line break.
_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class Facts:
    """What the records hold that a model's answer could deny, and what to say instead."""

    pending: str = ""  # the state path's answer when something waits on the user, else ""
    open_tasks: str = ""  # its list answer when tasks are open, else ""


def read_facts(store: Store | None, now: datetime | None = None) -> Facts:
    """The facts from the store; none when it cannot be read (nothing is then corrected)."""
    if store is None:
        return Facts()
    at = (now or datetime.now()).astimezone()
    try:
        counts = store.tasks.counts()
        waiting = bool(store.approvals.pending(at))
        pending = ""
        if counts.get("user", 0) or waiting:
            pending = state_answers.pending_answer(store, at, None).text
        opened = ""
        if counts.get("open", 0) or counts.get("blocked", 0):
            opened = state_answers.list_answer(store).text
    except (StoreError, sqlite3.Error, AttributeError, KeyError):
        return Facts()
    return Facts(pending, opened)


@functools.cache
def _vocabulary() -> Vocabulary:
    status = (normalize(t) for label, texts in EXAMPLES.items() if label != "none" for t in texts)
    return Vocabulary(status, (normalize(t) for t in EXAMPLES["none"]))


def status_like(text: str) -> bool:
    """Whether `text` reads as a question about the user's own state: not an order or a
    question about the world, no word only near misses use, at most one word no example uses,
    and at least one word that status questions are about."""
    core = normalize(text)
    if not core or elsewhere(core):
        return False
    near, unknown = _vocabulary().strangers(core)
    topical = [w for w in core.split() if w not in COMMON and w not in unknown]
    return not near and len(unknown) <= 1 and bool(topical)


class AnswerCheck:
    """Streams a model's answer through, holding each sentence until it is whole when the
    records hold something it could deny (`feed`, then `flush` at the end)."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.active = bool(facts.pending or facts.open_tasks)
        self.corrected = False
        self._held = ""

    @classmethod
    def for_turn(cls, store: Store | None, question: str) -> AnswerCheck:
        """The check for the answer to `question`: active only for a status-like question."""
        return cls(read_facts(store) if status_like(question) else Facts())

    def feed(self, text: str) -> str:
        """The text that may be said now; an unfinished sentence is held back."""
        if not self.active:
            return text
        self._held += text
        parts = _END.split(self._held)
        ends = [m.group(0) for m in _END.finditer(self._held)]
        self._held = parts[-1]
        said = (self._sentence(p) for p in parts[:-1])
        out = "".join(s + sep for s, sep in zip(said, ends, strict=True) if s)
        if len(self._held) > HOLD_CHARS:
            # No sentence end in sight (code, a list): checked as it stands and passed on, so
            # the answer keeps streaming and a spoken budget can still stop it.
            out += self._sentence(self._held)
            self._held = ""
        return out

    def flush(self) -> str:
        """What is still held, checked: the answer has ended."""
        held, self._held = self._held, ""
        return self._sentence(held) if held else ""

    def rewrite(self, text: str) -> str:
        """`text` as the check lets it through, whole: what the record keeps as the answer."""
        if not self.active:
            return text
        again = AnswerCheck(self.facts)
        return again.feed(text) + again.flush()

    def _sentence(self, sentence: str) -> str:
        correction = ""
        if self.facts.pending and _NOTHING_PENDING.search(sentence):
            correction = self.facts.pending
        elif self.facts.open_tasks and _EMPTY_LIST.search(sentence):
            correction = self.facts.open_tasks
        if not correction:
            return sentence
        # Said once: a second denial in the same answer is dropped, not corrected again.
        first = not self.corrected
        self.corrected = True
        return correction if first else ""
