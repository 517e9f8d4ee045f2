"""Notes and hybrid search (`store.notes`): FTS5 bm25 and embedding cosine, fused by rank.

Each note's embedding is computed once, when it is written, and stored beside it. Searching
embeds only the query; the stored vectors are read into one in-memory matrix the first time
and kept in step with later writes (this connection's writes update it directly; another
process's writes are noticed by the table's row count and highest id).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memory.db import NotFoundError, Records, RowMissing, StoreBase, guarded, where_in
from memory.fts import CURRENT, rank_fts
from memory.names import NameIndex
from memory.rows import (
    EPISODE_KINDS,
    NOTE_COLUMNS,
    Hit,
    NoteRow,
    make_id,
    note_row,
    parse_id,
    to_iso,
    utc_now,
)
from memory.vectors import NoteVectors, to_blob

# Reciprocal-rank fusion constant; 60 is the customary choice and damps the
# difference between rank 1 and rank 2 of either list.
RRF_K = 60
# How many candidates each method contributes before fusion.
CANDIDATES = 50


class EmbedderLike(Protocol):
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


_NOTE_COLUMNS = NOTE_COLUMNS


def _note(row: Any) -> NoteRow:
    return note_row(row)


class Notes(Records):
    """Notes with their embeddings, and hybrid search over them."""

    table_name = "notes"

    def __init__(self, store: StoreBase, embedder: EmbedderLike | None = None) -> None:
        super().__init__(store)
        # Set later by the runtime once the embedding model is loaded (writes then embed,
        # searches go hybrid); None keeps notes lexical.
        self.embedder = embedder
        self.vectors = NoteVectors(store)
        self.names = NameIndex(store)

    # --- writing ------------------------------------------------------------------------

    def add(
        self,
        text: str,
        kind: str = "note",
        source: str = "",
        embedding: npt.NDArray[np.float32] | None = None,
    ) -> str:
        """Store a note with its embedding (given, or computed once by the store's embedder)."""
        text = text.strip()
        if not text:
            raise ValueError("a note needs some text")
        if embedding is None and self.embedder is not None:
            # Embedded before taking the store lock: other readers need not wait on the model.
            embedding = self.embedder.embed([text])[0]
        return self.add_many(
            [{"text": text, "kind": kind, "source": source}],
            None if embedding is None else np.asarray(embedding, np.float32).reshape(1, -1),
        )[0]

    def add_many(
        self,
        rows: Sequence[dict[str, Any]],
        embeddings: npt.NDArray[np.float32] | None = None,
    ) -> list[str]:
        """Insert many notes in one transaction; `embeddings` has one row per note, in order.

        Each row has `text`, and may have `kind`, `source` and `created_at` (a datetime: when
        the note was written, for notes imported from elsewhere; now by default)."""
        if embeddings is None and self.embedder is not None and rows:
            embeddings = self.embedder.embed([str(r["text"]) for r in rows])
        if embeddings is not None and len(embeddings) != len(rows):
            raise ValueError(f"{len(rows)} notes but {len(embeddings)} embeddings")
        return self._insert(rows, embeddings)

    @guarded
    def _insert(
        self, rows: Sequence[dict[str, Any]], embeddings: npt.NDArray[np.float32] | None
    ) -> list[str]:
        for r in rows:
            if not str(r["text"]).strip():
                raise ValueError("a note needs some text")
        now = to_iso(utc_now())
        # A row may say when the note was written (an import, a generated memory); the time is
        # stored in the one UTC format, so date filters compare it as text.
        created = [to_iso(r["created_at"]) if r.get("created_at") else now for r in rows]
        ns: list[int] = []
        with self.store.write():
            for i, r in enumerate(rows):
                record = {
                    "kind": r.get("kind", "note"),
                    "source": r.get("source", ""),
                    "text": str(r["text"]),
                    "embedding": to_blob(embeddings[i]) if embeddings is not None else None,
                    "created_at": created[i],
                }
                ns.append(self.insert(record))
        self.vectors.written(
            ns,
            None if embeddings is None else np.asarray(embeddings, np.float32),
            [r.get("kind", "note") for r in rows],
            created,
        )
        return [make_id("notes", n) for n in ns]

    @guarded
    def get(self, note_id: str) -> NoteRow | None:
        rows = self.table.rows_where("n = ?", [parse_id("notes", note_id)], select=_NOTE_COLUMNS)
        return next((_note(r) for r in rows), None)

    @guarded
    def any(self) -> bool:
        """Whether any note exists (cheap: lets per-turn recall skip loading an embedder)."""
        return bool(self.store.all("SELECT 1 FROM notes LIMIT 1"))

    @guarded
    def names_among(self, words: Iterable[str]) -> tuple[dict[str, tuple[int, float]], int]:
        """Of `words`, those the notes use as names (`memory.names`; said in lower case, as a
        name of its own), each with how many current notes capitalize it and the share of its
        notes that do; and how many current notes there are."""
        index = self.names.current()
        found = {
            w.lower(): (len(index.mentions(w)), index.capitalized_share(w))
            for w in words
            if (index.is_name(w) if w[:1].isupper() else index.is_name_alone(w))
        }
        return found, index.total

    @guarded
    def newest_saying(self, phrases: Sequence[str], limit: int = 50) -> list[NoteRow]:
        """The current notes and the user's own words that hold any of `phrases`, newest
        first: what the user said of themselves, where the latest saying stands (Annie's words
        and session summaries are left out; they repeat, they do not tell)."""
        match = " OR ".join(f'"{p.replace(chr(34), "")}"' for p in phrases if p.strip())
        if not match:
            return []
        rows = self.store.all(
            f"SELECT {_NOTE_COLUMNS} FROM notes WHERE n IN"
            " (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?)"
            f" AND {CURRENT} AND (kind NOT IN ('episode', 'summary')"
            " OR (kind = 'episode' AND speaker = 'user')) ORDER BY n DESC LIMIT ?",
            (match, int(limit)),
        )
        return [_note(r) for r in rows]

    @guarded
    def mentioning(self, name: str) -> list[str]:
        """The ids of the current notes that spell `name` with a capital, oldest first."""
        return [make_id("notes", n) for n in self.names.current().mentions(name)]

    @guarded
    def scored(self, scores: Sequence[tuple[str, float]]) -> list[Hit]:
        """These notes (id, score) as hits, in the order given (ids no longer stored: left out)."""
        return self._hits([(parse_id("notes", i), s) for i, s in scores])

    @guarded
    def recent(self, limit: int = 5) -> list[NoteRow]:
        """The newest current notes, newest first (the next session's briefing lists them);
        episodes of what was said are not notes."""
        rows = self.table.rows_where(
            f"{CURRENT} AND kind NOT IN ({', '.join(repr(k) for k in EPISODE_KINDS)})",
            select=_NOTE_COLUMNS,
            order_by="n DESC",
            limit=int(limit),
        )
        return [_note(r) for r in rows]

    @guarded
    def supersede(self, old_id: str, new_id: str) -> NoteRow:
        """Mark `old_id` as corrected by `new_id`: kept, but no longer found or briefed.

        Returns the old note as it now stands. A note cannot supersede itself, and one that is
        already superseded stays with its first replacement (NotFoundError for unknown ids)."""
        old, new = parse_id("notes", old_id), parse_id("notes", new_id)
        if old == new:
            raise ValueError(f"{make_id('notes', old)} cannot supersede itself")
        with self.store.write():
            for n in (old, new):
                if self.row(n) is None:
                    raise NotFoundError(f"no note {make_id('notes', n)}")
            cur = self.store.conn.execute(
                "UPDATE notes SET superseded_by = ? WHERE n = ? AND superseded_by IS NULL",
                (new, old),
            )
        if cur.rowcount:
            self.vectors.superseded(old)
        row = self.table.rows_where("n = ?", [old], select=_NOTE_COLUMNS)
        return _note(next(iter(row)))

    @guarded
    def superseded_among(self, texts: Iterable[str]) -> set[str]:
        """Which of `texts` are the text of a superseded note (and of no current one)."""
        wanted = sorted(set(texts))
        if not wanted:
            return set()
        marks = ", ".join("?" for _ in wanted)
        rows = self.store.all(
            f"SELECT text, max(superseded_by IS NULL) AS live FROM notes WHERE text IN ({marks})"
            " GROUP BY text",
            wanted,
        )
        return {r["text"] for r in rows if not r["live"]}

    @guarded
    def delete(self, note_id: str) -> None:
        n = parse_id("notes", note_id)
        try:
            with self.store.write():
                self.table.delete(n)
        except RowMissing as exc:
            raise NotFoundError(f"no note {make_id('notes', n)}") from exc
        self.vectors.deleted(n)

    # --- searching ----------------------------------------------------------------------

    def _query_vector(self, query: str | npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        if not isinstance(query, str):
            return np.asarray(query, dtype=np.float32).reshape(-1)
        if self.embedder is None:
            raise ValueError("semantic search needs an embedder: Store(path, embedder=...)")
        return self.embedder.embed([query])[0]

    @guarded
    def search_fts(
        self,
        query: str,
        *,
        kinds: Iterable[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 10,
        written_only: bool = False,
    ) -> list[Hit]:
        """Lexical search: FTS5 bm25 (score = -bm25, higher is better). `written_only`: notes
        only, no episodes of what was said."""
        kind_list = list(kinds) if kinds is not None else None
        skip = list(EPISODE_KINDS) if written_only else None
        return self._hits(rank_fts(self.store, query, kind_list, since, until, limit, skip))

    @guarded
    def search_semantic(
        self,
        query: str | npt.NDArray[np.float32],
        *,
        kinds: Iterable[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 10,
    ) -> list[Hit]:
        """Cosine similarity between the query (text or its embedding) and stored embeddings."""
        qvec = self._query_vector(query)
        kind_list = list(kinds) if kinds is not None else None
        return self._hits(self.vectors.rank(qvec, kind_list, since, until, limit))

    def search(
        self,
        query: str,
        *,
        kinds: Iterable[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 10,
        vector: npt.NDArray[np.float32] | None = None,
        min_similarity: float | None = None,
        lexical_weight: float | None = None,
        written_only: bool = False,
    ) -> list[Hit]:
        """Hybrid search: bm25 and cosine candidates merged by reciprocal-rank fusion.

        The query is embedded once (or `vector` is its embedding, already computed), outside
        the store lock. With no embedder and no vector this is lexical search alone.
        `min_similarity` keeps only hits whose cosine similarity to the query reaches it:
        fused scores are ranks, so they say which note is best, never whether any note is
        relevant at all (what unprompted recall needs). It needs an embedder.

        With `lexical_weight` the candidates are ordered by score instead of rank: cosine
        similarity plus the weight times bm25 relative to the best lexical candidate's. Ranks
        treat a note that shares only a name with the query like one that answers it, so many
        notes about one person bury the one asked about; the cosine keeps them apart, and the
        lexical share still lifts an exact identifier the embedding hardly sees.

        Episodes (what was said) are searched with the notes unless `written_only`.
        """
        qvec: npt.NDArray[np.float32] | None = None
        if vector is not None or self.embedder is not None or min_similarity is not None:
            qvec = self._query_vector(vector if vector is not None else query)
        return self._fused(
            query,
            qvec,
            list(kinds) if kinds is not None else None,
            since,
            until,
            limit,
            min_similarity,
            lexical_weight,
            list(EPISODE_KINDS) if written_only else None,
        )

    @guarded
    def _fused(
        self,
        query: str,
        qvec: npt.NDArray[np.float32] | None,
        kinds: list[str] | None,
        since: datetime | None,
        until: datetime | None,
        limit: int,
        min_similarity: float | None = None,
        lexical_weight: float | None = None,
        skip: list[str] | None = None,
    ) -> list[Hit]:
        pool = max(CANDIDATES, limit)
        lexical = rank_fts(self.store, query, kinds, since, until, pool, skip)
        if qvec is None:
            return self._hits(lexical[:limit])
        semantic = self.vectors.rank(qvec, kinds, since, until, pool, skip)
        if lexical_weight is not None:
            return self._blended(qvec, lexical, semantic, limit, min_similarity, lexical_weight)
        fused: dict[int, float] = {}
        for ranked in (lexical, semantic):
            for rank, (n, _) in enumerate(ranked, start=1):
                fused[n] = fused.get(n, 0.0) + 1.0 / (RRF_K + rank)
        if min_similarity is not None:
            # A lexical hit outside the semantic pool is below every pooled cosine: out.
            cosine = dict(semantic)
            fused = {n: f for n, f in fused.items() if cosine.get(n, -1.0) >= min_similarity}
        # Ties (rare) go to the older note, so the order is stable run to run.
        order = sorted(fused, key=lambda n: (-fused[n], n))[:limit]
        # Only the final hits are read from the table.
        return self._hits([(n, fused[n]) for n in order])

    def _blended(
        self,
        qvec: npt.NDArray[np.float32],
        lexical: list[tuple[int, float]],
        semantic: list[tuple[int, float]],
        limit: int,
        min_similarity: float | None,
        weight: float,
    ) -> list[Hit]:
        cosine = dict(semantic)
        missing = [n for n, _ in lexical if n not in cosine]
        cosine.update(self.vectors.similarity(qvec, missing))
        best = max((b for _, b in lexical), default=0.0)
        bm25 = {n: b / best for n, b in lexical} if best > 0 else {}
        floor = -np.inf if min_similarity is None else min_similarity
        scored = {n: c + weight * bm25.get(n, 0.0) for n, c in cosine.items() if c >= floor}
        # Ties (rare) go to the older note, so the order is stable run to run.
        order = sorted(scored, key=lambda n: (-scored[n], n))[:limit]
        return self._hits([(n, scored[n]) for n in order])

    @guarded
    def embeddings(self, note_ids: Sequence[str], dim: int = 0) -> npt.NDArray[np.float32]:
        """The stored embeddings of these notes, one row each in order (zeros where none: an
        episode not embedded yet). `dim`: the width when no stored row tells it."""
        return self.vectors.rows([parse_id("notes", i) for i in note_ids], dim)

    # --- reading the hits ---------------------------------------------------------------

    def _hits(self, picked: list[tuple[int, float]]) -> list[Hit]:
        if not picked:
            return []
        ns = [n for n, _ in picked]
        rows = self.table.rows_where(where_in("n", ns), ns, select=_NOTE_COLUMNS)
        by_n = {r["n"]: r for r in rows}
        return [
            Hit(
                make_id("notes", n),
                by_n[n]["source"],
                by_n[n]["kind"],
                by_n[n]["text"],
                by_n[n]["created_at"],
                s,
            )
            for n, s in picked
            if n in by_n
        ]
