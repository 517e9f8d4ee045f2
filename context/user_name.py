"""What Annie calls the user: "what do you call me?", "what's my name?", read from what they said.

The name is read from the user's own words and from notes, newest first, so "actually, call me
Sam" said today stands over "my name is Samuel" noted last month: "my name is X", "call me X",
"I go by X", and a note's third person ("prefers to be called X"). A saying that is turned down
("don't call me Samuel") or is not a name ("call me back", "call me when you land") names
nothing. With no saying anywhere, Annie says she has not been told, never a guess; the user's
words are kept as episodes (`memory.episodes`), so telling her once is enough for every later
session. The answer (`context.state_answers.name_answer`) names the note or episode it read, so
an answer read from a private one is private too.
"""

from __future__ import annotations

import re

# Questions asking what the user is called, on normalized text (`context.normalize`), anchored:
# "what is my name on the lease" is about a document, and no rule here fits it.
_QUESTIONS = [
    re.compile(
        r"(?:what|how) (?:do|did|will|would|should|shall|are) you (?:supposed to |going to )?"
        r"(?:call|address|name) me(?: by)?"
    ),
    re.compile(
        r"(?:what is |what was |remind me |tell me )?my (?:first |preferred )?(?:name|nickname)"
    ),
    re.compile(r"(?:remind me |tell me |say )?what my (?:first |preferred )?name is"),
    re.compile(r"what did i (?:say|tell you) my (?:first |preferred )?name (?:is|was)"),
    re.compile(
        r"what (?:name|nickname) (?:do|did|should|will) (?:i go by|you (?:call me|have for me"
        r"|use for me|know me by))"
    ),
    re.compile(
        r"(?:do|did) you (?:know|remember) (?:my name|what (?:to call me|my name is"
        r"|i am called|i like to be called))"
    ),
]
# The phrases a naming saying holds, as the full-text index is asked for them: only rows with
# one are read, and phrases rather than "name" or "called" alone, so the newest of them are
# sayings ("I called the plumber", "the restaurant's name" are not read at all).
PHRASES = ("my name", "user s name", "call me", "go by", "goes by", "be called", "am called",
           "m called")  # fmt: skip
_NAME = r"(?P<name>[A-Za-z][A-Za-z'\-]*(?: [A-Z][A-Za-z'\-]*)?)"
_SAYINGS = re.compile(
    r"(?:\b(?P<neg>don't|do not|never|stop|please don't)\s+)?"
    r"\b(?:my (?:first |preferred )?name(?: is|'s| =|:)|(?:the )?user's (?:first |preferred )?"
    r"name(?: is|:)|call me|i go by|i'm called|i am called|(?:likes|prefers|wants|asked) to be "
    r"called|goes by)\s+" + _NAME,
    re.IGNORECASE,
)
# Words after "call me" that are not a name ("call me back", "call me when ...").
_NOT_NAMES = frozenset([
    "back", "later", "when", "if", "a", "an", "the", "at", "tomorrow", "tonight", "in", "on",
    "after", "before", "now", "soon", "again", "crazy", "maybe", "please", "anytime", "any",
    "whenever", "up", "out", "that", "this", "it", "to", "for", "from", "with", "by", "and", "or",
    "but", "not", "so", "just", "sometime", "right", "sir", "madam", "ma'am", "whatever",
    "anything", "something", "nothing",
])  # fmt: skip


def name_question(core: str) -> bool:
    """Whether normalized `core` asks what Annie calls the user."""
    return any(rule.fullmatch(core) for rule in _QUESTIONS)


def name_in(text: str) -> str | None:
    """The name the last naming saying in `text` gives, or None ("don't call me X" gives none)."""
    found: str | None = None
    for m in _SAYINGS.finditer(text):
        name = m.group("name")
        first = name.split(" ", 1)[0]
        if first.lower() in _NOT_NAMES:
            continue
        if m.group("neg"):
            found = None  # turned down: an earlier name in the same breath is not it either
            continue
        # A second word is part of the name only when it is capitalized ("Mary Ann").
        found = first if not name[len(first) :].strip()[:1].isupper() else name
        found = found[:1].upper() + found[1:]
    return found
