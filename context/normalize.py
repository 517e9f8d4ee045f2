"""Spoken text made comparable: what the state path's rules and classifier read.

Lower case, contractions expanded, punctuation dropped, hesitations and polite openers and
closers stripped ("um, so, could you tell me what's pending, please?" becomes "what is
pending"), and the speech-recognition slips that status questions suffer repaired in the
phrases where they occur.
"""

from __future__ import annotations

import re
import unicodedata

_CONTRACTIONS = {
    "what's": "what is",
    "whats": "what is",
    "what're": "what are",
    "where's": "where is",
    "when's": "when is",
    "how's": "how is",
    "there's": "there is",
    "theres": "there is",
    "it's": "it is",
    "i've": "i have",
    "i'm": "i am",
    "don't": "do not",
    "dont": "do not",
    "doesn't": "does not",
    "isn't": "is not",
    "aren't": "are not",
    "who's": "who is",
    "i'd": "i would",
    "you're": "you are",
    "we're": "we are",
    "they're": "they are",
    "that's": "that is",
    "day's": "day is",
    "time's": "time is",
    "full's": "full is",
    "anything's": "anything is",
    "to-do": "todo",
    "to-dos": "todos",
    "to do": "todo",
    "to dos": "todos",
}
_CONTRACTION_RE = re.compile(
    r"\b(" + "|".join(re.escape(k) for k in sorted(_CONTRACTIONS, key=len, reverse=True)) + r")\b"
)

_OPENERS = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|so|um+|uh+|er+|erm|hmm+|well|oh|alright|like|right|annie|"
    r"please|quick question|excuse me|you know|i mean|basically|actually|"
    # Preambles that set the scene, not the question: "before I head out, ...".
    r"before i (?:forget|go|leave|head out|head off|run|jump in the car|log off|sign off)|"
    r"while i remember|while i think of it|one more thing|real quick|quick one|"
    r"(?:would you mind|(?:can|could) you) (?:telling|tell) me|i would like to know|"
    r"(?:can|could|would|will) you (?:please )?(?:tell|let) me|(?:can|could|would|will) you "
    r"(?:please )?(?:check|say)|(?:please )?tell me|do you know|i (?:want|would like|need) to know|"
    r"let me know|(?:please )?check|remind me of|just|and|but|also)\b ?)+"
)
_CLOSERS = re.compile(
    r"(?: ?\b(?:please|annie|thanks|thank you|right now|at the moment|currently|then|now|"
    r"for me|again|exactly|roughly|approximately|by any chance|real quick))+$"
)
# Hesitations carry no meaning anywhere in a sentence; "like" only where speech pauses
# around it (", like,"), since "what does my week look like" needs it.
_HESITATIONS = re.compile(r"\b(?:um+|uh+|erm|er|hmm+|uhm)\b")
_PAUSED_LIKE = re.compile(r",\s*like\s*,")
# Speech-recognition slips seen on status questions, repaired only in the phrases where they
# occur: "what am I spending on groceries" keeps its meaning, "tasks spending on me" does not.
_SLIPS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), r) for p, r in (
        (r"\b(tasks?|items?|what is|anything|is anything|stuff) (?:spending|bending)"
         r"(?= on\b| for\b|$)", r"\1 pending"),
        (r"\b(?:spending|bending) (on|for) me\b", r"pending \1 me"),
        (r"^(?:spending|bending)$", "pending"),
        (r"\b(on|for) (?:mi|ma|knee)$", r"\1 me"),
        (r"\bremainders?\b", "reminders"),
        (r"\bcalender\b", "calendar"),
        (r"\btoo morrow\b", "tomorrow"),
        (r"\bto day\b", "today"),
        (r"^what time is not$", "what time is it"),
        (r"\bon my (?:least|lisp|lest)\b", "on my list"),
        (r"^what is block$", "what is blocked"),
        (r"\b(full is|is|how full is) (the|your) contacts\b", r"\1 \2 context"),
        (r"\bwhat is the data today\b", "what is the date today"),
    )
]  # fmt: skip


# Verbs that ask to be shown something, said as the one the rules know: "display my reminders",
# "bring up my calendar" ask what "show my reminders" asks. Only at the start, where they are the
# request's own verb ("how do I bring up a teenager" is not one). ("Pull up" is in the
# classifier's examples as said, so it stays as said.)
_SHOW = re.compile(r"^(?:display|bring up)\b")


# Letters NFKD does not take apart into a base letter and a mark.
_LETTERS = str.maketrans({"ð": "d", "þ": "th", "æ": "ae", "ø": "o", "ß": "ss", "ł": "l", "œ": "oe"})


def fold(text: str) -> str:
    """Lower case with accents and ligatures folded to plain letters: "Sigrún" and "Magnússon"
    are said, heard and matched as "sigrun" and "magnusson"."""
    low = text.lower().translate(_LETTERS)
    return "".join(c for c in unicodedata.normalize("NFKD", low) if not unicodedata.combining(c))


def plain_words(text: str) -> str:
    """Lower case, contractions expanded, punctuation dropped: every word as said, the fillers
    and openers that `normalize` strips kept ("let me know when it is ten", "hear it again")."""
    low = fold(text).replace("\u2019", "'").replace("\u2018", "'").strip()
    low = _PAUSED_LIKE.sub(" ", low)
    low = _CONTRACTION_RE.sub(lambda m: _CONTRACTIONS[m.group(1)], low)
    low = re.sub(r"[^a-z0-9' ]+", " ", low)
    low = low.replace("'", " ")
    low = re.sub(r"\s+", " ", low).strip()
    # Contractions again: "to-do" became "to do" only once the hyphen was dropped.
    return _CONTRACTION_RE.sub(lambda m: _CONTRACTIONS[m.group(1)], low)


def normalize(text: str) -> str:
    """Lower case, contractions expanded, punctuation dropped, fillers stripped."""
    low = re.sub(r"\s+", " ", _HESITATIONS.sub(" ", plain_words(text))).strip()
    for slip, repair in _SLIPS:
        low = slip.sub(repair, low)
    prev = None
    while prev != low:
        prev = low
        low = _OPENERS.sub("", low).strip()
        low = _CLOSERS.sub("", low).strip()
    return _SHOW.sub("show", low)
