"""The words of status questions, and the slots the state path reads out of them.

A classifier (`context.intents`) decides which status question a sentence asks; these rules
say what it may decide on. The vocabulary is learned from the labelled examples
(`context.intent_examples`): the words status questions are made of, and the words only the
near misses use ("server", "holiday", "wife"). A word the status examples never use is how a
sentence points somewhere else ("what's waiting for me at home", "what time is it in Tokyo"),
so a sentence holding a near-miss word, or more than one word nobody wrote, is not the state
path's to answer; with one unknown word the classifier may say it is likely a status
question ("unsure"), and the model answers it from the same state. Words are compared
by a light stem ("reminders", "reminded" and "remind" are one word). The day slot of a
schedule question ("tomorrow", "this week", "overdue") is read here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, get_args

# The status questions the state path answers.
Intent = Literal[
    "approvals",
    "pending",
    "list",
    "blocked",
    "schedule",
    "time",
    "date",
    "context",
    "remember",
    "find",
    "timers",
    "clock",
    "dates",
    "agenda",
]
INTENTS: tuple[Intent, ...] = get_args(Intent)
# The day a schedule or lookup question names ("upcoming" when it names none).
Day = Literal["today", "tomorrow", "week", "overdue", "upcoming"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words any question may be built from; none of them says what the question is about.
COMMON = _words(
    """
    what is are was were there any anything something some do does did i me my mine you your
    the a an have has had got get still right now currently at moment just please tell show
    give read check can could would will should shall may might must let know so like okay ok
    hey annie of for on in to it that this these those how many much which all yet else again
    be am we us our see status quick telling up out doing going looking look
    looks whats s who whom whose when where why with from by about into as or and but not no
    if than then off over few several next last somewhere anywhere anyone someone soon already
    almost nearly around between hit reach gonna wanna gotta lot lots bit little every each one
    two three four five really actually exactly even also very
    provide display contain contains specific correct actual exact refresh
    """
)
# An hour as said: "ten", "10:30", "noon" (a reminder's time; never a place).
HOUR_WORD = (
    r"(?:\d{1,2}(?::\d{2})?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|noon|midday|midnight)"
)
# Numbers, clock words and the calendar's names: a time, a day or a count is a slot, never
# what a question is about.
NUMBERS = _words(
    """
    zero six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
    eighteen nineteen twenty thirty forty fifty sixty hundred half quarter am pm oclock
    monday tuesday wednesday thursday friday saturday sunday january february march april may
    june july august september october november december
    """
)
# Irregular forms the suffix rules below cannot reach.
_IRREGULAR = {
    "heard": "hear", "said": "say", "told": "tell", "got": "get", "gotten": "get",
    "went": "go", "gone": "go", "done": "do", "did": "do", "made": "make", "left": "leave",
    "kept": "keep", "sent": "send", "thought": "think", "brought": "bring", "ran": "run",
    "saw": "see", "seen": "see", "been": "be", "had": "have", "has": "have", "days": "day",
    "people": "person",
}  # fmt: skip
_SUFFIXES = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """A light stem: "reminded" and "reminding" become "remind", "deadlines" "deadlin"."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    for suffix, repair in _SUFFIXES:
        if len(word) > 4 and word.endswith(suffix):
            return word[: -len(suffix)] + repair
    return word


def forms(word: str) -> frozenset[str]:
    """The word, its stem, the stem with the "e" a suffix took ("queued": "queue"), and with
    the consonant a suffix doubled undone ("cancelling": "cancel")."""
    base = stem(word)
    if base == word:
        return frozenset((word,))
    found = {word, base, base + "e"}
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiousz":
        found.add(base[:-1])
    return frozenset(found)


class Vocabulary:
    """The words of the status examples and of the near misses, by stem.

    `status` holds every word a status example uses; `near` the words only near misses use.
    Both come from the labelled examples, so a new example widens them, and nothing here
    lists words by hand beyond `COMMON`."""

    def __init__(self, status: Iterable[str], near: Iterable[str]) -> None:
        self.status = frozenset(w for text in status for w in text.split())
        self._status_forms = frozenset(f for w in self.status for f in forms(w))
        near_words = {w for text in near for w in text.split()} - self.status
        self.near = frozenset(w for w in near_words if not forms(w) & self._status_forms)
        self._near_forms = frozenset(f for w in self.near for f in forms(w))

    def strangers(self, core: str) -> tuple[list[str], list[str]]:
        """The words of normalized `core` outside the status vocabulary: those the near misses
        use, and those no example uses."""
        near: list[str] = []
        unknown: list[str] = []
        for word in core.split():
            if word in COMMON or word in NUMBERS or word.isdigit():
                continue
            found = forms(word)
            if found & self._status_forms:
                continue
            (near if found & self._near_forms else unknown).append(word)
        return near, unknown


# Capitalized words a status question may hold: the recognizer capitalizes names and places,
# which point a question away from the user's own records ("what's the time in Lisbon").
_PLAIN_CAPS = _words(
    """
    I I'm I'd I've I'll Annie OK Okay AM PM Monday Tuesday Wednesday Thursday Friday Saturday
    Sunday January February March April May June July August September October November December
    """
)
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


def names(text: str) -> list[str]:
    """Capitalized words after the first in raw `text` that are neither days nor "I"."""
    words = [w.removesuffix("'s").removesuffix("'") for w in _WORD.findall(text)]
    return [w for w in words[1:] if w[:1].isupper() and w not in _PLAIN_CAPS]


_WEEK = re.compile(r"\bweek\b")
_OVERDUE = re.compile(r"\b(?:overdue|past due|late|missed|behind)\b")


def day_word(core: str) -> str:
    """The day a schedule question names, in the anchored rules' terms."""
    if _OVERDUE.search(core):
        return "overdue"
    if "tomorrow" in core:
        return "tomorrow"
    if _WEEK.search(core):
        return "this week"
    if any(w in core for w in ("today", "tonight", "morning", "afternoon", "evening")):
        return "today"
    return ""
