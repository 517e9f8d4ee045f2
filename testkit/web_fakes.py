"""Fakes for tests of the web tools: the web played on this machine, so no test leaves it.

`SearchEngine` is a search engine and its pages on 127.0.0.1, answered from a thread (an
approved search runs while the session's event loop waits for it). It speaks SearxNG's JSON
API, and it is DuckDuckGo's HTML endpoint for the real `ddgs` library: ddgs is given the
engine as its HTTPS proxy, the proxy lets a tunnel open to html.duckduckgo.com only, and
inside it answers over TLS with a certificate from a CA of its own, which ddgs is told to
trust (`ca_file`). So ddgs runs unchanged, certificate checks included.

`ScriptedResolver` and `Rerouted` sit under `bot.tools.pinned_http`'s transport: a DNS server
that answers from a script (one that rebinds, say), and a network where named public
addresses are served by servers on this machine.
"""

from __future__ import annotations

import html
import json
import ssl
import tempfile
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from bot.tools.pinned_http import FetchRefused
from bot.tools.web import SearchHit

# The hosts the proxy opens a tunnel to, and the engine name ddgs knows each by.
DDG_HOST = "html.duckduckgo.com"
ENGINES = {DDG_HOST: "duckduckgo"}

Results = Callable[[str], list[SearchHit]]


def numbered_hits(query: str) -> list[SearchHit]:
    """Eight made-up results for any query, numbered from 0."""
    return [
        SearchHit(f"About {query} {n}", f"https://example.org/{n}", f"Snippet {n} on {query}.")
        for n in range(8)
    ]


def duckduckgo_page(hits: list[SearchHit]) -> str:
    """A results page in the shape of html.duckduckgo.com's: each result a `result__body`
    block holding the title link in an h2 and the snippet link beside it."""
    blocks = "".join(
        '<div class="result results_links web-result"><div class="links_main result__body">'
        f'<h2 class="result__title"><a class="result__a" href="{html.escape(h.url)}">'
        f"{html.escape(h.title)}</a></h2>"
        f'<a class="result__snippet" href="{html.escape(h.url)}">{html.escape(h.snippet)}</a>'
        "</div></div>"
        for h in hits
    )
    return f'<html><body><div id="links" class="results">{blocks}</div></body></html>'


def searxng_json(query: str, hits: list[SearchHit]) -> str:
    """SearxNG's answer to `format=json`: title, url and content for each result."""
    results = [{"title": h.title, "url": h.url, "content": h.snippet} for h in hits]
    return json.dumps({"query": query, "results": results})


class SearchEngine:
    """A search engine on 127.0.0.1: SearxNG's JSON at `searxng_url`, DuckDuckGo through
    `proxy` (trusting `ca_file`), and `pages` (path -> HTML) under `url`. `queries` records
    (engine, query) for each search, `reads` each page path asked for, and `refused` each
    tunnel asked for to a host it does not play."""

    def __init__(
        self, results: Results = numbered_hits, pages: dict[str, str] | None = None
    ) -> None:
        self.results = results
        self.pages = dict(pages or {})
        self.queries: list[tuple[str, str]] = []
        self.reads: list[str] = []
        self.refused: list[str] = []
        self._dir = tempfile.TemporaryDirectory(prefix="annie-fake-engine-")
        self.ca_file, self.server_tls = _certificates(Path(self._dir.name), list(ENGINES))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True  # an open tunnel does not hold up close()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def searxng_url(self) -> str:
        return f"{self.url}/search"

    @property
    def proxy(self) -> str:
        return self.url

    def __enter__(self) -> SearchEngine:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._thread.join()
        self._server.server_close()
        self._dir.cleanup()


def _handler(engine: SearchEngine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        tunnel = ""  # the host a CONNECT opened; "" on the plain listener

        def do_CONNECT(self) -> None:
            host = self.path.rsplit(":", 1)[0]
            if host not in ENGINES:
                engine.refused.append(self.path)
                self._send(403, "text/plain", f"no tunnel to {host} here")
                self.close_connection = True
                return
            self.send_response(200, "Connection Established")
            self.end_headers()
            self.wfile.flush()
            # From here the client speaks TLS to "host"; read its requests inside the tunnel.
            try:
                tls = engine.server_tls.wrap_socket(self.connection, server_side=True)
            except (ssl.SSLError, OSError):
                self.close_connection = True  # the client did not trust the certificate
                return
            self.connection = tls
            self.rfile = tls.makefile("rb")
            self.wfile = tls.makefile("wb")
            self.tunnel = host
            self.close_connection = False
            while not self.close_connection:
                self.handle_one_request()
            tls.close()

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if not self.tunnel and url.path == "/search":
                if query.get("format") != ["json"]:
                    self._send(400, "text/plain", "only format=json here")
                    return
                q = query.get("q", [""])[0]
                engine.queries.append(("searxng", q))
                self._send(200, "application/json", searxng_json(q, engine.results(q)))
            elif not self.tunnel and url.path in engine.pages:
                engine.reads.append(url.path)
                self._send(200, "text/html; charset=utf-8", engine.pages[url.path])
            else:
                self._send(404, "text/plain", "not found")

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.tunnel != DDG_HOST or urlsplit(self.path).path != "/html/":
                self._send(404, "text/plain", "not found")
                return
            q = parse_qs(body.decode())["q"][0]
            engine.queries.append((ENGINES[DDG_HOST], q))
            self._send(200, "text/html; charset=utf-8", duckduckgo_page(engine.results(q)))

        def _send(self, status: int, ctype: str, text: str) -> None:
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass  # tests read `queries`, not stderr

    return Handler


def _certificates(folder: Path, hosts: list[str]) -> tuple[str, ssl.SSLContext]:
    """A CA written to folder/ca.pem, and a server context whose certificate it signed for
    `hosts`. Real clients refuse a self-signed leaf, so the CA and the leaf are separate."""
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Annie test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    (folder / "leaf.key").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(folder / "leaf.pem", folder / "leaf.key")
    context.set_alpn_protocols(["http/1.1"])  # the tunnel's reader speaks HTTP/1.1 only
    return str(folder / "ca.pem"), context


class ScriptedResolver:
    """A DNS server that answers from a script, one entry per lookup (the last repeats):
    `ScriptedResolver({"a.example": [["93.184.216.34"], ["127.0.0.1"]]})` rebinds a.example
    to loopback on its second lookup. Unknown names do not resolve. `lookups` records each."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        seen = self.lookups.count(host)
        self.lookups.append(host)
        script = self.answers.get(host)
        if not script:
            raise FetchRefused(f"the host {host!r} does not resolve (not in the script)")
        return script[min(seen, len(script) - 1)]


class Rerouted(httpx.AsyncBaseTransport):
    """A network where the addresses in `routes` are served by ports on 127.0.0.1 (a public
    address's server, played locally); any other address is dialled as it is. `dialled`
    records (address, port, Host header, SNI name) for every connection asked for."""

    def __init__(self, routes: dict[str, int], inner: httpx.AsyncBaseTransport) -> None:
        self.routes = routes
        self.inner = inner
        self.dialled: list[tuple[str, int | None, str, str | None]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        ip, port = request.url.host, request.url.port
        sni = request.extensions.get("sni_hostname")
        self.dialled.append((ip, port, request.headers.get("host", ""), sni))
        if ip in self.routes:
            url = request.url.copy_with(host="127.0.0.1", port=self.routes[ip])
            request = httpx.Request(
                request.method,
                url,
                headers=request.headers,
                stream=request.stream,
                extensions=request.extensions,
            )
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
