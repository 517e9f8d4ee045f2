"""Opening the SQLite file; every SQLite failure becomes a `StoreError` a person can act on.

One connection per `Store`, shared by threads under a lock. `StoreBase` is that connection, its
lock and its write path; the record modules (`memory.log`, `memory.work`, `memory.search`...)
are small objects that hold the store and do their work through these. Writes run in
`BEGIN IMMEDIATE`
transactions (one per logical write, so a killed process loses nothing it committed); the
file is in WAL mode with `synchronous=FULL`, so a commit survives a crash of the process and
of the machine.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlite_utils import Database
from sqlite_utils.db import NotFoundError as RowMissing
from sqlite_utils.db import Table

from memory.migrations import migrations

P = ParamSpec("P")
R = TypeVar("R")


class StoreError(RuntimeError):
    """The database file cannot be used; the message names the file and what to do."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class NotFoundError(LookupError):
    """A record id that does not exist (or no longer exists)."""


_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def _errno(exc: BaseException) -> int | None:
    return exc.errno if isinstance(exc, OSError) else None


def explain(path: str, exc: BaseException) -> StoreError:
    """A StoreError for an SQLite failure on `path`: what went wrong and what to do."""
    reason = str(exc) or type(exc).__name__
    low = reason.lower()
    if "locked" in low or "busy" in low:
        advice = (
            "another process holds a lock on it (is another Annie running?). "
            "Close that process or wait, then try again; what was saved before is kept"
        )
    elif "full" in low or "no space" in low or "too large" in low or _errno(exc) in _FULL:
        # SQLITE_FULL, ENOSPC, EFBIG (a file size limit): the write was rolled back whole.
        advice = (
            "the disk holding it is full (or a file size limit was reached). Free some "
            "space and try again; what was saved before is kept, only this change was not"
        )
    elif "disk i/o" in low:
        advice = "the disk reported an I/O error; check the disk and free space, then retry"
    elif "not a database" in low or "malformed" in low or "corrupt" in low:
        advice = (
            f"the file is damaged or is not an Annie database. Move it aside "
            f"(mv '{path}' '{path}.broken') and Annie starts a fresh one, or restore a backup"
        )
    elif "unable to open" in low or "readonly" in low or "read-only" in low:
        advice = "check that the file and its folder exist and are readable and writable"
    elif "no such table" in low or "no such column" in low:
        advice = "the schema is incomplete; open it once with this version of Annie to migrate it"
    else:
        advice = "see the SQLite message above"
    return StoreError(f"cannot use the Annie database at {path}: {reason}; {advice}", path)


def guarded(
    method: Callable[Concatenate[Any, P], R],
) -> Callable[Concatenate[Any, P], R]:
    """Run a method under the store's lock (`self.guard()`); SQLite errors become StoreError."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.guard():
            return method(self, *args, **kwargs)

    return wrapper


class StoreBase:
    """The connection, its lock and its write transactions; the record objects build on it."""

    def __init__(self, path: Path | str | None = None, *, timeout_s: float = 5.0) -> None:
        self.path: Path | None = Path(path) if path is not None else None
        self.path_label = str(self.path) if self.path is not None else ":memory:"
        self._lock = threading.RLock()
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path is not None and self.path.is_dir():
                raise StoreError(
                    f"cannot use the Annie database at {self.path}: it is a folder, not a file; "
                    "point ANNIE_HOME somewhere else or remove the folder",
                    self.path_label,
                )
            target = self.path_label if self.path is not None else ":memory:"
            conn = sqlite3.connect(target, timeout=timeout_s, check_same_thread=False)
        except (sqlite3.Error, OSError) as exc:
            raise explain(self.path_label, exc) from exc
        self.conn = conn
        self.db = Database(conn)
        try:
            self._configure(timeout_s)
            with self.db.atomic():
                migrations.apply(self.db)
        except sqlite3.Error as exc:
            conn.close()
            raise explain(self.path_label, exc) from exc

    def _configure(self, timeout_s: float) -> None:
        self.conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        # Reading the schema first turns a garbage file into "file is not a database" here,
        # at open, instead of on the first write.
        self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if self.path is not None:
            mode = self.conn.execute("PRAGMA journal_mode=WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise sqlite3.OperationalError(
                    "could not switch the journal to WAL (database is locked)"
                )
        self.conn.execute("PRAGMA synchronous=FULL")
        # 32 MiB of page cache: 10,000 notes with their vectors stay in memory between reads.
        self.conn.execute("PRAGMA cache_size=-32000")
        self.conn.execute("PRAGMA foreign_keys=ON")

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Hold the connection lock; an SQLite failure inside becomes a StoreError."""
        with self._lock:
            try:
                yield
            except sqlite3.Error as exc:
                raise explain(self.path_label, exc) from exc

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken up front so two writers never deadlock on upgrade.

        A write inside another joins it: the outer one commits or rolls back the whole.
        """
        with self._lock:
            if self.conn.in_transaction:
                yield self.conn
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            else:
                try:
                    self.conn.execute("COMMIT")
                except BaseException:
                    # A COMMIT that fails (a full disk, an I/O error) can leave the
                    # transaction open, and every later write would join it and never
                    # commit. Roll it back so this change alone is lost, and say so.
                    with contextlib.suppress(sqlite3.Error):
                        if self.conn.in_transaction:
                            self.conn.execute("ROLLBACK")
                    raise

    def change_mark(self) -> tuple[int, int]:
        """A mark that stays the same while nothing is written to the file: other connections'
        commits move `PRAGMA data_version`, this one's writes its `total_changes`. Both cost
        microseconds, where counting a large table's rows costs most of a millisecond."""
        row = self.conn.execute("PRAGMA data_version").fetchone()
        return int(row[0]), self.conn.total_changes

    def one(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> sqlite3.Row | None:
        """The first row of a query (for the aggregates the table API does not express)."""
        cur = self.conn.execute(sql, params)
        cur.row_factory = sqlite3.Row
        row: sqlite3.Row | None = cur.fetchone()
        return row

    def all(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[sqlite3.Row]:
        """Every row of a query (for the aggregates the table API does not express)."""
        cur = self.conn.execute(sql, params)
        cur.row_factory = sqlite3.Row
        return list(cur.fetchall())

    @guarded
    def schema_version(self) -> list[str]:
        """Names of the migrations applied to this file, in order."""
        return [m.name for m in migrations.applied(self.db)]

    def close(self) -> None:
        with self._lock:
            try:
                self.conn.close()
            except sqlite3.Error as exc:
                raise explain(self.path_label, exc) from exc


class Records:
    """One concept's records (tasks, events, notes...), reached from the store as an attribute.

    It holds the store and works through its lock and write path; `table` is the sqlite-utils
    table whose API (`insert`, `rows_where`, `update`) replaces hand-built SQL.
    """

    table_name: str

    def __init__(self, store: StoreBase) -> None:
        self.store = store

    @property
    def table(self) -> Table:
        table = self.store.db.table(self.table_name)
        # sqlite-utils reads a missing table as an empty one (`rows_where` yields nothing), and
        # "no records" read from a damaged file is a confident wrong answer. A missing table is
        # damage to report (about 10 µs to check).
        if not table.exists():
            raise sqlite3.OperationalError(f"no such table: {self.table_name}")
        return table

    def guard(self) -> AbstractContextManager[None]:
        return self.store.guard()

    def row(self, n: int) -> dict[str, Any] | None:
        """The row with key `n`, or None."""
        try:
            return self.table.get(n)
        except RowMissing:
            return None

    def insert(self, record: dict[str, Any]) -> int:
        """Insert one row (in its own write transaction, or the caller's); returns its key."""
        with self.store.write():
            key = self.table.insert(record).last_pk
        assert isinstance(key, int)
        return key


def where_in(column: str, values: list[Any]) -> str:
    """`column IN (?, ?, ...)` for `values` (their parameters go beside it)."""
    return f"{column} IN ({', '.join('?' for _ in values)})"


def where_all(clauses: list[str]) -> str | None:
    """Clauses joined by AND, or None (no filter) when there are none."""
    return " AND ".join(clauses) if clauses else None
