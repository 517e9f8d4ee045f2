"""Paired devices (`store.devices`): a phone or a laptop that may use Annie, and its token.

Pairing gives a device a long-lived random token (32 bytes, URL-safe text); the table keeps
only its SHA-256, so a copy of the database file holds no credential. A token is checked
against every stored hash with a constant-time comparison, so how long a check takes says
nothing about how close a guess was. Revoking keeps the row (with when it was revoked), so
the device's next request can be told why it is refused; a revoked token never matches as an
active one. Names are what a person calls the device ("Kitchen phone"); an active name is
unique (case aside), so a name picks out one device on the command line.
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from memory.db import NotFoundError, Records, RowMissing, guarded
from memory.rows import to_iso, utc_now

PREFIX = "dev-"
NAME_CHARS = 40
TOKEN_BYTES = 32


@dataclass(frozen=True)
class DeviceRow:
    id: str
    name: str
    created_at: str
    last_seen_at: str | None
    revoked_at: str | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def token_hash(token: str) -> str:
    """What the table keeps of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def clean_name(name: str) -> str:
    """A device name as stored: trimmed, one line, at most `NAME_CHARS`; ValueError if empty."""
    text = " ".join(str(name).split())
    if not text:
        raise ValueError("a device needs a name, like 'Kitchen phone'")
    if len(text) > NAME_CHARS:
        raise ValueError(f"a device name is at most {NAME_CHARS} characters (got {len(text)})")
    if not text.isprintable():
        raise ValueError("a device name cannot hold control characters")
    return text


def _row(row: Any) -> DeviceRow:
    return DeviceRow(
        id=f"{PREFIX}{row['n']}",
        name=row["name"],
        created_at=row["created_at"],
        last_seen_at=row["last_seen_at"],
        revoked_at=row["revoked_at"],
    )


def _key(value: str) -> int | None:
    """The integer key in `dev-3` or `3`; None when `value` is not an id."""
    text = value.strip().lower().removeprefix(PREFIX)
    return int(text) if text.isdigit() else None


class Devices(Records):
    table_name = "devices"

    @guarded
    def add(self, name: str) -> tuple[DeviceRow, str]:
        """A new device and its token; the token is returned once and never stored."""
        name = clean_name(name)
        if self._active_named(name) is not None:
            raise ValueError(
                f"a device named {name!r} is already paired; pick another name, "
                "or revoke the old one first (python -m bot devices revoke NAME)"
            )
        token = secrets.token_urlsafe(TOKEN_BYTES)
        n = self.insert(
            {"name": name, "token_hash": token_hash(token), "created_at": to_iso(utc_now())}
        )
        row = self.row(n)
        assert row is not None
        return _row(row), token

    @guarded
    def lookup(self, token: str) -> DeviceRow | None:
        """The device this token belongs to, revoked or not (None: no device has it).

        Every stored hash is compared, in constant time each, and the loop never stops
        early: a household has a handful of devices, so this costs microseconds."""
        given = token_hash(token).encode()
        found: Any = None
        for row in self.table.rows_where():
            if hmac.compare_digest(given, str(row["token_hash"]).encode()):
                found = row
        return _row(found) if found is not None else None

    def find_by_token(self, token: str) -> DeviceRow | None:
        """The active device this token belongs to; a revoked one never matches."""
        row = self.lookup(token) if token else None
        return row if row is not None and row.active else None

    @guarded
    def list(self, include_revoked: bool = True) -> builtins.list[DeviceRow]:
        """Every device, oldest first (active ones only with `include_revoked=False`)."""
        where = None if include_revoked else "revoked_at IS NULL"
        return [_row(r) for r in self.table.rows_where(where, order_by="n")]

    @guarded
    def get(self, device_id: str) -> DeviceRow | None:
        n = _key(device_id)
        row = self.row(n) if n is not None else None
        return _row(row) if row is not None else None

    @guarded
    def revoke(self, name_or_id: str) -> DeviceRow:
        """Revoke the active device with this name (any case) or id (`dev-3`, `3`)."""
        device = self._active_named(name_or_id.strip())
        if device is None:
            by_id = self.get(name_or_id)
            if by_id is not None and not by_id.active:
                raise ValueError(f"{by_id.name!r} ({by_id.id}) was revoked already")
            device = by_id
        if device is None:
            raise NotFoundError(f"no paired device named or numbered {name_or_id.strip()!r}")
        n = _key(device.id)
        assert n is not None
        with self.store.write():
            self.table.update(n, {"revoked_at": to_iso(utc_now())})
        revoked = self.get(device.id)
        assert revoked is not None
        return revoked

    @guarded
    def touch(self, device_id: str) -> None:
        """The device was just seen (the server calls this at most once a minute per device)."""
        n = _key(device_id)
        if n is None:
            raise ValueError(f"{device_id!r} is not a device id (expected like {PREFIX}3)")
        try:
            with self.store.write():
                self.table.update(n, {"last_seen_at": to_iso(utc_now())})
        except RowMissing as exc:
            raise NotFoundError(f"no device {PREFIX}{n}") from exc

    def _active_named(self, name: str) -> DeviceRow | None:
        rows = builtins.list(
            self.table.rows_where("revoked_at IS NULL AND name = ? COLLATE NOCASE", [name], limit=1)
        )
        return _row(rows[0]) if rows else None
