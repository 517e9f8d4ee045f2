"""Pairing a phone or a laptop with Annie: one-time codes, the pairing page, and the devices.

The owner (this machine itself, or whoever holds the server token) asks for a code: six
digits, one live at a time, good for `CODE_TTL_S`, shown with a QR code of the pairing
address. The new device opens `/pair`, types the code and a name, and gets its own token as
a cookie (Secure, HttpOnly, SameSite=Strict, about a year); the store keeps only its hash
(`memory.devices`). `MAX_WRONG` wrong codes in a row lock pairing for `LOCK_S` and burn the
code, so a guess at a million codes gets five tries per code. Codes live in the server's
memory (`ServerShared.pairing`), never in the store: a restart forgets them.

Routes: `GET /pair` (the page), `POST /api/pair` `{code, name}`, `GET /api/pairing` (what
this browser is: paired, the owner, or neither), and for the owner only
`POST /api/pairing-code`, `GET /api/devices` and `POST /api/devices/revoke` `{device}`.
Every refusal is JSON with a reason. `DeviceGate` is how `guard.authorized` finds the device
behind a cookie; it notes when a device was last seen, at most once a minute.
"""

from __future__ import annotations

import hmac
import io
import ipaddress
import json
import re
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.server.guard import (
    DEVICE_COOKIE,
    DEVICE_KEY,
    DEVICES,
    DeviceLookup,
    authorized,
    from_this_machine,
    given_token,
    is_loopback,
    read_body,
    reason,
)
from bot.server.tls import lan_addresses
from config import Settings
from memory.db import NotFoundError, StoreError
from memory.devices import DeviceRow, Devices, clean_name
from memory.rows import from_iso, utc_now

WEB_DIR = Path(__file__).with_name("web")
CODE_DIGITS = 6
CODE_TTL_S = 300.0
MAX_WRONG = 5
LOCK_S = 300.0
COOKIE_MAX_AGE_S = 365 * 24 * 3600
TOUCH_EVERY_S = 60.0
# A pairing request is a code and a name; anything larger is not one.
BODY_LIMIT = 4096
_CODE = re.compile(rf"^\d{{{CODE_DIGITS}}}$")
NO_STORE = {"Cache-Control": "no-store"}


class PairingRefused(Exception):
    """A pairing attempt or a request for a code refused: the status and the reason."""

    def __init__(self, status: int, why: str, retry_after_s: float | None = None) -> None:
        super().__init__(why)
        self.status = status
        self.why = why
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Code:
    code: str
    expires_at: float  # seconds since the epoch (`PairingCodes.clock`)


@dataclass
class PairingCodes:
    """The live pairing code (one at a time) and the wrong-try lock, in the server's memory."""

    ttl_s: float = CODE_TTL_S
    lock_s: float = LOCK_S
    max_wrong: int = MAX_WRONG
    # The address a new device opens ("https://192.168.1.20:8765"), where the server knows
    # it; None: this machine's LAN address, at the port the owner's request came in on.
    address: str | None = None
    current: Code | None = None
    wrong: int = 0
    locked_until: float = 0.0
    # Seconds since the epoch; tests move a clock of their own instead of sleeping.
    clock: Callable[[], float] = time.time

    def issue(self) -> Code:
        """A fresh code; the one before it stops working. Refused while pairing is locked."""
        now = self.clock()
        self._check_lock(now)
        digits = f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"
        self.current = Code(digits, now + self.ttl_s)
        return self.current

    def check(self, given: str) -> None:
        """`given` is the live code (it stays live); otherwise say why not, count a miss,
        and lock pairing at the `max_wrong`th miss in a row."""
        now = self.clock()
        self._check_lock(now)
        code = self.current
        if code is None:
            raise PairingRefused(
                403, "no pairing code is waiting; ask Annie's machine for one (Pair a phone)"
            )
        if now >= code.expires_at:
            minutes = self.ttl_s / 60
            raise PairingRefused(
                410,
                f"the pairing code has expired (codes last {minutes:g} minutes); ask Annie's "
                "machine for a new one",
            )
        if not hmac.compare_digest(given.encode(), code.code.encode()):
            self.wrong += 1
            left = self.max_wrong - self.wrong
            if left > 0:
                raise PairingRefused(
                    403,
                    f"wrong pairing code; {left} more wrong {'try' if left == 1 else 'tries'} "
                    f"and pairing locks for {_duration(self.lock_s)}",
                )
            self.wrong = 0
            self.current = None  # burned: after the lock, the owner makes a new one
            self.locked_until = now + self.lock_s
            self._check_lock(now)
        self.wrong = 0

    def consume(self) -> None:
        """The live code has paired a device: no code is waiting now."""
        self.current = None

    def _check_lock(self, now: float) -> None:
        if now >= self.locked_until:
            return
        left = self.locked_until - now
        at = datetime.fromtimestamp(self.locked_until).astimezone()
        raise PairingRefused(
            429,
            f"pairing is locked after {self.max_wrong} wrong codes in a row; it unlocks at "
            f"{at:%H:%M:%S} (in {_duration(left)}), then ask Annie's machine for a new code",
            retry_after_s=left,
        )


def _duration(seconds: float) -> str:
    whole = max(1, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min" + (f" {rest} s" if rest else "")


class DeviceGate:
    """`guard.DEVICES` over the store: the device behind a cookie, and when it was last seen."""

    def __init__(self, devices: Devices) -> None:
        self.devices = devices

    def __call__(self, token: str) -> DeviceRow | None:
        try:
            device = self.devices.lookup(token)
            if device is not None and device.active and _stale(device.last_seen_at):
                self.devices.touch(device.id)
        except (StoreError, NotFoundError) as exc:
            raise web.HTTPServiceUnavailable(
                reason=f"could not check this device's pairing: {exc}"
            ) from exc
        return device


def _stale(seen: str | None) -> bool:
    return seen is None or (utc_now() - from_iso(seen)).total_seconds() >= TOUCH_EVERY_S


# --- addresses and the QR code ------------------------------------------------------------


def lan_host(settings: Settings) -> str:
    """The address a device on the home network reaches this machine at: `server.host` when
    it names one, else this machine's first private IPv4 address, else its host name."""
    host = settings.server.host
    if not is_loopback(host) and host not in ("0.0.0.0", "::", ""):
        return host
    found = lan_addresses()
    private = [a for a in found if ipaddress.ip_address(a).is_private]
    return (private or found or [socket.gethostname()])[0]


def pairing_url(codes: PairingCodes, settings: Settings, request: web.Request, code: str) -> str:
    base = codes.address
    if not base:
        local = request.transport.get_extra_info("sockname") if request.transport else None
        port = int(local[1]) if local else settings.server.port
        host = lan_host(settings)
        base = f"https://{f'[{host}]' if ':' in host else host}:{port}"
    return f"{base.rstrip('/')}/pair?code={code}"


def qr_svg(text: str) -> str:
    """A QR code of `text` as a standalone SVG (dark on white, so it scans in dark mode)."""
    import segno

    out = io.BytesIO()
    segno.make(text, error="m").save(
        out, kind="svg", scale=5, border=3, light="#fff", xmldecl=False, title="Pairing code"
    )
    return out.getvalue().decode()


def qr_text(text: str) -> str:
    """A QR code of `text` drawn with block characters, for a terminal."""
    import segno

    out = io.StringIO()
    segno.make(text, error="m").terminal(out=out, compact=True)
    return out.getvalue()


# --- the routes ---------------------------------------------------------------------------


async def read_json(request: web.Request, limit: int = BODY_LIMIT) -> dict[str, Any]:
    # JSON only: a cross-site form can post text/plain without asking first, JSON it cannot.
    if request.content_type != "application/json":
        given = request.headers.get("Content-Type") or "none"
        raise web.HTTPUnsupportedMediaType(
            reason=f"Content-Type must be application/json (got {given})"
        )
    raw = await read_body(request, limit)
    try:
        body = json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise web.HTTPBadRequest(reason=f"body is not valid JSON: {exc}") from exc
    except RecursionError as exc:  # the parser recurses per bracket
        raise web.HTTPBadRequest(reason="body is not valid JSON: nested too deeply") from exc
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(reason="expected a JSON object")
    return body


def refused(exc: PairingRefused) -> web.Response:
    response = reason(exc.status, exc.why)
    if exc.retry_after_s is not None:
        response.headers["Retry-After"] = str(max(1, round(exc.retry_after_s)))
    return response


def _device(d: DeviceRow) -> dict[str, Any]:
    return {
        "id": d.id,
        "name": d.name,
        "created_at": d.created_at,
        "last_seen_at": d.last_seen_at,
        "revoked_at": d.revoked_at,
    }


def is_owner(request: web.Request, token: str) -> bool:
    """This machine itself (not through a proxy), or whoever holds the server token."""
    return given_token(request, token) or (
        from_this_machine(request) and authorized(request, token)
    )


def add_pairing_routes(
    app: web.Application, codes: PairingCodes, devices: Devices, settings: Settings
) -> None:
    """Pairing and the devices list on `app`, and the device cookie accepted by `authorized`."""
    token = settings.server.token
    gate: DeviceLookup = DeviceGate(devices)
    app[DEVICES] = gate

    def owner_only(request: web.Request) -> web.Response | None:
        if not authorized(request, token):
            return reason(401, "missing or wrong token (send X-Annie-Token or ?token=)")
        if not is_owner(request, token):
            return reason(
                403,
                "only Annie's own machine (its page on localhost) or the server token can "
                "make pairing codes and manage devices",
            )
        return None

    async def page(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(WEB_DIR / "pair.html", headers={"Cache-Control": "no-cache"})

    async def status(request: web.Request) -> web.Response:
        try:
            ok, why = authorized(request, token), ""
        except web.HTTPException as exc:
            ok, why = False, exc.reason
        device = request.get(DEVICE_KEY)
        body = {
            "authorized": ok,
            "owner": ok and is_owner(request, token),
            "device": device.name if device is not None else None,
            # A browser that must pair before it can talk (the page sends it to /pair).
            "pair": not ok and not from_this_machine(request),
            "reason": why,
        }
        return web.json_response(body, headers=NO_STORE)

    async def pair(request: web.Request) -> web.Response:
        body = await read_json(request)
        code, name = body.get("code"), body.get("name")
        if not isinstance(code, str) or not _CODE.match(code.strip()):
            return reason(400, f'"code" must be the {CODE_DIGITS} digits Annie\'s machine shows')
        if not isinstance(name, str):
            return reason(400, '"name" must be a name for this device, like "Kitchen phone"')
        try:
            name = clean_name(name)
        except ValueError as exc:
            return reason(400, str(exc))
        try:
            codes.check(code.strip())
        except PairingRefused as exc:
            return refused(exc)
        # Only after the code: a device's name is not for whoever can reach the page.
        try:
            row, secret = devices.add(name)
        except ValueError as exc:  # the name is taken; the code stays live for another
            return reason(409, str(exc))
        except StoreError as exc:
            return reason(503, f"could not save the device: {exc}")
        codes.consume()
        response = web.json_response({"device": row.name, "id": row.id}, headers=NO_STORE)
        response.set_cookie(
            DEVICE_COOKIE,
            secret,
            max_age=COOKIE_MAX_AGE_S,
            path="/",
            secure=True,
            httponly=True,
            samesite="Strict",
        )
        return response

    async def new_code(request: web.Request) -> web.Response:
        if (refusal := owner_only(request)) is not None:
            return refusal
        try:
            code = codes.issue()
        except PairingRefused as exc:
            return refused(exc)
        url = pairing_url(codes, settings, request, code.code)
        expires = datetime.fromtimestamp(code.expires_at).astimezone()
        body = {
            "code": code.code,
            "expires_at": expires.isoformat(timespec="seconds"),
            "expires_in_s": round(code.expires_at - codes.clock()),
            "url": url,
            "qr_svg": qr_svg(url),
        }
        return web.json_response(body, headers=NO_STORE)

    async def list_devices(request: web.Request) -> web.Response:
        if (refusal := owner_only(request)) is not None:
            return refusal
        rows = [_device(d) for d in devices.list()]
        return web.json_response({"devices": rows}, headers=NO_STORE)

    async def revoke(request: web.Request) -> web.Response:
        if (refusal := owner_only(request)) is not None:
            return refusal
        body = await read_json(request)
        which = body.get("device")
        if not isinstance(which, str) or not which.strip():
            return reason(400, '"device" must be the name or id of a paired device')
        try:
            row = devices.revoke(which)
        except NotFoundError as exc:
            return reason(404, str(exc))
        except ValueError as exc:
            return reason(409, str(exc))
        except OverflowError:  # an id past SQLite's integers names no device
            return reason(404, f"no paired device named or numbered {which.strip()!r}")
        return web.json_response({"revoked": _device(row)}, headers=NO_STORE)

    app.router.add_get("/pair", page)
    app.router.add_get("/api/pairing", status)
    app.router.add_post("/api/pair", pair)
    app.router.add_post("/api/pairing-code", new_code)
    app.router.add_get("/api/devices", list_devices)
    app.router.add_post("/api/devices/revoke", revoke)
