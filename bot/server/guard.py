"""What every HTTP request passes before a route sees it: who may call, and what comes back.

A local server is reachable by any web page the user visits, through the user's own browser.
Three checks close that door. `Host` must name the address this connection reached (plus
localhost on loopback, plus `server.allowed_hosts`): a page that points its own domain at
127.0.0.1 (DNS rebinding) sends its own name and is refused. `Origin`, when a browser sends
one, must be this server itself. `Sec-Fetch-Site`, which browsers send even where they send
no Origin (an `<img>` or `<script>` pointing here), must not say cross-site, except for a
plain navigation to the page. Each refusal is a 403 with a JSON reason.

Every response carries a Content Security Policy that allows only this server, `nosniff`
and `no-referrer` (so the page's address, which may hold ?token=, never leaves in a
Referer). Errors are JSON with a reason; an unexpected exception is a generic 500, its
traceback only in the server log. The access log writes `?token=...` as `token=[redacted]`,
and idle connections (open, no request) close after a while (`bot.server.access_log`); a
body that dribbles in is cut off after `BODY_TIMEOUT_S` with 408. The server binds beyond
loopback only with a token set (`check_bind`), and then every request must carry it, or the
cookie of a paired device (`bot.server.pairing`); a peer beyond loopback always needs one.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import hmac
import ipaddress
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from config import ConfigError, Settings
from memory.devices import DeviceRow

log = logging.getLogger(__name__)

TOKEN_HEADER = "X-Annie-Token"
# An offer is a few KB sent at once; a body still arriving after this is a slow client.
BODY_TIMEOUT_S = 5.0
CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self' data:",  # the page's empty favicon is a data: URL
        "media-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate it
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
# A pairing code (`/pair?code=...`) is a credential for its few minutes too.

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def reason(status: int, why: str) -> web.Response:
    """The JSON every refusal carries: `{"error": status, "reason": why}`."""
    return web.json_response({"error": status, "reason": why}, status=status)


def token_matches(given: str, token: str) -> bool:
    """Constant time, and the same time for every length: both sides are hashed first
    (compare_digest alone returns early when the lengths differ)."""
    a = hashlib.sha256(given.encode()).digest()
    b = hashlib.sha256(token.encode()).digest()
    return hmac.compare_digest(a, b)


# --- who may call ------------------------------------------------------------------------


def split_host(value: str) -> tuple[str, int | None] | None:
    """`Host`-style `name[:port]` → (lowercase name, port); brackets kept off IPv6. None if
    malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    else:
        name, _, port_text = value.partition(":")
        if ":" in port_text:
            return None
    if not name or (port_text and not port_text.isdigit()):
        return None
    return name, int(port_text) if port_text else None


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


class HostRule:
    """The names a request may use for this server, read off the connection it came in on.

    `names` are the machine's own (its host name and `NAME.local`, under `serve --lan`):
    accepted at the port a request reached, on any address it serves; a rebinding page
    cannot use them, as it would need a certificate for them too.
    """

    def __init__(self, allowed: list[str], names: list[str] | None = None) -> None:
        self.allowed: list[tuple[str, int | None]] = []
        for entry in allowed:
            parsed = split_host(entry)
            if parsed is not None:
                self.allowed.append(parsed)
        self.names = {n.lower() for n in names or []}

    def accepts(self, request: web.Request, host: str, scheme: str = "") -> bool:
        """`host` (a Host header, or an Origin's host with its `scheme`) names this server."""
        parsed = split_host(host)
        if parsed is None:
            return False
        name, port = parsed
        if port is None and scheme:
            port = 443 if scheme == "https" else 80
        for allowed_name, allowed_port in self.allowed:
            # A configured name is trusted at any port unless the entry names one (a proxy
            # in front serves it on its own); a Host header without a port (what a proxy
            # forwards) does not say, and the name is what rebinding cannot fake.
            if name == allowed_name and (allowed_port is None or port in (None, allowed_port)):
                return True
        local = request.transport.get_extra_info("sockname") if request.transport else None
        if not local:
            return False
        local_ip, local_port = _ip(str(local[0])), int(local[1])
        if ((443 if request.secure else 80) if port is None else port) != local_port:
            return False
        ip = _ip(name)
        if (ip is not None and ip == local_ip) or name in self.names:
            return True
        # On loopback, the other spellings of this machine reach the same socket; a
        # rebinding page can never make the browser send them, as browsers resolve
        # `localhost` themselves.
        if local_ip is not None and local_ip.is_loopback:
            return name == "localhost" or (ip is not None and ip.is_loopback)
        return False


def refusal(request: web.Request, rule: HostRule) -> str | None:
    """Why this request may not reach a route (None: it may)."""
    host = request.headers.get("Host", "")
    if not rule.accepts(request, host):
        return (
            f"Host {host!r} is not an address this server answers to; open it by the address "
            "it printed, or add the name to server.allowed_hosts"
        )
    origin = request.headers.get("Origin")
    if origin is not None and not _origin_ok(request, rule, origin):
        return f"cross-origin request from {origin!r} refused"
    site = request.headers.get("Sec-Fetch-Site", "")
    if site in ("cross-site", "same-site") and not _navigation(request):
        return f"a {site} request is refused (only this server's own page may call it)"
    return None


def _origin_ok(request: web.Request, rule: HostRule, origin: str) -> bool:
    # "null" (a sandboxed frame, a file:// page) parses to no scheme and fails here.
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path:
        return False
    if parts.scheme == "http" and request.secure:
        return False  # an HTTPS listener's own pages are never http://
    if parts.scheme == "https" and not request.secure:
        # This listener speaks plain HTTP; an https origin is a configured proxy in front.
        parsed = split_host(parts.netloc)
        port = parsed[1] if parsed is not None and parsed[1] is not None else 443
        return parsed is not None and any(
            parsed[0] == name and allowed in (None, port) for name, allowed in rule.allowed
        )
    return rule.accepts(request, parts.netloc, parts.scheme)


def _navigation(request: web.Request) -> bool:
    """A link from elsewhere to the page itself is fine; the page then calls same-origin."""
    return (
        request.method in ("GET", "HEAD")
        and request.path == "/"
        and request.headers.get("Sec-Fetch-Mode") == "navigate"
    )


# --- the middleware and the headers -------------------------------------------------------


def guard(rule: HostRule, body_limit: Callable[[], int]) -> Any:
    """The middleware: the checks above, JSON for every refusal, no traceback to clients."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        why = refusal(request, rule)
        if why is not None:
            log.warning("refused %s %s: %s", request.method, request.path, why)
            return reason(403, why)
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            response = reason(413, f"request body too large (limit {body_limit()} bytes)")
        except web.HTTPMethodNotAllowed as exc:
            allowed = ", ".join(sorted(exc.allowed_methods))
            response = reason(
                405, f"{request.method} is not allowed on {request.path}; use {allowed}"
            )
            response.headers["Allow"] = ",".join(sorted(exc.allowed_methods))
            return response
        except web.HTTPNotFound:
            return reason(404, f"nothing here: {request.path}")
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            response = reason(exc.status, exc.reason)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except OSError as exc:
            # A static path longer than any file name here: aiohttp's file lookup fails first.
            if exc.errno == errno.ENAMETOOLONG:
                return reason(404, f"nothing here: {request.path[:200]}")
            log.exception("unhandled error on %s %s", request.method, request.path)
            return reason(500, "internal error; see the server log")
        except Exception:
            # The details are for whoever runs the server, never for the client.
            log.exception("unhandled error on %s %s", request.method, request.path)
            return reason(500, "internal error; see the server log")
        if response.status in (408, 413):
            response.force_close()  # the unread rest of the body makes the connection useless
        return response

    return middleware


async def add_security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """`on_response_prepare`: every response, static files and refusals included."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)


async def read_body(request: web.Request, limit: int, timeout_s: float = BODY_TIMEOUT_S) -> bytes:
    """The whole body within `timeout_s` (408 otherwise) and `limit` bytes (413 otherwise)."""
    if request.content_length is not None and request.content_length > limit:
        raise web.HTTPRequestEntityTooLarge(limit, request.content_length)
    try:
        async with asyncio.timeout(timeout_s):
            return await request.read()
    except TimeoutError as exc:
        raise web.HTTPRequestTimeout(
            reason=f"the request body did not arrive within {timeout_s:g} s"
        ) from exc


# A browser's audio offer is 2-8 KB; anything far larger is junk for aiortc to parse.
MAX_SDP_CHARS = 16_384


def check_sdp_size(sdp: str) -> None:
    if len(sdp) > MAX_SDP_CHARS:
        # 400, not 413: the body was within its cap; the offer in it is what is refused.
        raise web.HTTPBadRequest(
            reason=f"the SDP offer is {len(sdp):,} characters; at most {MAX_SDP_CHARS:,} are "
            "accepted"
        )


def is_loopback(host: str) -> bool:
    """`host` (a name to bind) reaches this machine only."""
    ip = _ip(host)
    return host in ("localhost", "ip6-localhost") or (ip is not None and ip.is_loopback)


def check_bind(settings: Settings) -> None:
    """Refuse to listen beyond loopback without a token. With `server.lan` the network
    addresses are Annie's own choice and served over HTTPS, where every request from them
    needs a credential; `server.host` is then the loopback side and must be loopback."""
    host = settings.server.host
    if settings.server.lan:
        if not is_loopback(host):
            raise ConfigError(
                f"server.host is {host!r}, but with --lan (server.lan) Annie listens on this "
                "machine's network addresses herself, over HTTPS; leave server.host at "
                "127.0.0.1, or drop --lan to serve plain HTTP on that address with a token"
            )
        return
    if not is_loopback(host) and not settings.server.token:
        raise ConfigError(
            f"server.host is {host!r}, which is reachable from other machines, and no "
            "server.token is set. Set one (ANNIE_SERVER__TOKEN=... or [server] token in "
            "$ANNIE_HOME/config.toml) and open the page with ?token=..., or bind 127.0.0.1."
        )


# --- the caller's credential: the server token, or a paired device's cookie ---------------

DEVICE_COOKIE = "annie_device"
# The paired device a cookie's token belongs to, revoked or not (None: no device has it); set
# on the app by `bot.server.pairing` where there is a store to look in.
DeviceLookup = Callable[[str], DeviceRow | None]
DEVICES: web.AppKey[DeviceLookup] = web.AppKey("annie_devices")
# Where `authorized` leaves the device a request came from, for the routes after it.
DEVICE_KEY: web.RequestKey[DeviceRow] = web.RequestKey("annie_device", DeviceRow)
_FORWARDING = ("Forwarded", "X-Forwarded-For", "X-Real-IP")


def from_this_machine(request: web.Request) -> bool:
    """The peer is a loopback address and no proxy says it forwards someone else's request."""
    peer = request.transport.get_extra_info("peername") if request.transport else None
    ip = _ip(str(peer[0])) if peer else None
    forwarded = any(name in request.headers for name in _FORWARDING)
    return ip is not None and ip.is_loopback and not forwarded


def given_token(request: web.Request, token: str) -> bool:
    """The request carries the configured server token (header or ?token=)."""
    given = request.headers.get(TOKEN_HEADER) or request.query.get("token", "")
    return bool(token) and bool(given) and token_matches(given, token)


def paired_device(request: web.Request) -> DeviceRow | None:
    """The active device whose cookie the request carries (None: no cookie, or no store).

    A cookie that names a revoked device is refused here with 403, and one no device has
    with 401, each saying how to pair again: either is a browser that believes it is paired.
    """
    cookie = request.cookies.get(DEVICE_COOKIE, "")
    lookup = request.app.get(DEVICES)
    if not cookie or lookup is None:
        return None
    device = lookup(cookie)
    if device is None:
        raise web.HTTPUnauthorized(
            reason="this browser's pairing is not known to this server (it may have been "
            "paired with another one); pair it again at /pair with a code from Annie's machine"
        )
    if not device.active:
        when = (device.revoked_at or "")[:16].replace("T", " ")
        raise web.HTTPForbidden(
            reason=f"this device ({device.name}) was unpaired on {when} UTC; pair it again at "
            "/pair with a new code from Annie's machine"
        )
    request[DEVICE_KEY] = device
    return device


def authorized(request: web.Request, token: str) -> bool:
    """The request may use the API: it carries the configured token (header or ?token=), or
    a paired device's cookie; or no token is configured and it comes from this machine.

    Beyond loopback a credential is always needed, token or not (`serve` binds there only
    with a token, or with pairing): a LAN peer without one is refused. A device cookie that
    is revoked or unknown raises the 403 or 401 that says so (see `paired_device`).
    """
    if given_token(request, token) or (not token and from_this_machine(request)):
        return True
    return paired_device(request) is not None
