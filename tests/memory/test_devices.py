"""Paired devices on a real SQLite file: tokens kept only as hashes, names unique while
active, revoked devices never matching, and the command line that lists and revokes them."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bot.cli import main
from memory.db import NotFoundError
from memory.devices import token_hash
from memory.store import Store


def file_bytes(path: Path) -> bytes:
    """The database file and its write-ahead log, as they lie on disk."""
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def test_a_token_is_stored_only_as_its_hash_and_found_by_it(store: Store) -> None:
    row, token = store.devices.add("  Kitchen   phone ")
    assert row.name == "Kitchen phone" and row.id == "dev-1" and row.active
    assert len(token) >= 43  # 32 random bytes, URL-safe
    assert token_hash(token) == hashlib.sha256(token.encode()).hexdigest()
    stored = store.one("SELECT token_hash FROM devices WHERE n = 1")
    assert stored is not None and stored["token_hash"] == token_hash(token)
    assert store.path is not None
    on_disk = file_bytes(store.path)
    assert token.encode() not in on_disk and token_hash(token).encode() in on_disk

    found = store.devices.find_by_token(token)
    assert found is not None and found.id == row.id
    assert store.devices.find_by_token(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert store.devices.find_by_token("") is None
    other, other_token = store.devices.add("Sofa laptop")
    assert other_token != token
    found_other = store.devices.find_by_token(other_token)
    assert found_other is not None and found_other.id == other.id


def test_names_are_unique_while_active_and_a_revoked_device_never_matches(store: Store) -> None:
    row, token = store.devices.add("Kitchen phone")
    with pytest.raises(ValueError, match="already paired"):
        store.devices.add("KITCHEN PHONE")
    for bad in ("", "   ", "x" * 41, "bell\x07here"):
        with pytest.raises(ValueError):
            store.devices.add(bad)

    store.devices.touch(row.id)
    seen = store.devices.get(row.id)
    assert seen is not None and seen.last_seen_at is not None

    revoked = store.devices.revoke("kitchen phone")
    assert revoked.revoked_at is not None and not revoked.active
    assert store.devices.find_by_token(token) is None
    looked_up = store.devices.lookup(token)
    assert looked_up is not None and looked_up.revoked_at == revoked.revoked_at
    with pytest.raises(ValueError, match="revoked already"):
        store.devices.revoke(row.id)
    with pytest.raises(NotFoundError, match="Hall tablet"):
        store.devices.revoke("Hall tablet")

    # The name is free again once its device is revoked; the old row stays listed.
    again, _ = store.devices.add("Kitchen phone")
    assert again.id == "dev-2"
    assert [d.id for d in store.devices.list()] == ["dev-1", "dev-2"]
    assert [d.id for d in store.devices.list(include_revoked=False)] == ["dev-2"]
    assert store.devices.revoke("2").id == "dev-2"  # by the bare number too


def test_the_command_line_lists_and_revokes(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["devices", "list"]) == 0
    assert "no devices paired" in capsys.readouterr().out
    store.devices.add("Kitchen phone")
    store.devices.add("Sofa laptop")

    assert main(["devices", "list"]) == 0
    out = capsys.readouterr().out
    assert "dev-1  Kitchen phone" in out and "dev-2  Sofa laptop" in out
    assert "not seen yet" in out

    assert main(["devices", "revoke", "Kitchen phone"]) == 0
    assert "revoked dev-1 Kitchen phone" in capsys.readouterr().out
    assert store.devices.list(include_revoked=False)[0].name == "Sofa laptop"

    assert main(["devices", "list"]) == 0
    assert "Kitchen phone" not in capsys.readouterr().out
    assert main(["devices", "list", "--all"]) == 0
    assert "dev-1  Kitchen phone  (paired" in capsys.readouterr().out

    assert main(["devices", "revoke", "Kitchen phone"]) == 2
    assert "no paired device named or numbered 'Kitchen phone'" in capsys.readouterr().err
    assert main(["devices", "revoke", "dev-1"]) == 2
    assert "revoked already" in capsys.readouterr().err
