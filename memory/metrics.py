"""Per-turn latency metrics (`store.metrics`): each turn's stage timings and the path it took."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memory.db import Records, guarded
from memory.log import by_session, session_key, to_session_id
from memory.rows import to_iso, utc_now


@dataclass(frozen=True)
class TurnMetricRow:
    id: int
    session_id: str
    turn_id: str
    path: str
    stages: dict[str, float]
    total_ms: float
    created_at: str
    extra: dict[str, Any] = field(default_factory=dict)


class Metrics(Records):
    table_name = "turn_metrics"

    @guarded
    def record(self, session_id: str, turn_id: str, stages: dict[str, float], path: str) -> int:
        """Store one turn's stage timings (milliseconds by stage name) and the path it took.

        The total is the `total_ms` stage where the caller measured one (stages may overlap,
        e.g. the model's first token falls inside the model stage); otherwise the stages' sum.
        """
        clean = {str(k): float(v) for k, v in stages.items()}
        return self.insert(
            {
                "session_n": session_key(session_id),
                "turn_id": turn_id,
                "path": path,
                "stages": json.dumps(clean),
                "total_ms": clean.get("total_ms", sum(clean.values())),
                "created_at": to_iso(utc_now()),
            }
        )

    @guarded
    def find(self, session_id: str | None = None, limit: int | None = None) -> list[TurnMetricRow]:
        """Turn metrics in the order they were recorded, of one session when given."""
        where, params = by_session(session_id)
        rows = self.table.rows_where(
            where, params, order_by="n", limit=int(limit) if limit is not None else None
        )
        return [
            TurnMetricRow(
                id=r["n"],
                session_id=to_session_id(r["session_n"]),
                turn_id=r["turn_id"],
                path=r["path"],
                stages=json.loads(r["stages"]),
                total_ms=r["total_ms"],
                created_at=r["created_at"],
            )
            for r in rows
        ]
