"""The approval ledger: the exact tool name and parameters a destructive action will run with.

An approval is created when a destructive tool is called; "yes" later executes the stored
parameters, never freshly generated ones. It expires after a time to live; an expired or
already resolved approval can never be executed.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from memory.db import NotFoundError, StoreBase, guarded
from memory.rows import APPROVAL_STATUSES, ApprovalRow, make_id, parse_id, to_iso, utc_now


def approval_row(row: Any) -> ApprovalRow:
    return ApprovalRow(
        id=make_id("approvals", row["n"]),
        tool=row["tool"],
        params=json.loads(row["params"]),
        requester=row["requester"],
        status=row["status"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        resolved_at=row["resolved_at"],
        result=row["result"],
    )


class ApprovalsMixin(StoreBase):
    @guarded
    def request_approval(
        self,
        tool: str,
        params: dict[str, Any],
        requester: str,
        ttl_s: float,
        now: datetime | None = None,
    ) -> str:
        """Record a proposed action with its exact parameters; returns the approval id."""
        if ttl_s <= 0:
            raise ValueError("an approval needs a positive time to live")
        start = now or utc_now()
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO approvals (tool, params, requester, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    tool,
                    json.dumps(params, ensure_ascii=False),
                    requester,
                    to_iso(start),
                    to_iso(start + timedelta(seconds=ttl_s)),
                ),
            )
        return make_id("approvals", int(cur.lastrowid or 0))

    @guarded
    def get_approval(self, approval_id: str) -> ApprovalRow | None:
        row = self._one(
            "SELECT * FROM approvals WHERE n = ?", (parse_id("approvals", approval_id),)
        )
        return approval_row(row) if row is not None else None

    @guarded
    def pending_approvals(self, now: datetime | None = None) -> list[ApprovalRow]:
        """Approvals still waiting for an answer and not yet expired, newest first."""
        rows = self._all(
            "SELECT * FROM approvals WHERE status = 'pending' AND expires_at > ? ORDER BY n DESC",
            (to_iso(now or utc_now()),),
        )
        return [approval_row(r) for r in rows]

    @guarded
    def latest_open_approval(self, requester: str | None = None) -> ApprovalRow | None:
        """The newest approval still marked pending, expired or not (so a late "yes" can be
        refused with the reason); only `requester`'s when given."""
        sql = "SELECT * FROM approvals WHERE status = 'pending'"
        params: list[Any] = []
        if requester is not None:
            sql += " AND requester = ?"
            params.append(requester)
        row = self._one(sql + " ORDER BY n DESC LIMIT 1", params)
        return approval_row(row) if row is not None else None

    @guarded
    def resolve_approval(
        self, approval_id: str, status: str, result: str = "", now: datetime | None = None
    ) -> ApprovalRow:
        """Move an approval out of `pending` (or record the outcome of an approved one).

        Only pending approvals can be approved, declined or expired; only approved ones can be
        marked executed or failed. Anything else raises ValueError, so an approval runs once.
        """
        if status not in APPROVAL_STATUSES or status == "pending":
            raise ValueError(
                f"status must be one of {', '.join(APPROVAL_STATUSES[1:])}, not '{status}'"
            )
        required = "approved" if status in ("executed", "failed") else "pending"
        n = parse_id("approvals", approval_id)
        with self._write() as c:
            cur = c.execute(
                "UPDATE approvals SET status = ?, resolved_at = ?, result = ?"
                " WHERE n = ? AND status = ?",
                (status, to_iso(now or utc_now()), result, n, required),
            )
        row = self.get_approval(approval_id)
        if row is None:
            raise NotFoundError(f"no approval {make_id('approvals', n)}")
        if cur.rowcount == 0:
            raise ValueError(
                f"approval {row.id} is {row.status}; it cannot become {status} "
                f"(only a {required} approval can)"
            )
        return row
