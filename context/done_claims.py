"""The user saying something is already done that the records hold as still open.

"I already paid the gas bill" while the task "pay the gas bill" is open is a contradiction
with the records: noticed by rule, said with both sides, and changed only on the user's yes.
This module reads the claim and finds the open tasks it fits; `bot.turn.answers` asks.

A claim is the whole utterance: a past tense said of the user ("I paid the gas bill", "I've
already sent the forms", "we finally did the laundry") or a thing said to be done ("the gas
bill is paid", "the forms are sent"). A question, a negation, a plan ("I will pay") or a
sentence that goes on to ask for something else is not a claim. A task fits when every word
that carries its meaning (its verb and its objects, folded to their base forms) is in the
claim: "paid the gas bill" fits "pay the gas bill" and "gas bill", not "pay the water bill".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.rows import TaskRow

# Past forms that are not the base form plus -ed.
_IRREGULAR = {
    "paid": "pay", "did": "do", "done": "do", "sent": "send", "bought": "buy", "made": "make",
    "took": "take", "taken": "take", "went": "go", "gone": "go", "got": "get", "gotten": "get",
    "wrote": "write", "written": "write", "gave": "give", "given": "give", "sold": "sell",
    "met": "meet", "found": "find", "brought": "bring", "told": "tell", "left": "leave",
    "put": "put", "set": "set", "ran": "run", "run": "run", "drove": "drive", "driven": "drive",
    "ate": "eat", "read": "read", "rang": "ring", "rung": "ring", "spoke": "speak",
    "spoken": "speak", "fed": "feed", "hung": "hang", "swept": "sweep", "built": "build",
    "sorted": "sort", "kept": "keep", "cut": "cut", "won": "win",
}  # fmt: skip
# Words that say nothing of which task: articles, pronouns, fillers.
_FILLER = frozenset([
    "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "this", "that",
    "these", "those", "to", "for", "of", "on", "in", "at", "with", "and", "or", "up", "out",
    "off", "all", "some", "any", "it", "them", "already", "just", "finally", "now", "today",
    "yesterday", "earlier", "morning", "last", "night", "week",
])  # fmt: skip
_LEAD = r"(?:(?:oh|ok|okay|so|well|by the way|btw|fyi|just so you know|good news)[,\s]+)*"
_SUBJECT = r"(?:i|we)(?:'ve|\s+(?:have|already|just|finally|actually|went and))*"
_PAST = re.compile(
    rf"^{_LEAD}{_SUBJECT}\s+(?P<verb>[a-z]+)\s+(?P<rest>[a-z0-9' \-]+?)"
    r"(?:\s+(?:already|today|yesterday|earlier|this morning|last night))?$",
)
_STATE = re.compile(
    rf"^{_LEAD}(?P<rest>[a-z0-9' \-]+?)(?:\s+(?:is|are|has been|have been)|'s)\s+"
    r"(?:already\s+|all\s+|finally\s+)?(?P<verb>paid|done|sent|booked|sorted|fixed|finished|"
    r"handled|cleaned|returned|renewed|filed|submitted|signed|posted|mailed|bought|ordered)"
    r"(?:\s+(?:already|today|now))?$"
)
# The user telling Annie to mark it: "mark the report done", "tick off the gas bill",
# "the report task is complete, mark it off" is two sentences and not this.
_COMMAND = re.compile(
    rf"^{_LEAD}(?:(?:please|can you|could you)\s+)*"
    r"(?:mark|tick|check|cross)\s+(?:off\s+)?(?P<rest>[a-z0-9' \-]+?)"
    r"(?:\s+(?:as\s+)?(?:done|complete|completed|finished|off))?(?:\s+please)?$"
)
_TOLD_TOO = re.compile(
    r"\s*(?:and\s+|so\s+)?(?:please\s+)?(?:tick|mark|cross|check)\s+it\s+"
    r"(?:off|done|as done)(?:\s+please)?$"
)
_NOT = re.compile(r"\b(?:not|never|n't|didn|haven|wasn|won't|will|gonna|going to|should|might)\b")
# Words that go on to ask or tell something else: the claim is not the whole utterance.
_MORE = re.compile(
    r"\b(?:what|when|where|who|how|why|which|can you|could you|would you|please|remind|"
    r"tell me|and then|but|so now|add|also)\b"
)


@dataclass(frozen=True)
class Claim:
    """What the user says is done, as base-form words."""

    words: frozenset[str]
    said: str  # the claim as said, for the answer
    # Told to mark it ("mark the report done"), not said to be done already: the words it
    # names the task by, each of which the task must have.
    named: tuple[str, ...] = ()
    # Said done and told to mark it in one breath ("I paid the plumber, tick it off").
    told: bool = False

    @property
    def command(self) -> bool:
        return bool(self.named) or self.told

    def fits(self, title: str) -> bool:
        """Whether the task titled `title` is what the claim says is done (or names)."""
        if self.named:
            have: set[str] = set()
            for word in _words(title):
                have |= forms(word)
            return all(forms(word) & have for word in self.named)
        needed = meaning_words(title)
        return bool(needed) and needed <= self.words and len(needed - _VERBS_ONLY) > 0


# A fit needs more than a verb in common ("do" alone fits every "do ..." task).
_VERBS_ONLY = frozenset(_IRREGULAR.values()) | {"call", "book", "fix", "clean", "finish"}


def forms(word: str) -> set[str]:
    """The base forms a word may stand for ("filed": file; "stopped": stop; "bills": bill):
    a claim's words are matched against a task's through these."""
    if word in _IRREGULAR:
        return {_IRREGULAR[word]}
    if len(word) > 4 and word.endswith("ied"):
        return {word[:-3] + "y"}
    if len(word) > 4 and word.endswith("ed"):
        stem = word[:-2]
        found = {stem, stem + "e"}
        if len(stem) > 2 and stem[-1] == stem[-2]:
            found.add(stem[:-1])
        return found
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return {word, word[:-1]}
    return {word}


def _words(text: str) -> list[str]:
    found = re.findall(r"[a-z0-9']+", text.lower().replace("\u2019", "'"))
    return [w for w in found if w not in _FILLER]


def meaning_words(title: str) -> frozenset[str]:
    """A task title's words that carry its meaning, in their base forms."""
    return frozenset(min(forms(w), key=len) if w.endswith("s") else w for w in _words(title))


def claim(text: str) -> Claim | None:
    """What the user says is already done, if the whole utterance says so."""
    said = " ".join(text.lower().replace("\u2019", "'").split()).strip(" .!")
    if not said or "?" in said or _NOT.search(said):
        return None
    said = said.replace(",", "")
    told = _COMMAND.match(said)
    if told is not None and not _MORE.search(told["rest"]):
        rest = [w for w in _words(told["rest"]) if w not in ("task", "item", "one")]
        if not rest:
            return None
        return Claim(frozenset(rest), said, named=tuple(rest))
    told_too = _TOLD_TOO.search(said) is not None
    said = _TOLD_TOO.sub("", said).strip()
    if _MORE.search(said):
        return None
    for pattern in (_PAST, _STATE):
        found = pattern.match(said)
        if found is None:
            continue
        verb = found["verb"]
        # A past tense: "I call the plumber on Fridays" is a habit, not a claim.
        if pattern is _PAST and forms(verb) == {verb}:
            continue
        rest = _words(found["rest"])
        if not rest:
            return None
        found_words = set(forms(verb))
        for word in rest:
            found_words |= forms(word)
        return Claim(frozenset(found_words), said, told=told_too)
    return None


def fitting(said: Claim, tasks: list[TaskRow]) -> list[TaskRow]:
    """The open tasks the claim says are done."""
    return [t for t in tasks if said.fits(t.title)]
