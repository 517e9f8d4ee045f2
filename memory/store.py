"""The Store: Annie's one SQLite file and every typed record in it.

`Store(path)` opens (creating if needed) the file, switches it to WAL, and applies any
pending migrations; `Store()` is an in-memory database for quick tests. The store itself is
the connection, its lock and its write path (`memory.db`); each kind of record is a small
object reached from it, defined in its own module: `store.sessions` and `store.events`
(`memory.log`), `store.checkpoints` (`memory.checkpoints`), `store.metrics`
(`memory.metrics`), `store.tasks` (`memory.work`), `store.reminders` (`memory.reminders`),
`store.notes` with hybrid search (`memory.search`), what was said in every conversation
(`store.episodes`, `memory.episodes`: rows of the notes table, found by the same search),
each note's provenance (`store.provenance`, `memory.provenance`),
`store.projections.work_index()` (`memory.projections`), `store.approvals`
(`memory.approvals`), what the user said about how they feel (`store.moods`,
`memory.mood`) and the paired devices with their hashed tokens (`store.devices`,
`memory.devices`).
Any SQLite failure (a damaged, locked or unreadable file) surfaces as `StoreError`, whose
message names the file and what to do about it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memory.approvals import Approvals
from memory.checkpoints import Checkpoints
from memory.db import NotFoundError, StoreBase, StoreError
from memory.devices import Devices
from memory.episodes import Episodes
from memory.log import Events, Sessions
from memory.metrics import Metrics, TurnMetricRow
from memory.mood import Moods
from memory.projections import Projections
from memory.provenance import Provenance
from memory.reminders import Reminders
from memory.rows import (
    ApprovalRow,
    CheckpointRow,
    EventRow,
    Hit,
    MoodRow,
    NoteRow,
    ReminderRow,
    ScheduledItem,
    SessionRow,
    TaskRow,
    WorkIndex,
)
from memory.search import EmbedderLike, Notes
from memory.work import Tasks

if TYPE_CHECKING:
    from config import Settings

__all__ = [
    "ApprovalRow",
    "CheckpointRow",
    "EventRow",
    "Hit",
    "MoodRow",
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


class Store(StoreBase):
    """Annie's memory: one SQLite file (or memory, when `path` is None)."""

    sessions: Sessions
    events: Events
    checkpoints: Checkpoints
    metrics: Metrics
    tasks: Tasks
    reminders: Reminders
    notes: Notes
    episodes: Episodes
    provenance: Provenance
    projections: Projections
    approvals: Approvals
    moods: Moods
    devices: Devices

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        embedder: EmbedderLike | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        super().__init__(path, timeout_s=timeout_s)
        self.notes = Notes(self, embedder)
        self.episodes = Episodes(self, self.notes)
        self.sessions = Sessions(self)
        self.events = Events(self, self.episodes)
        self.checkpoints = Checkpoints(self, self.episodes)
        self.metrics = Metrics(self)
        self.tasks = Tasks(self)
        self.reminders = Reminders(self)
        self.provenance = Provenance(self, self.notes)
        self.projections = Projections(self)
        self.approvals = Approvals(self)
        self.moods = Moods(self)
        self.devices = Devices(self)

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
