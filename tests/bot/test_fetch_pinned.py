"""fetch_webpage connects to the address it checked: numeric and wrapped spellings of
loopback, a name that rebinds to 127.0.0.1, redirects to private addresses, TLS that keeps
the name, and proxy variables in the environment. Private targets are real servers on
127.0.0.1 that count every request they get; "public" servers are played locally by a
network (`Rerouted`) that serves a public address from a local port."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bot.tools.base import Tool, ToolEnv
from bot.tools.pinned_http import (
    Connector,
    FetchRefused,
    checked_addresses,
    direct_connector,
    is_public,
    literal_address,
    pin,
)
from bot.tools.web import Fetcher, check_url, web_tools
from config import load_settings
from testkit.web_fakes import Rerouted, ScriptedResolver

PUBLIC = "93.184.216.34"  # played by a local server through `Rerouted`


@dataclass
class Local:
    """A server on 127.0.0.1 that records (Host header, path) of every request it gets."""

    port: int
    hits: list[tuple[str, str]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


Serve = Callable[..., Awaitable[Local]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Starts servers that answer every path with a small page, or a redirect to
    `redirects[path]`; all stop at the end of the test."""
    runners: list[web.AppRunner] = []

    async def start(
        label: str = "local",
        redirects: dict[str, str] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> Local:
        local = Local(0)

        async def any_path(request: web.Request) -> web.Response:
            local.hits.append((request.headers.get("Host", ""), request.path))
            if redirects and request.path in redirects:
                raise web.HTTPFound(redirects[request.path])
            page = f"<html><title>{label}</title><p>served {request.path} by {label}</p></html>"
            return web.Response(text=page, content_type="text/html")

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", any_path)
        runner = web.AppRunner(app)
        await runner.setup()
        runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls).start()
        local.port = runner.addresses[0][1]
        return local

    yield start
    for runner in runners:
        await runner.cleanup()


def fetch_tool(
    resolver: ScriptedResolver | None = None, connector: Connector | None = None
) -> Tool:
    fetcher = Fetcher(resolver or ScriptedResolver({}), connector or direct_connector)
    return next(t for t in web_tools(fetcher) if t.name == "fetch_webpage")


async def fetch(tool: Tool, url: str, allow_private: bool = False) -> tuple[bool, str]:
    settings = load_settings(tools={"fetch_allow_private": allow_private, "fetch_timeout_s": 5.0})
    out = await tool.run({"url": url}, ToolEnv(settings=settings))
    return out.ok, out.content


def rerouted(
    routes: dict[str, int], verify: ssl.SSLContext | bool = True
) -> tuple[Connector, list[Rerouted]]:
    """A connector onto a network where each address in `routes` is a local port, and the
    list of networks it made (one per fetch), to read what was dialled."""
    made: list[Rerouted] = []

    def connect() -> httpx.AsyncBaseTransport:
        inner = httpx.AsyncHTTPTransport(verify=verify, trust_env=False)
        made.append(Rerouted(routes, inner))
        return made[-1]

    return connect, made


# --- the check itself -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "address"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0177.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
        ("::", "::"),
        ("example.org", None),
        ("1e1", None),
    ],
)
def test_numeric_spellings_are_read_as_the_resolver_reads_them(
    spelling: str, address: str | None
) -> None:
    found = literal_address(spelling)
    assert found == (ipaddress.ip_address(address) if address is not None else None)


def test_digits_that_are_no_address_are_refused() -> None:
    with pytest.raises(FetchRefused, match="not a valid one"):
        literal_address("999.1.1.1")


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.0.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1", "240.0.0.1", "255.255.255.255", "192.0.2.1",
        "::1", "::", "fe80::1", "fc00::1", "fec0::1", "ff02::1", "ff0e::1", "::127.0.0.1",
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1",
    ],
)  # fmt: skip
def test_local_private_and_wrapped_addresses_are_not_public(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address", [PUBLIC, "1.1.1.1", "2606:4700:4700::1111", "::ffff:93.184.216.34"]
)
def test_public_addresses_are(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


async def test_one_private_answer_refuses_the_name() -> None:
    dns = ScriptedResolver({"mixed.example": [[PUBLIC, "10.0.0.7"]]})
    with pytest.raises(FetchRefused, match=r"local or private address \(10\.0\.0\.7\)"):
        await check_url("http://mixed.example/", allow_private=False, resolver=dns)
    # A mapped answer is dialled as the IPv4 it wraps.
    dns = ScriptedResolver({"mapped.example": [["::ffff:93.184.216.34", PUBLIC]]})
    assert await checked_addresses("mapped.example", 80, False, dns) == [
        ipaddress.IPv4Address(PUBLIC)
    ]


def test_a_pinned_request_keeps_the_name_for_host_and_tls() -> None:
    request = httpx.Request("GET", "https://news.example:8443/a?b=1")
    pinned = pin(request, ipaddress.ip_address("2606:4700:4700::1111"), "news.example")
    assert str(pinned.url) == "https://[2606:4700:4700::1111]:8443/a?b=1"
    assert pinned.headers["Host"] == "news.example:8443"
    assert pinned.extensions["sni_hostname"] == "news.example"


# --- fetches that must never reach this machine -----------------------------------------

LOOPBACK_SPELLINGS = [
    "2130706433", "0177.1", "127.1", "0x7f.1", "0x7f000001", "0.0.0.0", "0",
    "[::ffff:127.0.0.1]", "[::ffff:7f00:1]",
]  # fmt: skip


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
async def test_spellings_of_loopback_are_refused_without_a_request(
    serve: Serve, spelling: str
) -> None:
    server = await serve()
    tool = fetch_tool()
    url = f"http://{spelling}:{server.port}/secret"
    ok, content = await fetch(tool, url)
    assert not ok and content.startswith(f"error: refused to fetch {url}")
    assert "local or private address" in content and server.hits == []
    # The same spelling does reach the server when private addresses are allowed: the
    # refusal above is what kept it away, and the pinned address is the one it spells.
    ok, content = await fetch(tool, url, allow_private=True)
    assert ok and "served /secret" in content and len(server.hits) == 1


@pytest.mark.parametrize("url", ["http://0177.0.0.1:{port}/", "http://[::]:{port}/"])
async def test_other_spellings_are_refused_too(serve: Serve, url: str) -> None:
    server = await serve()
    ok, content = await fetch(fetch_tool(), url.format(port=server.port))
    assert not ok and "refused" in content and server.hits == []


async def test_a_name_answered_with_a_mapped_loopback_address_is_refused(serve: Serve) -> None:
    server = await serve()
    dns = ScriptedResolver({"sneaky.example": [["::ffff:127.0.0.1"]]})
    ok, content = await fetch(fetch_tool(dns), f"http://sneaky.example:{server.port}/")
    assert not ok and "::ffff:7f00:1 = 127.0.0.1" in content and server.hits == []


async def test_a_name_that_rebinds_to_loopback_is_read_from_the_address_that_was_checked(
    serve: Serve,
) -> None:
    public, private = await serve("public"), await serve("private")
    # The attacker's DNS: a public address for the check, loopback for any later lookup.
    dns = ScriptedResolver({"rebind.example": [[PUBLIC], ["127.0.0.1"]]})
    connect, networks = rerouted({PUBLIC: public.port})
    tool = fetch_tool(dns, connect)
    url = f"http://rebind.example:{private.port}/secret"
    ok, content = await fetch(tool, url)
    assert ok and "served /secret by public" in content
    assert dns.lookups == ["rebind.example"]  # resolved once, for the check and the dial
    assert [d[0] for d in networks[0].dialled] == [PUBLIC]
    assert public.hits == [(f"rebind.example:{private.port}", "/secret")]
    assert private.hits == []
    # The next fetch of the name resolves to loopback, and is refused before any dial.
    ok, content = await fetch(tool, url)
    assert not ok and "local or private address (127.0.0.1)" in content
    assert dns.lookups == ["rebind.example"] * 2 and networks[1].dialled == []
    assert private.hits == []


async def test_a_redirect_to_a_private_address_is_refused(serve: Serve) -> None:
    private = await serve("private")
    secret = f"{private.port}/secret"
    redirects = {
        "/to-loopback": f"http://127.0.0.1:{secret}",
        "/to-name": f"http://internal.example:{secret}",
        "/to-mapped": f"http://[::ffff:127.0.0.1]:{secret}",
        "/to-decimal": f"http://2130706433:{secret}",
        "/to-zero": f"http://0.0.0.0:{secret}",
    }
    public = await serve("public", redirects)
    dns = ScriptedResolver({"public.example": [[PUBLIC]], "internal.example": [["127.0.0.1"]]})
    connect, _ = rerouted({PUBLIC: public.port})
    tool = fetch_tool(dns, connect)
    for path in redirects:
        ok, content = await fetch(tool, f"http://public.example{path}")
        assert not ok and content.startswith("error: refused to fetch http://"), content
        assert f":{secret}: " in content and "local or private address" in content
    assert [p for _, p in public.hits] == list(redirects)  # every first hop was fetched
    assert private.hits == []
    # With private addresses allowed the same hop arrives: the refusal is what stopped it.
    ok, content = await fetch(tool, "http://public.example/to-name", allow_private=True)
    assert ok and "served /secret by private" in content
    assert private.hits == [(f"internal.example:{private.port}", "/secret")]


async def test_a_redirect_on_this_machine_is_followed_when_private_is_allowed(
    serve: Serve,
) -> None:
    # The real resolver and real connections: localhost may answer ::1 first, where nothing
    # listens, and the next checked address is tried.
    server = await serve("home", {"/hop": "/page"})
    tool = next(t for t in web_tools() if t.name == "fetch_webpage")
    ok, content = await fetch(tool, f"http://localhost:{server.port}/hop", allow_private=True)
    assert ok and content.startswith("home\n") and "served /page by home" in content
    host = f"localhost:{server.port}"
    assert server.hits == [(host, "/hop"), (host, "/page")]


# --- TLS and proxies ----------------------------------------------------------------------


def certificate(tmp_path: Path, name: str) -> tuple[ssl.SSLContext, ssl.SSLContext, list[str]]:
    """A server context with a self-signed certificate for `name` only, a client context
    that trusts it, and the SNI names the server is sent."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    (tmp_path / "cert.pem").write_bytes(pem)
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    sent: list[str] = []
    server.sni_callback = lambda sock, sni, ctx: sent.append(str(sni))
    client = ssl.create_default_context(cadata=pem.decode())
    return server, client, sent


async def test_tls_sends_and_verifies_the_name_not_the_address(
    serve: Serve, tmp_path: Path
) -> None:
    server_ctx, client_ctx, sni = certificate(tmp_path, "secure.example")
    site = await serve("secure", tls=server_ctx)
    dns = ScriptedResolver({"secure.example": [[PUBLIC]], "other.example": [[PUBLIC]]})
    connect, networks = rerouted({PUBLIC: site.port}, verify=client_ctx)
    tool = fetch_tool(dns, connect)
    ok, content = await fetch(tool, "https://secure.example/news")
    assert ok and "served /news by secure" in content
    assert networks[0].dialled == [(PUBLIC, None, "secure.example", "secure.example")]
    assert sni == ["secure.example"] and site.hits == [("secure.example", "/news")]
    # Another name on the same address: the certificate does not name it, so no page.
    ok, content = await fetch(tool, "https://other.example/news")
    assert not ok and "CERTIFICATE_VERIFY_FAILED" in content
    assert sni[-1] == "other.example" and len(site.hits) == 1


async def test_proxy_variables_in_the_environment_are_ignored(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    page, proxy = await serve("page"), await serve("proxy")
    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(var, proxy.url)
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    # The environment does divert an ordinary client through the proxy ...
    async with httpx.AsyncClient() as plain:
        assert "by proxy" in (await plain.get(f"{page.url}/plain")).text
    assert len(proxy.hits) == 1 and page.hits == []
    # ... and fetch_webpage goes straight to the page.
    ok, content = await fetch(fetch_tool(), f"{page.url}/direct", allow_private=True)
    assert ok and "served /direct by page" in content
    assert len(proxy.hits) == 1 and [p for _, p in page.hits] == ["/direct"]
