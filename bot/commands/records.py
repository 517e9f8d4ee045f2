"""What the record commands (`tasks`, `reminders`, `briefing`) share: opening the store and
turning its errors into a message and an exit code.

Exit codes: 2 for the user's input (a malformed or unknown id, a finished record), 1 for the
store itself (it cannot be opened or read).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from config import Settings
from memory.db import NotFoundError, StoreError
from memory.rows import from_iso
from memory.store import Store


def with_store(settings: Settings, action: Callable[[Store], int]) -> int:
    """Run `action` on the store, print any error on stderr, and always close the store."""
    try:
        store = Store.open(settings)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        return action(store)
    except (ValueError, NotFoundError) as exc:
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    except OverflowError as exc:  # an id, a limit or a date past what SQLite or datetime hold
        print(f"error: a number or date in the arguments is out of range ({exc})", file=sys.stderr)
        return 2
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()


def local_time(stamp: str, seconds: bool = False) -> str:
    """A stored UTC timestamp in the machine's time zone, as a person reads it."""
    return f"{from_iso(stamp).astimezone():%Y-%m-%d %H:%M{':%S' if seconds else ''}}"
