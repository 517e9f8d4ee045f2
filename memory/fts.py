"""Full-text queries over notes: FTS5 MATCH expressions built safely from what a user said,
and the bm25 ranking with the filters notes are searched by (kind, written since/until)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memory.db import StoreBase, where_in
from memory.rows import to_iso

# Only current notes are found: a note a correction superseded is kept, never returned.
CURRENT = "superseded_by IS NULL"

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


def _filters(
    kinds: Iterable[str] | None,
    since: datetime | None,
    until: datetime | None,
    skip: Iterable[str] | None = None,
) -> tuple[str, list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if kinds is not None:
        kind_list = list(kinds)
        where.append(where_in("notes.kind", kind_list))
        params.extend(kind_list)
    if skip:
        skip_list = list(skip)
        where.append("NOT " + where_in("notes.kind", skip_list))
        params.extend(skip_list)
    if since is not None:
        where.append("notes.created_at >= ?")
        params.append(to_iso(since))
    if until is not None:
        where.append("notes.created_at < ?")
        params.append(to_iso(until))
    return "".join(f" AND {w}" for w in where), params


def rank_fts(
    store: StoreBase,
    query: str,
    kinds: list[str] | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    skip: list[str] | None = None,
) -> list[tuple[int, float]]:
    """(note key, -bm25) best first; FTS5 ranks and cuts before any row is read; `skip`:
    kinds left out. Called under the store's lock (by `memory.search.Notes`)."""
    match = fts_query(query)
    if not match:
        return []
    extra, params = _filters(kinds, since, until, skip)
    if extra:
        sql = (
            "SELECT notes_fts.rowid AS n, bm25(notes_fts) AS rank FROM notes_fts"
            " JOIN notes ON notes.n = notes_fts.rowid"
            f" WHERE notes_fts MATCH ?{extra} AND notes.{CURRENT} ORDER BY rank LIMIT ?"
        )
    else:
        # The superseded keys come from a partial index (a handful of rows), so the fast
        # path stays a pure FTS5 ranking without a join.
        sql = (
            "SELECT rowid AS n, rank FROM notes_fts WHERE notes_fts MATCH ?"
            " AND rowid NOT IN (SELECT n FROM notes WHERE superseded_by IS NOT NULL)"
            " ORDER BY rank LIMIT ?"
        )
    rows = store.all(sql, [match, *params, int(limit)])
    return [(int(r["n"]), -float(r["rank"])) for r in rows]
