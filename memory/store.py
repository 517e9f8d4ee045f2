"""The Store: Annie's one SQLite file and every typed record in it.

`Store(path)` opens (creating if needed) the file, switches it to WAL, and applies any
pending migrations; `Store()` is an in-memory database for quick tests. Each concern lives
in its own module and is mixed in here: the event log and sessions (`memory.log`), tasks and
reminders (`memory.work`), notes and hybrid search (`memory.search`), approvals
(`memory.approvals`) and the work index (`memory.projections`).
Any SQLite failure (a damaged, locked or unreadable file) surfaces as `StoreError`, whose
message names the file and what to do about it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memory.approvals import ApprovalsMixin
from memory.db import NotFoundError, StoreError
from memory.log import LogMixin, TurnMetricRow
from memory.projections import ProjectionsMixin
from memory.rows import (
    ApprovalRow,
    CheckpointRow,
    EventRow,
    Hit,
    NoteRow,
    ReminderRow,
    ScheduledItem,
    SessionRow,
    TaskRow,
    WorkIndex,
)
from memory.search import EmbedderLike, NotesMixin
from memory.work import WorkMixin

if TYPE_CHECKING:
    from config import Settings

__all__ = [
    "ApprovalRow",
    "CheckpointRow",
    "EventRow",
    "Hit",
    "NotFoundError",
    "NoteRow",
    "ReminderRow",
    "ScheduledItem",
    "SessionRow",
    "Store",
    "StoreError",
    "TaskRow",
    "TurnMetricRow",
    "WorkIndex",
]


class Store(LogMixin, WorkMixin, NotesMixin, ApprovalsMixin, ProjectionsMixin):
    """Annie's memory: one SQLite file (or memory, when `path` is None)."""

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        embedder: EmbedderLike | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        super().__init__(path, timeout_s=timeout_s)
        self._init_notes(embedder)

    @classmethod
    def open(cls, settings: Settings, *, embedder: EmbedderLike | None = None) -> Store:
        """The store at `settings.db_path` ($ANNIE_HOME/annie.db)."""
        return cls(settings.db_path, embedder=embedder)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.path_label!r})"
