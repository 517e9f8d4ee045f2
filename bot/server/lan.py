"""Serving the home network (`serve --lan`): HTTPS listeners, the credential a request from
the network needs, and the page that explains how to trust Annie's certificate.

`HTTPSSite` listens on one address and looks at the first byte each connection sends: a TLS
handshake goes on to aiohttp over `ssl_context`; anything else is a person who typed
`http://`, who gets a 400 naming the `https://` address instead of a dropped connection.
Every request that reaches a non-loopback address passes `lan_gate`: apart from what a
device needs before it holds a credential (the page, its files, pairing, the trust page and
the authority's certificate), it must be `guard.authorized`. `/trust` and `/annie-ca.crt`
are on every server; the certificate is there only while Annie serves her own over HTTPS.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import socket
import ssl
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.server import certs, tls
from bot.server.guard import SECURITY_HEADERS, Handler, authorized, is_loopback, reason
from config import Settings

log = logging.getLogger(__name__)

# A client that connects and says nothing, or never finishes its handshake, is dropped.
HANDSHAKE_TIMEOUT_S = 10.0
# How long a plain-HTTP request may take to arrive before its refusal is sent anyway.
PLAIN_READ_S = 2.0
TLS_HANDSHAKE = 0x16  # the first byte of every TLS record that opens a connection
# Reachable from the network without a credential: the page (which sends an unpaired
# browser to pairing), its static files, pairing itself, health (the page's "warming up"),
# and how to trust this server.
LAN_OPEN = frozenset(
    {"/", "/pair", "/api/pair", "/api/pairing", "/healthz", "/trust", "/annie-ca.crt"}
)
LAN_OPEN_PREFIXES = ("/static/",)
CA_TYPE = "application/x-x509-ca-cert"


def https_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"https://{shown}:{port}/"


class HTTPSSite(web.BaseSite):
    """One address and port, HTTPS only; see the module docstring."""

    def __init__(
        self, runner: web.BaseRunner, host: str, port: int, ssl_context: ssl.SSLContext
    ) -> None:
        super().__init__(runner, ssl_context=ssl_context)
        self._host, self._port = host, port
        self._context = ssl_context
        self._sock: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._routing: set[asyncio.Task[None]] = set()

    @property
    def name(self) -> str:
        return https_url(self._host, self.port)

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1]) if self._sock is not None else self._port

    async def start(self) -> None:
        await super().start()
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        sock = socket.create_server((self._host, self._port), family=family, backlog=128)
        sock.setblocking(False)
        self._sock = sock
        self._accepting = asyncio.create_task(self._accept(sock), name=f"https {self.name}")

    async def stop(self) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accepting
        if self._sock is not None:
            self._sock.close()
        for task in list(self._routing):
            task.cancel()
        # Connections already handed to aiohttp close with the runner, as on any site.
        await super().stop()

    async def _accept(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError as exc:  # out of file descriptors, for instance: try again soon
                log.warning("accepting on %s failed: %s", self.name, exc)
                await asyncio.sleep(0.1)
                continue
            task = asyncio.create_task(self._route(conn))
            self._routing.add(task)
            task.add_done_callback(self._routing.discard)

    async def _route(self, conn: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        conn.setblocking(False)
        try:
            first = await _peek(conn, HANDSHAKE_TIMEOUT_S)
        except (TimeoutError, OSError):
            conn.close()
            return
        if not first:
            conn.close()
        elif first[0] == TLS_HANDSHAKE:
            server = self._runner.server
            assert server is not None
            try:
                await loop.connect_accepted_socket(
                    server, conn, ssl=self._context, ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S
                )
            except (OSError, TimeoutError) as exc:
                # A browser that does not trust the certificate yet hangs up here.
                log.debug("TLS handshake on %s failed: %s", self.name, exc)
                conn.close()
        else:
            await refuse_plain(conn)


async def _peek(conn: socket.socket, timeout: float) -> bytes:
    """The first byte the client sent, left in place for whoever reads the connection."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(conn.fileno(), readable)
    try:
        async with asyncio.timeout(timeout):
            await ready
    finally:
        loop.remove_reader(conn.fileno())
    return conn.recv(1, socket.MSG_PEEK)


async def refuse_plain(conn: socket.socket) -> None:
    """Answer a plain-HTTP request with a 400 that names this address's https:// URL."""
    loop = asyncio.get_running_loop()
    host, port = conn.getsockname()[:2]
    url = https_url(str(host), int(port))
    head = b""
    with contextlib.suppress(TimeoutError, OSError):
        async with asyncio.timeout(PLAIN_READ_S):
            while b"\r\n\r\n" not in head and len(head) < 16_384:
                chunk = await loop.sock_recv(conn, 4096)
                if not chunk:
                    break
                head += chunk
    why = (
        f"this address serves HTTPS only: open {url} instead (plain HTTP would carry your "
        f"voice over the network unencrypted). {url}trust explains the browser's warning."
    )
    body = json.dumps({"error": 400, "reason": why}).encode()
    lines = [
        "HTTP/1.1 400 Bad Request",
        "Content-Type: application/json; charset=utf-8",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in SECURITY_HEADERS.items()),
    ]
    log.warning("refused plain HTTP on %s: %r", url, head.split(b"\r\n", 1)[0][:80])
    with contextlib.suppress(OSError, TimeoutError):
        await loop.sock_sendall(conn, ("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        conn.shutdown(socket.SHUT_WR)
        # Read what is left (a body), so closing does not reset the answer away.
        async with asyncio.timeout(PLAIN_READ_S):
            while await loop.sock_recv(conn, 4096):
                pass
    conn.close()


async def start_sites(
    runner: web.BaseRunner, hosts: list[str], port: int, context: ssl.SSLContext
) -> tuple[list[HTTPSSite], list[str]]:
    """An `HTTPSSite` per host, all on one port (the first's, when `port` is 0). The first
    host must listen; one of the others that cannot is skipped with the reason returned."""
    sites: list[HTTPSSite] = []
    skipped: list[str] = []
    for host in hosts:
        site = HTTPSSite(runner, host, sites[0].port if sites else port, context)
        try:
            await site.start()
        except OSError as exc:
            await site.stop()
            if not sites:
                raise
            skipped.append(f"{host}: {exc.strerror or exc}")
            continue
        sites.append(site)
    return sites, skipped


# --- who may call from the network ---------------------------------------------------------


def on_network(request: web.Request) -> bool:
    """The request reached a non-loopback address of this machine."""
    local = request.transport.get_extra_info("sockname") if request.transport else None
    return local is not None and not is_loopback(str(local[0]))


def lan_gate(token: str) -> Any:
    """The middleware (inside `guard.guard`): on a network address, a credential for all but
    `LAN_OPEN`, checked by `guard.authorized` like every other check of one."""

    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        if (
            not on_network(request)
            or path in LAN_OPEN
            or path.startswith(LAN_OPEN_PREFIXES)
            or authorized(request, token)
        ):
            return await handler(request)
        return reason(
            401,
            "this device is not paired with Annie: open the page and pair it with the code "
            "Annie's machine shows, or send the server token (X-Annie-Token or ?token=)",
        )

    return gate


# --- how to trust this server --------------------------------------------------------------


def add_trust_routes(app: web.Application, settings: Settings, page: Path) -> None:
    """`GET /trust` (the page at `page`, with this server's details filled in) and
    `GET /annie-ca.crt` (the authority's certificate, never its key)."""

    def serving_ca() -> tuple[bytes | None, str]:
        """The authority's certificate this server serves, or why there is none."""
        if not settings.server.lan:
            return None, "HTTPS is off: start Annie with ./start.sh --lan"
        if settings.server.tls_cert:
            return None, "this server uses a certificate of your own (server.tls_cert)"
        pem = tls.authority_pem(settings)
        return pem, "" if pem else "Annie makes her authority on the first HTTPS start"

    async def trust(request: web.Request) -> web.Response:
        pem, why = serving_ca()
        if pem is None:
            state = f"There is no Annie authority to trust here: {why}."
        else:
            state = f"The SHA-256 fingerprint of Annie's authority is {certs.fingerprint(pem)}. "
            state += "Compare it with the one the terminal printed when Annie started: the "
            state += "same letters mean the certificate is hers."
        port = request.transport.get_extra_info("sockname")[1] if request.transport else 0
        urls = [https_url(a, int(port)) for a in tls.lan_addresses()] if settings.server.lan else []
        text = page.read_text(encoding="utf-8")
        text = text.replace("{{state}}", html.escape(state))
        text = text.replace("{{urls}}", html.escape(", ".join(urls) or "none (--lan is off)"))
        return web.Response(
            text=text, content_type="text/html", headers={"Cache-Control": "no-cache"}
        )

    async def certificate(request: web.Request) -> web.Response:
        pem, why = serving_ca()
        if pem is None:
            return reason(404, f"no Annie authority to download: {why}")
        return web.Response(
            body=pem,
            content_type=CA_TYPE,
            headers={"Content-Disposition": 'inline; filename="annie-ca.crt"'},
        )

    app.router.add_get("/trust", trust)
    app.router.add_get("/annie-ca.crt", certificate)
