"""The in-memory matrix of stored note embeddings, kept in step with the file.

The vectors are read from the notes table once (they were computed when each note was
written) and updated in place by this connection's writes; another process's writes are
noticed by the table's row count, highest key and number of superseded notes, all cheap to
read at any size. Superseded notes (corrected by a later one) are left out of the matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memory.db import StoreBase
from memory.rows import to_iso


@dataclass
class _Vectors:
    """The in-memory copy of the stored embeddings, with what filters need beside them.

    `seen_rows` and `seen_max` are the notes table's row count and highest key as of this
    copy (all notes, embedded or not): both are cheap to read, and a mismatch means another
    connection wrote or deleted notes since.
    """

    ns: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    kinds: npt.NDArray[np.str_]
    created: npt.NDArray[np.str_]
    seen_rows: int
    seen_max: int
    seen_superseded: int = 0
    # Rows still without an embedding (an episode is written before it is embedded): fewer
    # than this, other than by this connection's own embedding, means another one embedded.
    seen_unembedded: int = 0

    @property
    def count(self) -> int:
        return int(self.ns.size)


def _empty_vectors() -> _Vectors:
    return _Vectors(
        np.zeros(0, np.int64),
        np.zeros((0, 0), np.float32),
        np.zeros(0, "<U1"),
        np.zeros(0, "<U1"),
        0,
        0,
    )


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    return np.asarray(vector, dtype=np.float32).reshape(-1).tobytes()


class NoteVectors:
    """The notes' embeddings as one matrix, owned by `store.notes` (called under its lock)."""

    def __init__(self, store: StoreBase) -> None:
        self.store = store
        self._vectors: _Vectors | None = None
        self._mark: tuple[int, int] | None = None  # the file's change mark when last checked

    def written(
        self,
        ns: list[int],
        matrix: npt.NDArray[np.float32] | None,
        kinds: list[str],
        created: list[str],
    ) -> None:
        """Notes this connection just inserted (with their embeddings, if any)."""
        if self._vectors is None or not ns:
            return
        if matrix is not None:
            self._append(ns, matrix, kinds, created)
        v = self._vectors
        v.seen_rows += len(ns)
        v.seen_max = max(v.seen_max, *ns)
        if matrix is None:
            v.seen_unembedded += len(ns)

    def embedded(
        self,
        ns: list[int],
        matrix: npt.NDArray[np.float32],
        kinds: list[str],
        created: list[str],
    ) -> None:
        """Rows this connection wrote earlier without an embedding, and has just embedded."""
        v = self._vectors
        if v is None or not ns:
            return
        self._append(ns, matrix, kinds, created)
        v = self._vectors
        assert v is not None
        # Keys stay sorted: `similarity` and `rows` find them by bisection.
        order = np.argsort(v.ns, kind="stable")
        self._vectors = _Vectors(
            v.ns[order],
            v.matrix[order],
            v.kinds[order],
            v.created[order],
            v.seen_rows,
            v.seen_max,
            v.seen_superseded,
            max(0, v.seen_unembedded - len(ns)),
        )

    def forget(self) -> None:
        """Drop the in-memory copy: the next search reads the file again (after a bulk write)."""
        self._vectors = None
        self._mark = None

    def deleted(self, n: int) -> None:
        """A note this connection just deleted."""
        v = self._vectors
        if v is None:
            return
        keep = v.ns != n
        self._vectors = _Vectors(
            v.ns[keep],
            v.matrix[keep],
            v.kinds[keep],
            v.created[keep],
            v.seen_rows - 1,
            v.seen_max,
            v.seen_superseded,
            v.seen_unembedded,
        )

    def superseded(self, n: int) -> None:
        """A note this connection just marked superseded: it leaves the matrix, not the file."""
        v = self._vectors
        if v is None:
            return
        self.deleted(n)
        v = self._vectors
        assert v is not None
        v.seen_rows += 1
        v.seen_superseded += 1

    def rank(
        self,
        qvec: npt.NDArray[np.float32],
        kinds: list[str] | None,
        since: datetime | None,
        until: datetime | None,
        limit: int,
        skip: list[str] | None = None,
    ) -> list[tuple[int, float]]:
        """(note key, cosine) best first, over the in-memory matrix; `skip`: kinds left out."""
        v = self._current()
        if v.count == 0:
            return []
        # einsum's own loop, not BLAS: one 10,000 x 384 product takes well under a millisecond
        # on one core, while a multi-threaded BLAS call stalls for tens of milliseconds
        # whenever the other cores are busy (the usual case beside speech and the model).
        scores = np.einsum("ij,j->i", v.matrix, qvec)
        if kinds is not None or since is not None or until is not None or skip:
            # Filter by masking scores: indexing the matrix would copy all of it per query.
            mask = np.ones(v.count, dtype=bool)
            if kinds is not None:
                mask &= np.isin(v.kinds, kinds)
            if skip:
                mask &= ~np.isin(v.kinds, skip)
            if since is not None:
                mask &= v.created >= to_iso(since)
            if until is not None:
                mask &= v.created < to_iso(until)
            scores = np.where(mask, scores, -np.inf)
            available = int(mask.sum())
        else:
            available = v.count
        k = min(limit, available)
        if k == 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(int(v.ns[i]), float(scores[i])) for i in top]

    def similarity(self, qvec: npt.NDArray[np.float32], ns: list[int]) -> dict[int, float]:
        """Cosine between the query and each of the notes `ns` that has an embedding."""
        v = self._current()
        if not ns or v.count == 0:
            return {}
        # Keys are appended in increasing order (deletions keep it), so the rows are found by
        # bisection rather than a dictionary kept beside the matrix.
        wanted = np.asarray(ns, np.int64)
        at = np.minimum(np.searchsorted(v.ns, wanted), v.count - 1)
        found = v.ns[at] == wanted
        scores = np.einsum("ij,j->i", v.matrix[at[found]], qvec)
        return {int(n): float(c) for n, c in zip(wanted[found], scores, strict=True)}

    def rows(self, ns: list[int], dim: int = 0) -> npt.NDArray[np.float32]:
        """The embeddings of the notes `ns`, in order; a zero row for a note without one
        (`dim` wide when no note has one yet)."""
        v = self._current()
        out = np.zeros((len(ns), v.matrix.shape[1] if v.count else dim), np.float32)
        if not ns or v.count == 0:
            return out
        wanted = np.asarray(ns, np.int64)
        at = np.minimum(np.searchsorted(v.ns, wanted), v.count - 1)
        found = v.ns[at] == wanted
        out[found] = v.matrix[at[found]]
        return out

    def _current(self) -> _Vectors:
        """The matrix, brought up to date with the file (called under the store lock)."""
        mark = self.store.change_mark()
        if self._vectors is not None and mark == self._mark:
            return self._vectors
        self._mark = mark
        # count(*) reads the small kind index and max(n) the end of the key: both stay cheap
        # at any size, unlike a scan of the embedding column.
        stats = self.store.one(
            "SELECT count(*) AS c, coalesce(max(n), 0) AS m,"
            " (SELECT count(*) FROM notes WHERE superseded_by IS NOT NULL) AS s,"
            " (SELECT count(*) FROM notes WHERE embedding IS NULL) AS u FROM notes"
        )
        now = (
            (int(stats["c"]), int(stats["m"]), int(stats["s"]), int(stats["u"]))
            if stats is not None
            else (0,) * 4
        )
        v = self._vectors
        if v is not None and (
            (v.seen_rows, v.seen_max, v.seen_superseded, v.seen_unembedded) == now
        ):
            return v
        rows_now, max_now, superseded_now, unembedded_now = now
        if (
            v is None
            or superseded_now != v.seen_superseded
            or rows_now != v.seen_rows + self._count_after(v.seen_max)
            or unembedded_now != v.seen_unembedded + self._unembedded_after(v.seen_max)
        ):
            # Nothing loaded yet, or notes were deleted, superseded or embedded elsewhere:
            # read all.
            self._vectors = v = _empty_vectors()
        rows = self.store.all(
            "SELECT n, kind, created_at, embedding FROM notes"
            " WHERE n > ? AND embedding IS NOT NULL AND superseded_by IS NULL ORDER BY n",
            (v.seen_max,),
        )
        if rows:
            matrix = np.vstack([np.frombuffer(r["embedding"], dtype=np.float32) for r in rows])
            self._append(
                [int(r["n"]) for r in rows],
                matrix,
                [r["kind"] for r in rows],
                [r["created_at"] for r in rows],
            )
        v = self._vectors
        assert v is not None
        v.seen_rows, v.seen_max, v.seen_superseded = rows_now, max_now, superseded_now
        v.seen_unembedded = unembedded_now
        return v

    def _count_after(self, n: int) -> int:
        row = self.store.one("SELECT count(*) AS c FROM notes WHERE n > ?", (n,))
        return int(row["c"]) if row is not None else 0

    def _unembedded_after(self, n: int) -> int:
        row = self.store.one(
            "SELECT count(*) AS c FROM notes WHERE n > ? AND embedding IS NULL", (n,)
        )
        return int(row["c"]) if row is not None else 0

    def _append(
        self,
        ns: list[int],
        matrix: npt.NDArray[np.float32],
        kinds: list[str],
        created: list[str],
    ) -> None:
        v = self._vectors
        if v is None or not ns:
            # Not loaded yet: the first search reads everything from the file.
            return
        if v.count and matrix.shape[1] != v.matrix.shape[1]:
            raise ValueError(
                f"embedding has {matrix.shape[1]} dimensions; stored notes have {v.matrix.shape[1]}"
            )
        self._vectors = _Vectors(
            np.concatenate([v.ns, np.asarray(ns, np.int64)]),
            np.vstack([v.matrix, matrix]) if v.count else np.array(matrix, np.float32),
            np.concatenate([v.kinds, np.asarray(kinds)]),
            np.concatenate([v.created, np.asarray(created)]),
            v.seen_rows,
            v.seen_max,
            v.seen_superseded,
            v.seen_unembedded,
        )
