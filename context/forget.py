"""The user asking to delete a note by what it says: "delete the note about the gate code",
"forget the note on Leo's allergy".

The words after "about" name the note; the notes that hold every one of them (folded as a
task's words are, `context.done_claims.forms`) fit. `bot.turn.answers` asks: one note is
deleted only on the user's yes, as every deletion is; when several fit they are named and the
user's pick says which.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from context.done_claims import forms

if TYPE_CHECKING:
    from memory.rows import NoteRow

_FORGET = re.compile(
    r"^(?:(?:please|can you|could you|annie)[,\s]+)*(?:delete|remove|erase|forget|drop)\s+"
    r"(?:the\s+|my\s+|that\s+)?notes?\s+(?:about|on|with|that says|saying|for)\s+(?P<what>.+)$"
)
_FILLER = frozenset(["the", "a", "an", "my", "our", "your", "his", "her", "their", "its", "of"])


def named(text: str) -> list[str] | None:
    """The words a request to delete a note names it by, or None if it is not one."""
    said = " ".join(text.lower().replace("\u2019", "'").split()).strip(" .!")
    if "?" in said:
        return None
    found = _FORGET.match(said)
    if found is None:
        return None
    what = re.sub(r"'s\b", "", found["what"])
    words = [w for w in re.findall(r"[a-z0-9]+", what) if w not in _FILLER]
    return words or None


def fitting(words: list[str], notes: list[NoteRow]) -> list[NoteRow]:
    """The notes that hold every named word (current ones only)."""
    out = []
    for note in notes:
        if note.superseded_by:
            continue
        have: set[str] = set()
        for word in re.findall(r"[a-z0-9]+", re.sub(r"'s\b", "", note.text.lower())):
            have |= forms(word)
        if all(forms(w) & have for w in words):
            out.append(note)
    return out
