"""`python -m bot devices list|revoke NAME`: the phones and laptops paired with Annie.

`list [--json] [--all]` shows each paired device with when it paired and was last seen
(`--all` adds revoked ones); `revoke NAME` (or its id, `dev-3`) unpairs one: its next request
to a running server is refused, since the server looks each cookie up in the store. Pairing a
new device needs a code from the running server: `python -m bot pair`, or Annie's own page.
"""

from __future__ import annotations

import argparse
import json

from bot.commands.records import local_time, with_store
from config import load_settings
from memory.devices import DeviceRow
from memory.store import Store

HELP = "list the paired phones and laptops, or revoke one"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    lst = sub.add_parser("list", help="list paired devices", description="list paired devices")
    lst.add_argument("--json", action="store_true", help="one JSON array of devices")
    lst.add_argument("--all", action="store_true", help="include revoked devices")
    revoke = sub.add_parser(
        "revoke", help="unpair a device", description="unpair a device by its name or id"
    )
    revoke.add_argument("name", help="the device's name (e.g. 'Kitchen phone') or id (dev-3)")


def _line(d: DeviceRow) -> str:
    seen = f"last seen {local_time(d.last_seen_at)}" if d.last_seen_at else "not seen yet"
    state = f"revoked {local_time(d.revoked_at)}" if d.revoked_at else seen
    return f"{d.id}  {d.name}  (paired {local_time(d.created_at)}, {state})"


def run(args: argparse.Namespace) -> int:
    settings = load_settings()

    def act(store: Store) -> int:
        if args.action == "revoke":
            row = store.devices.revoke(args.name)
            print(f"revoked {row.id} {row.name}: its next request is refused")
            return 0
        rows = store.devices.list(include_revoked=args.all)
        if args.json:
            print(json.dumps([r.__dict__ for r in rows], ensure_ascii=False))
        elif not rows:
            print("no devices paired (python -m bot pair, or Pair a phone on Annie's page)")
        else:
            print("\n".join(_line(r) for r in rows))
        return 0

    return with_store(settings, act)
