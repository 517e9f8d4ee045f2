"""An httpx transport that connects to the address it checked, for fetch_webpage.

Each request's host is resolved once; every address it resolves to must be public (unless
private ones are allowed), and the request then goes to one of exactly those addresses while
the `Host` header and TLS (SNI and the certificate check) keep the name. Checking one
resolution and letting the connection resolve again would leave a gap that a rebinding DNS
server walks through: a public answer for the check, 127.0.0.1 for the connection. The host
is read from the same parsed URL the connection uses, so no second parser can disagree with
the check. Numeric spellings the C resolver accepts (2130706433, 0177.1, 127.1, 0x7f.1) are
read with `inet_aton` before the check, and IPv4 inside IPv6 (mapped, 6to4, NAT64) is checked
as the IPv4 address it reaches.

How names resolve (`Resolver`) and how connections open (`Connector`) are parameters, so a
test can play a rebinding DNS server and public servers on this machine (`testkit.web_fakes`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Sequence

import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, port -> the addresses the name resolves to, in the resolver's order.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
# Makes the transport that opens the connections (a new one per client: a client closes it).
Connector = Callable[[], httpx.AsyncBaseTransport]

# Addresses of one name tried in turn when a connection is refused (all were checked).
MAX_ADDRESSES = 3
PRIVATE_SETTING = "tools.fetch_allow_private"

# What inet_aton reads as an IPv4 address: one to four parts, decimal, octal or hex.
_IPV4_SPELLING = re.compile(r"(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}", re.IGNORECASE)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class FetchRefused(ValueError):
    """The URL is not one fetch_webpage may open; the message says why."""


def literal_address(host: str) -> IPAddress | None:
    """The address `host` spells out (in any form the C library reads), None for a name."""
    bare = host.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    # getaddrinfo("127.0.0.1.") answers 127.0.0.1 on some systems: one trailing dot is a
    # spelling of the same address, never a name.
    bare = bare.removesuffix(".")
    if not _IPV4_SPELLING.fullmatch(bare):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(bare))
    except OSError as exc:
        # Digits and dots that are no address (999.1.1.1, 08.1): no resolver should guess.
        raise FetchRefused(f"{host!r} looks like an IP address but is not a valid one") from exc


def reached(ip: IPAddress) -> IPAddress:
    """The address a connection to `ip` ends at: the IPv4 address inside a mapped, 6to4 or
    NAT64 IPv6 address (each is routed to that IPv4 host), else `ip` itself."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip.sixtofour is not None:
            return ip.sixtofour
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def is_public(ip: IPAddress) -> bool:
    """True for an address on the public internet: not private, loopback, link-local,
    shared (100.64/10), reserved, multicast or unspecified, whatever IPv6 wraps it."""
    target = reached(ip)
    return target.is_global and not (
        target.is_private
        or target.is_loopback
        or target.is_link_local
        or target.is_multicast
        or target.is_reserved
        or target.is_unspecified
        or (isinstance(target, ipaddress.IPv6Address) and target.is_site_local)
    )


async def system_resolver(host: str, port: int) -> list[str]:
    """The machine's resolver (getaddrinfo), addresses in its order."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchRefused(f"the host {host!r} does not resolve ({exc.strerror})") from exc
    return [str(info[4][0]) for info in infos]


async def checked_addresses(
    host: str, port: int, allow_private: bool, resolver: Resolver = system_resolver
) -> list[IPAddress]:
    """The addresses a connection to `host` may use: resolved once, all checked; raises
    FetchRefused when any of them is local or private (and those are not allowed)."""
    literal = literal_address(host)
    if literal is not None:
        found = [literal]
    else:
        # A zone id (fe80::1%eth0) only names an interface; the address is what is checked.
        found = [ipaddress.ip_address(a.split("%", 1)[0]) for a in await resolver(host, port)]
    if not found:
        raise FetchRefused(f"the host {host!r} resolves to no address")
    # A wrapped address is named with what it reaches (::ffff:7f00:1 is 127.0.0.1).
    blocked = [
        str(a) if reached(a) == a else f"{a} = {reached(a)}" for a in found if not is_public(a)
    ]
    if blocked and not allow_private:
        # One private answer refuses the name: trying only the public ones would still
        # let the name's owner pick which one we talk to.
        raise FetchRefused(
            f"{host} resolves to a local or private address ({', '.join(sorted(blocked))}); "
            f"fetching those is off ({PRIVATE_SETTING})"
        )
    # A mapped address is dialled as the IPv4 it wraps: the same host, reachable even where
    # IPv6 is off.
    connect = [
        a.ipv4_mapped if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped else a
        for a in found
    ]
    return list(dict.fromkeys(connect))


def pin(request: httpx.Request, ip: IPAddress, name: str | None) -> httpx.Request:
    """`request` sent to `ip`: the same Host header, and TLS that sends and verifies `name`
    (None for a URL that names an address: then the certificate must name that address)."""
    headers = request.headers.copy()
    if "host" not in headers:
        headers["Host"] = request.url.netloc.decode("ascii")
    extensions = dict(request.extensions)
    if name is not None:
        # httpcore passes this to the TLS handshake as server_hostname: SNI and the
        # certificate's hostname check both use the name, not the IP in the URL.
        extensions["sni_hostname"] = name
    # With a stream given, httpx.Request keeps the headers as they are (Host included).
    return httpx.Request(
        request.method,
        request.url.copy_with(host=str(ip)),
        headers=headers,
        stream=request.stream,
        extensions=extensions,
    )


def direct_connector() -> httpx.AsyncBaseTransport:
    """Plain connections: no proxy from the environment, and no kept-alive connection that
    a request for another name on the same address could reuse."""
    return httpx.AsyncHTTPTransport(
        trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)
    )


class PinnedTransport(httpx.AsyncBaseTransport):
    """Resolves each request's host once, refuses local and private addresses (unless
    allowed), and connects to an address it checked. Meant for GETs: a request is retried on
    the next checked address when a connection is refused, so its body must be empty."""

    def __init__(
        self,
        *,
        allow_private: bool = False,
        resolver: Resolver = system_resolver,
        connector: Connector = direct_connector,
    ) -> None:
        self.allow_private = allow_private
        self.resolver = resolver
        self._inner = connector()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        # raw_host is the ASCII (IDNA) form: what DNS and SNI both take.
        host = request.url.raw_host.decode("ascii")
        port = request.url.port or (443 if request.url.scheme == "https" else 80)
        addresses = await checked_addresses(host, port, self.allow_private, self.resolver)
        name = None if literal_address(host) is not None else host.removesuffix(".")
        failure: httpx.ConnectError | None = None
        for ip in addresses[:MAX_ADDRESSES]:
            try:
                return await self._inner.handle_async_request(pin(request, ip, name))
            except httpx.ConnectError as exc:
                failure = exc
        assert failure is not None  # checked_addresses never returns an empty list
        raise failure

    async def aclose(self) -> None:
        await self._inner.aclose()
