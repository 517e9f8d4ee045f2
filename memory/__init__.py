"""Annie's memory: one SQLite file with the event log, notes, tasks, approvals and projections."""

from memory.db import NotFoundError, StoreError
from memory.store import Store

__all__ = ["NotFoundError", "Store", "StoreError"]
