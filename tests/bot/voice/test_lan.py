"""`serve --lan` for real: the app on loopback and this machine's network address, one port,
HTTPS with Annie's own certificate. A client that trusts her authority gets the page, one
that does not fails verification, plain HTTP to the port gets a 400 naming the https://
address, a request that reaches the network address needs a credential, and the Host,
Origin, body-size and cross-site rules hold there over HTTPS as they do on loopback."""

from __future__ import annotations

import asyncio
import os
import re
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bot.runtime import Runtime
from bot.server import certs, tls
from bot.server.app import WEB_DIR, Engines, runtime_app
from bot.server.lan import CA_TYPE, start_sites
from config import Settings, load_settings
from memory.store import Store
from models.base import LLM
from tests.bot.voice.conftest import serve
from tests.bot.voice.test_hardening import Answer, parse


def lan_address() -> str:
    found = tls.lan_addresses()  # what `serve --lan` binds
    assert found, "this machine has no non-loopback IPv4 address to test with"
    return found[0]


@dataclass
class LanServer:
    port: int
    lan: str
    ca: Path | None

    def url(self, where: str, path: str = "/") -> str:
        return f"https://{where}:{self.port}{path}"


@asynccontextmanager
async def serve_lan(
    settings: Settings, engines: Engines, llm: LLM, store: Store
) -> AsyncIterator[LanServer]:
    """What `serve --lan` runs: the app on 127.0.0.1 and the LAN address, HTTPS sites only."""
    runtime = Runtime(settings, llm=llm, store=store)
    app = runtime_app(settings, engines, runtime)
    runner = web.AppRunner(app)
    await runner.setup()
    lan = lan_address()
    context = tls.server_context(settings, tls.identity(settings, [lan]))
    sites, skipped = await start_sites(runner, ["127.0.0.1", lan], 0, context)
    assert not skipped and len(sites) == 2
    try:
        yield LanServer(sites[0].port, lan, tls.ensure(settings).ca)
    finally:
        await runner.cleanup()
        for session in list(runtime.sessions):
            await session.close()


def trusting(ca: Path | None) -> ssl.SSLContext:
    assert ca is not None
    return ssl.create_default_context(cafile=str(ca))


async def call(
    server: LanServer,
    where: str,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> Answer:
    """One request written by hand over TLS (any header can be forged), to `where`."""
    reader, writer = await asyncio.open_connection(
        where, server.port, ssl=trusting(server.ca), server_hostname=where
    )
    head = {"Host": f"{where}:{server.port}", "Connection": "close", **(headers or {})}
    if body:
        head.setdefault("Content-Length", str(len(body)))
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in head.items()), "", ""]
    writer.write("\r\n".join(lines).encode() + body)
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 15)
    writer.close()
    return parse(raw)


def lan_settings(**server: object) -> Settings:
    return load_settings(context={"window": 4096}, server={"lan": True, **server})


async def test_https_for_a_client_that_trusts_the_authority_and_not_for_one_that_does_not(
    annie_home: Path, engines: Engines, llm: LLM, store: Store
) -> None:
    async with serve_lan(lan_settings(), engines, llm, store) as server:
        trusted = trusting(server.ca)
        async with aiohttp.ClientSession() as http:
            for where in ("127.0.0.1", server.lan, "localhost"):
                async with http.get(server.url(where), ssl=trusted) as r:
                    assert r.status == 200 and "app.js" in await r.text(), where
                    assert "default-src 'self'" in r.headers["Content-Security-Policy"]
                    assert r.url.scheme == "https"
            for where in ("127.0.0.1", server.lan):
                # The system's authorities only: Annie's is not among them.
                with pytest.raises(aiohttp.ClientConnectorCertificateError):
                    await http.get(server.url(where), ssl=ssl.create_default_context())

            # The trust page and the authority's certificate, never its key.
            async with http.get(server.url(server.lan, "/trust"), ssl=trusted) as r:
                page = await r.text()
                assert r.status == 200 and r.content_type == "text/html"
                assert "iPhone" in page and "Android" in page and "Windows" in page
                assert "{{" not in page and server.url(server.lan) in page
                assert certs.fingerprint(tls.authority_pem(lan_settings()) or b"") in page
                assert "'self'" in r.headers["Content-Security-Policy"]
            async with http.get(server.url(server.lan, "/annie-ca.crt"), ssl=trusted) as r:
                body = await r.read()
                assert r.status == 200 and r.content_type == CA_TYPE
                assert server.ca is not None and body == server.ca.read_bytes()
                assert b"PRIVATE" not in body


async def test_plain_http_to_the_https_port_is_refused_with_the_https_address(
    annie_home: Path, engines: Engines, llm: LLM, store: Store
) -> None:
    async with serve_lan(lan_settings(), engines, llm, store) as server:
        async with aiohttp.ClientSession() as http:
            for where in (server.lan, "127.0.0.1"):
                plain = f"http://{where}:{server.port}/api/offer"
                async with http.post(plain, json={"type": "offer"}) as r:
                    data = await r.json()
                    assert r.status == 400 and data["error"] == 400
                    assert f"https://{where}:{server.port}/" in data["reason"]
                    assert "HTTPS only" in data["reason"]
                    assert "default-src 'self'" in r.headers["Content-Security-Policy"]
            # And HTTPS still works on the same port after it.
            healthz = server.url(server.lan, "/healthz")
            async with http.get(healthz, ssl=trusting(server.ca)) as r:
                assert r.status == 200 and (await r.json())["ok"] is True
        # A handshake that is not one is hung up on (within the wait), never answered.
        reader, writer = await asyncio.open_connection(server.lan, server.port)
        writer.write(b"\x16\x03\x01\x00\x05junk")
        await writer.drain()
        assert b"HTTP/" not in await asyncio.wait_for(reader.read(), 15)
        writer.close()


async def test_on_the_lan_address_a_request_needs_a_credential(
    annie_home: Path, engines: Engines, llm: LLM, store: Store
) -> None:
    async with serve_lan(lan_settings(), engines, llm, store) as server:
        lan = server.lan
        # What a device needs before it holds one: the page, its files, health, trust.
        for path in ("/", "/static/app.js", "/healthz", "/trust", "/annie-ca.crt"):
            assert (await call(server, lan, "GET", path)).status == 200, path
        for method, path in (("GET", "/api/knowledge"), ("POST", "/api/offer")):
            answer = await call(server, lan, method, path, body=b"{}" if method == "POST" else b"")
            assert answer.status == 401, (path, answer)
            assert "not paired" in answer.reason or "pair" in answer.reason, answer
        missing = await call(server, lan, "GET", "/api/nothing-here")
        assert missing.status == 401  # unknown to the network before known to the router
        # This machine, on loopback, with no token configured: as before.
        assert (await call(server, "127.0.0.1", "GET", "/api/knowledge")).status == 200

    async with serve_lan(lan_settings(token="s3cret"), engines, llm, store) as server:
        lan = server.lan
        assert (await call(server, lan, "GET", "/api/knowledge")).status == 401
        wrong = await call(server, lan, "GET", "/api/knowledge", {"X-Annie-Token": "nope"})
        assert wrong.status == 401
        right = await call(server, lan, "GET", "/api/knowledge", {"X-Annie-Token": "s3cret"})
        assert right.status == 200
        assert (await call(server, lan, "GET", "/api/knowledge?token=s3cret")).status == 200


async def test_host_origin_body_and_cors_rules_hold_over_https_on_the_lan_address(
    annie_home: Path, engines: Engines, llm: LLM, store: Store
) -> None:
    settings = lan_settings(token="s3cret", allowed_hosts=["annie.lan"])
    key = {"X-Annie-Token": "s3cret"}
    async with serve_lan(settings, engines, llm, store) as server:
        lan, port = server.lan, server.port

        async def get(host: str) -> Answer:
            return await call(server, lan, "GET", "/healthz", {**key, "Host": host})

        names = tls.machine_names()
        for host in (f"{lan}:{port}", *(f"{n}:{port}" for n in names), "annie.lan"):
            assert (await get(host)).status == 200, host
        # Rebinding: any other name, and loopback's own spellings on a network address.
        for host in (
            f"evil.example:{port}",
            "evil.example",
            lan,  # no port: 443 over HTTPS, not this one
            f"{lan}:{port + 1}",
            f"localhost:{port}",
            f"127.0.0.1:{port}",
            f"{names[0]}.evil:{port}",
        ):
            answer = await get(host)
            assert answer.status == 403 and "Host" in answer.reason, (host, answer)

        offer = {**key, "Content-Type": "application/json"}
        for origin in (
            "https://evil.example",
            "null",
            f"http://{lan}:{port}",  # a page over plain HTTP is never this server's
            f"https://{lan}:{port + 1}",
            f"https://localhost:{port}",
        ):
            answer = await call(
                server, lan, "POST", "/api/offer", {**offer, "Origin": origin}, b"{}"
            )
            assert answer.status == 403 and "cross-origin" in answer.reason, (origin, answer)
        for origin in (f"https://{lan}:{port}", f"https://{names[-1]}:{port}", "https://annie.lan"):
            # Past the guard and the credential: the offer's own check answers.
            answer = await call(
                server, lan, "POST", "/api/offer", {**offer, "Origin": origin}, b"{}"
            )
            assert answer.status == 400 and '"type"' in answer.reason, (origin, answer)

        # Cross-site reads without an Origin, and a CORS preflight: refused, no CORS header.
        for site in ("cross-site", "same-site"):
            answer = await call(
                server, lan, "GET", "/api/knowledge", {**key, "Sec-Fetch-Site": site}
            )
            assert answer.status == 403 and site in answer.reason
        preflight = {
            "Origin": "https://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-annie-token",
        }
        answer = await call(server, lan, "OPTIONS", "/api/offer", preflight)
        assert answer.status == 403
        assert not any(h.startswith("access-control-") for h in answer.headers)

        # The body cap.
        big = b"x" * (settings.server.max_body_bytes + 1)
        answer = await call(server, lan, "POST", "/api/offer", offer, big)
        assert answer.status == 413 and "too large" in answer.reason


async def test_a_certificate_of_the_users_own_is_what_is_served(
    annie_home: Path, tmp_path: Path, engines: Engines, llm: LLM, store: Store
) -> None:
    lan = lan_address()
    theirs = certs.make_authority(certs.Identity(("annie.home.arpa",), (lan,)))
    pair = certs.issue_server(theirs, certs.Identity(("annie.home.arpa",), ("127.0.0.1", lan)))
    cert, key = tmp_path / "own.crt", tmp_path / "own.key"
    certs.save(pair, cert, key)
    ca = tmp_path / "own-ca.crt"
    certs.save(theirs, ca, tmp_path / "own-ca.key")
    settings = lan_settings(tls_cert=str(cert), tls_key=str(key))
    async with serve_lan(settings, engines, llm, store) as server:
        assert server.ca is None
        async with aiohttp.ClientSession() as http:
            async with http.get(server.url(lan), ssl=trusting(ca)) as r:
                assert r.status == 200
            async with http.get(server.url(lan, "/annie-ca.crt"), ssl=trusting(ca)) as r:
                data = await r.json()
                assert r.status == 404 and "of your own" in data["reason"]
    assert not tls.tls_dir(settings).exists()


async def test_without_lan_the_trust_page_says_so_and_there_is_no_certificate(
    voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    async with (
        serve(voice_settings, engines, llm, store) as server,
        aiohttp.ClientSession() as http,
    ):
        async with http.get(f"{server.url}/trust") as r:
            assert r.status == 200 and "--lan" in await r.text()
        async with http.get(f"{server.url}/annie-ca.crt") as r:
            assert r.status == 404 and "HTTPS is off" in (await r.json())["reason"]
        async with http.get(f"{server.url}/") as r:
            assert 'href="/trust"' in await r.text()
    assert not tls.tls_dir(voice_settings).exists()
    # The page runs under the same policy: no inline script, style or handler.
    html = (WEB_DIR / "trust.html").read_text()
    assert not re.search(r"<script|\son\w+\s*=|\sstyle\s*=|<style", html)


def test_serve_lan_refuses_early_with_a_reason(annie_home: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.crt"
    env = {
        **os.environ,
        "ANNIE_SERVER__TLS_CERT": str(missing),
        "ANNIE_SERVER__TLS_KEY": str(missing),
    }
    command = [sys.executable, "-m", "bot", "serve", "--lan", "--port", "0"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2 and str(missing) in result.stderr, result.stderr
    result = subprocess.run(
        [*command, "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "--lan" in result.stderr, result.stderr
