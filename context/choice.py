"""The user's answer to "which one?": an ordinal, or words that fit one candidate only.

When a reference fits several records, Annie names them and asks. The reply picks one by
position ("the second one", "number two", "the last one") or by what sets it apart ("the one
about the car", "the water one", "the gas bill for mum"): the words of the reply that some
candidates have and others lack must single out exactly one. Anything else picks nothing, and
the reply is an ordinary turn.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

_ORDINALS = {
    "first": 0, "1st": 0, "one": 0, "second": 1, "2nd": 1, "two": 1, "third": 2, "3rd": 2,
    "three": 2, "fourth": 3, "4th": 3, "four": 3, "fifth": 4, "5th": 4, "five": 4,
}  # fmt: skip
_BY_POSITION = re.compile(
    r"^(?:(?:it's|its|it is|i mean|oh|um|uh|the|that's|that is)\s+)*"
    r"(?:the\s+)?(?:(?P<ord>first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last)"
    r"(?:\s+one)?|(?:number|no\.?)\s+(?P<num>one|two|three|four|five|[1-5]))"
    r"(?:\s+(?:one|please|thanks))*$"
)
_FILLER = frozenset(
    ["the", "one", "a", "an", "about", "with", "for", "of", "that", "it's", "its", "it", "is",
     "i", "mean", "please", "thanks", "oh", "um", "uh", "my", "task", "note", "reminder"]
)  # fmt: skip


def _words(text: str) -> set[str]:
    found = re.findall(r"[a-z0-9']+", text.lower().replace("\u2019", "'"))
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in found}


def pick(reply: str, candidates: list[str]) -> int | None:
    """Which of `candidates` (as they were named) the reply picks, or None."""
    said = " ".join(reply.lower().replace("\u2019", "'").split()).strip(" .!?,")
    if not said or not candidates:
        return None
    position = _BY_POSITION.match(said)
    if position is not None:
        if position["ord"] == "last":
            return len(candidates) - 1
        key = position["ord"] or position["num"]
        index = _ORDINALS.get(key, int(key) - 1 if key.isdigit() else -1)
        return index if 0 <= index < len(candidates) else None
    asked = _words(said) - _FILLER
    if not asked:
        return None
    names = [_words(c) for c in candidates]
    shared = set.intersection(*names) if names else set()
    # Only the words that tell the candidates apart decide; the reply may not add others
    # (a reply about something else is not a choice).
    telling = asked - shared
    if not telling:
        return None
    fits = [i for i, name in enumerate(names) if telling <= name]
    return fits[0] if len(fits) == 1 else None


@dataclass
class _Open:
    ids: list[str]
    names: list[str]
    until: float  # time.monotonic() past which the question no longer stands


@dataclass
class Choices:
    """The "which one?" each session is waiting on: the candidates' ids and how they were
    named, for `ttl_s` seconds. A reply picks one (`picked`), or the question lapses."""

    ttl_s: float
    _open: dict[str, _Open] = field(default_factory=dict, repr=False)

    def ask(self, session_id: str, ids: list[str], names: list[str]) -> None:
        self._open[session_id] = _Open(ids, names, time.monotonic() + self.ttl_s)

    def waiting(self) -> bool:
        return bool(self._open)

    def picked(self, session_id: str, reply: str) -> tuple[str, str] | None:
        """The (id, name) the reply picks from this session's open question, or None."""
        found = self._open.get(session_id)
        if found is None or found.until < time.monotonic():
            return None
        index = pick(reply, found.names)
        return (found.ids[index], found.names[index]) if index is not None else None

    def close(self, session_id: str) -> None:
        self._open.pop(session_id, None)
