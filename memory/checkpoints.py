"""Compaction checkpoints (`store.checkpoints`): what a compaction kept, and the tail after it.

A checkpoint holds the structured state a compaction produced, its readable summary and the
ids of the events still shown verbatim after it; the next session resumes from the latest.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memory.db import Records, StoreBase, guarded
from memory.log import by_session, session_key, to_session_id
from memory.rows import CheckpointRow, make_id, to_iso, utc_now

if TYPE_CHECKING:
    from memory.episodes import Episodes


class Checkpoints(Records):
    """Checkpoints; a summary is also kept as an episode (`memory.episodes`) of its session."""

    table_name = "checkpoints"

    def __init__(self, store: StoreBase, episodes: Episodes | None = None) -> None:
        super().__init__(store)
        self.episodes = episodes

    @guarded
    def save(
        self,
        session_id: str,
        tier: int,
        data: dict[str, Any],
        summary: str,
        tail_event_ids: list[str],
    ) -> str:
        session_n = session_key(session_id)
        created_at = to_iso(utc_now())
        record = {
            "session_n": session_n,
            "tier": int(tier),
            "data": json.dumps(data, ensure_ascii=False),
            "summary": summary,
            "tail_event_ids": json.dumps(list(tail_event_ids)),
            "created_at": created_at,
        }
        with self.store.write():
            n = self.insert(record)
            if self.episodes is not None:
                self.episodes.summary(session_n, summary, make_id("checkpoints", n), created_at)
        return make_id("checkpoints", n)

    @guarded
    def latest(self, session_id: str | None = None) -> CheckpointRow | None:
        """The newest checkpoint, of `session_id` when given, else of any session."""
        where, params = by_session(session_id)
        rows = self.table.rows_where(where, params, order_by="n DESC", limit=1)
        row = next(iter(rows), None)
        return _checkpoint(row) if row is not None else None


def _checkpoint(row: dict[str, Any]) -> CheckpointRow:
    return CheckpointRow(
        id=make_id("checkpoints", row["n"]),
        session_id=to_session_id(row["session_n"]),
        tier=row["tier"],
        data=json.loads(row["data"]),
        summary=row["summary"],
        tail_event_ids=json.loads(row["tail_event_ids"]),
        created_at=row["created_at"],
    )
