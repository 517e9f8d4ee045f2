"""Full-text queries over notes: FTS5 MATCH expressions built safely from what a user said."""

from __future__ import annotations

import re

_TERM = re.compile(r"\w[\w\-./:#]*\w|\w", re.UNICODE)


# Function words match nearly every note; with OR semantics they would let a note that shares
# only "the" outrank a true paraphrase in the fused list. Dropped unless nothing else is left.
# fmt: off
STOPWORDS = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do",
    "does", "for", "from", "had", "has", "have", "he", "her", "him", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "she",
    "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "to", "too", "was", "we", "were", "what", "when", "where", "which", "who", "whom",
    "why", "will", "with", "would", "you", "your", "about", "any", "anything", "something",
    "get", "got", "tell", "show", "find",
])
# fmt: on


def fts_query(text: str) -> str:
    """A safe FTS5 MATCH expression: content terms quoted, joined by OR.

    Quoting makes FTS5 syntax characters inert; a term such as `INV-48213` stays a phrase
    ("inv 48213") so an exact identifier matches exactly.
    """
    terms = [t.replace('"', "") for t in _TERM.findall(text)]
    content = [t for t in terms if t.lower() not in STOPWORDS]
    return " OR ".join(f'"{t}"' for t in (content or terms) if t)
