"""Pairing on a real server over a real SQLite file: a one-time code gives a device its own
cookie, which the API accepts like the server token; codes expire, wrong tries lock pairing,
a revoked device is refused, a replayed cookie from another origin is refused, and only the
machine itself (or the token) makes codes and manages devices."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.cli import main
from bot.server.app import SHARED, Engines
from bot.server.pairing import COOKIE_MAX_AGE_S, lan_host
from config import Settings, load_settings
from memory.devices import token_hash
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.voice.conftest import RunningServer, serve
from tests.bot.voice.test_server_http import data_only_offer

TOKEN = "s3cret-server-token"
JSON = {"Content-Type": "application/json"}


def settings_with(token: str = "") -> Settings:
    return load_settings(context={"window": 4096}, server={"token": token})


@asynccontextmanager
async def running(
    settings: Settings, engines: Engines, tokenizer: Tokenizer, host: str = "127.0.0.1"
) -> AsyncIterator[RunningServer]:
    llm = ScriptedLLM(tokenizer, ["Hello."])
    with Store.open(settings) as store:
        async with serve(settings, engines, llm, store, host=host) as server:
            yield server


async def call(
    url: str, method: str, path: str, headers: dict[str, str] | None = None, body: Any = None
) -> tuple[int, dict[str, Any], aiohttp.ClientResponse]:
    """One request with no cookie jar: a test sends the Cookie header itself, as a browser
    sends a Secure cookie only over HTTPS."""
    sent = dict(headers or {})
    if body is not None:
        sent.update(JSON)
    async with (
        aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http,
        http.request(method, f"{url}{path}", headers=sent, json=body) as response,
    ):
        try:
            data = await response.json(content_type=None)
        except ValueError:
            data = {}
        return response.status, data if isinstance(data, dict) else {}, response


def owner(token: str = TOKEN) -> dict[str, str]:
    return {"X-Annie-Token": token}


def cookie(value: str) -> dict[str, str]:
    return {"Cookie": f"annie_device={value}"}


async def new_code(url: str, headers: dict[str, str] | None = None) -> str:
    status, data, _ = await call(url, "POST", "/api/pairing-code", headers)
    assert status == 200, data
    return str(data["code"])


async def pair(url: str, code: str, name: str) -> str:
    """Pair a device; returns the token its cookie carries."""
    status, data, response = await call(url, "POST", "/api/pair", body={"code": code, "name": name})
    assert status == 200 and data["device"] == name, data
    morsel = response.cookies["annie_device"]
    return morsel.value


async def test_a_paired_device_uses_the_api_until_it_is_revoked(
    engines: Engines, tokenizer: Tokenizer
) -> None:
    settings = settings_with(TOKEN)
    async with running(settings, engines, tokenizer) as server:
        url = server.url
        # The pairing page needs no credential: it is how a device gets one.
        status, _, response = await call(url, "GET", "/pair")
        assert status == 200
        page = await call(url, "GET", "/static/pair.js")
        assert page[0] == 200

        # Asking for a code needs the token here (a token is set, so loopback alone is not
        # enough); the answer has the code, its expiry, the address and its QR code.
        status, data, _ = await call(url, "POST", "/api/pairing-code")
        assert status == 401 and "token" in data["reason"]
        status, data, _ = await call(url, "POST", "/api/pairing-code", owner())
        assert status == 200, data
        assert re.fullmatch(r"\d{6}", data["code"])
        assert re.fullmatch(rf"https://[^/]+:\d+/pair\?code={data['code']}", data["url"])
        assert (
            data["qr_svg"].startswith("<svg")
            and 'xmlns="http://www.w3.org/2000/svg"' in data["qr_svg"]
        )
        assert 250 <= data["expires_in_s"] <= 300 and data["expires_at"]

        # Pairing sets a cookie the page cannot read and a browser sends only to this site,
        # only over HTTPS.
        status, body, response = await call(
            url, "POST", "/api/pair", body={"code": data["code"], "name": "Kitchen phone"}
        )
        assert status == 200 and body["device"] == "Kitchen phone", body
        raw = response.headers.getall("Set-Cookie")
        assert len(raw) == 1
        parts = [p.strip() for p in raw[0].split(";")]
        assert parts[0].startswith("annie_device=") and len(parts[0]) > len("annie_device=") + 40
        lowered = {p.lower() for p in parts[1:]}
        for flag in ("secure", "httponly", "samesite=strict", "path=/"):
            assert flag in lowered, raw
        assert f"max-age={COOKIE_MAX_AGE_S}" in lowered
        device_token = parts[0].split("=", 1)[1]

        # The code was used up.
        status, again, _ = await call(
            url, "POST", "/api/pair", body={"code": data["code"], "name": "Sofa laptop"}
        )
        assert status == 403 and "no pairing code is waiting" in again["reason"]

        # Stored hashed: the raw token is nowhere in the database file or its log.
        assert server.store.path is not None
        on_disk = b"".join(
            p.read_bytes()
            for p in (server.store.path, Path(f"{server.store.path}-wal"))
            if p.exists()
        )
        assert device_token.encode() not in on_disk
        assert token_hash(device_token).encode() in on_disk

        # The cookie authorizes the knowledge panel and the offer, like the token does.
        assert (await call(url, "GET", "/api/knowledge"))[0] == 401
        status, knowledge, _ = await call(url, "GET", "/api/knowledge", cookie(device_token))
        assert status == 200 and "tasks" in knowledge
        offer = {"sdp": await data_only_offer(), "type": "offer"}
        status, refused, _ = await call(url, "POST", "/api/offer", body=offer)
        assert status == 401, refused
        status, passed, _ = await call(url, "POST", "/api/offer", cookie(device_token), offer)
        assert status == 400 and "audio" in passed["reason"], passed  # past the credential
        status, me, _ = await call(url, "GET", "/api/pairing", cookie(device_token))
        assert me["authorized"] and me["device"] == "Kitchen phone" and me["owner"] is True
        seen = server.store.devices.find_by_token(device_token)
        assert seen is not None and seen.last_seen_at is not None
        # A made-up cookie is told it is not paired here.
        status, unknown, _ = await call(url, "GET", "/api/knowledge", cookie("x" * 43))
        assert status == 401 and "pair it again at /pair" in unknown["reason"]

        # A stolen cookie replayed from another site's page is refused before any route.
        for foreign in (
            {"Origin": "http://evil.example"},
            {"Origin": "https://evil.example"},
            {"Sec-Fetch-Site": "cross-site"},
        ):
            status, why, _ = await call(
                url, "GET", "/api/knowledge", {**cookie(device_token), **foreign}
            )
            assert status == 403 and "refused" in why["reason"], (foreign, why)
            status, _, _ = await call(
                url, "POST", "/api/offer", {**cookie(device_token), **foreign}, offer
            )
            assert status == 403

        # The owner sees it listed and revokes it; its next request is refused, saying why.
        status, listed, _ = await call(url, "GET", "/api/devices", owner())
        assert status == 200
        assert [(d["name"], d["revoked_at"]) for d in listed["devices"]] == [
            ("Kitchen phone", None)
        ]
        assert listed["devices"][0]["last_seen_at"] is not None
        status, gone, _ = await call(
            url, "POST", "/api/devices/revoke", owner(), {"device": "Kitchen phone"}
        )
        assert status == 200 and gone["revoked"]["revoked_at"], gone
        status, why, _ = await call(url, "GET", "/api/knowledge", cookie(device_token))
        assert status == 403 and "Kitchen phone" in why["reason"] and "unpaired" in why["reason"]
        status, why, _ = await call(url, "POST", "/api/offer", cookie(device_token), offer)
        assert status == 403 and "unpaired" in why["reason"]
        status, twice, _ = await call(
            url, "POST", "/api/devices/revoke", owner(), {"device": "Kitchen phone"}
        )
        assert status == 404 and "Kitchen phone" in twice["reason"]
        # The server token keeps working for scripts.
        assert (await call(url, "GET", "/api/knowledge", owner()))[0] == 200
        assert (await call(url, "GET", f"/api/knowledge?token={TOKEN}"))[0] == 200


class Clock:
    """Seconds since the epoch that move only when told: expiry and locks are checked by
    moving the clock past them, never by sleeping (a slow machine makes a sleep too short)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def test_an_expired_code_is_refused(engines: Engines, tokenizer: Tokenizer) -> None:
    async with running(settings_with(), engines, tokenizer) as server:
        clock = Clock()
        server.app[SHARED].pairing.clock = clock
        # No token set: this machine (a loopback peer) is the owner.
        code = await new_code(server.url)
        clock.advance(server.app[SHARED].pairing.ttl_s + 1)
        status, data, response = await call(
            server.url, "POST", "/api/pair", body={"code": code, "name": "Kitchen phone"}
        )
        assert status == 410 and "expired" in data["reason"] and "new one" in data["reason"]
        assert "Set-Cookie" not in response.headers
        assert server.store.devices.list() == []
        # A fresh code works.
        assert await pair(server.url, await new_code(server.url), "Kitchen phone")
        # A name in use is refused after the code is checked, and the code stays live.
        code = await new_code(server.url)
        status, data, _ = await call(
            server.url, "POST", "/api/pair", body={"code": code, "name": "KITCHEN phone"}
        )
        assert status == 409 and "already paired" in data["reason"], data
        assert await pair(server.url, code, "Sofa laptop")

        # Bad input gets a 4xx that says what is wrong, and pairs nothing.
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{server.url}/api/pair", data="code=123456") as response,
        ):
            assert (
                response.status == 415 and "application/json" in (await response.json())["reason"]
            )
        for body, why in (
            ([1, 2], "JSON object"),
            ({"code": "123456"}, '"name"'),
            ({"code": "123456", "name": "   "}, "needs a name"),
            ({"code": 123456, "name": "Hall"}, '"code"'),
        ):
            status, data, _ = await call(server.url, "POST", "/api/pair", body=body)
            assert status == 400 and why in data["reason"], (body, data)
        assert len(server.store.devices.list()) == 2


async def test_five_wrong_codes_lock_pairing_even_for_the_right_code(
    engines: Engines, tokenizer: Tokenizer
) -> None:
    async with running(settings_with(), engines, tokenizer) as server:
        url = server.url
        clock = Clock()
        server.app[SHARED].pairing.clock = clock
        code = await new_code(url)
        wrong = f"{(int(code) + 1) % 1_000_000:06d}"

        def attempt(given: str, name: str = "Kitchen phone") -> Any:
            return call(url, "POST", "/api/pair", body={"code": given, "name": name})

        # Misses in a row count; a success starts the count again.
        for left in (4, 3):
            status, data, _ = await attempt(wrong)
            assert status == 403 and f"{left} more wrong tries" in data["reason"], data
        assert await pair(url, code, "Kitchen phone")
        code = await new_code(url)
        wrong = f"{(int(code) + 1) % 1_000_000:06d}"
        for left in (4, 3, 2, 1):
            status, data, _ = await attempt(wrong, "Sofa laptop")
            assert status == 403 and f"{left} more wrong" in data["reason"], data
        status, data, response = await attempt(wrong, "Sofa laptop")
        assert status == 429 and "locked after 5 wrong codes" in data["reason"]
        assert re.search(r"unlocks at \d\d:\d\d:\d\d", data["reason"]), data
        assert int(response.headers["Retry-After"]) >= 1
        # While locked even the right code is refused, and no new code is made.
        status, data, _ = await attempt(code, "Sofa laptop")
        assert status == 429 and "locked" in data["reason"]
        status, data, _ = await call(url, "POST", "/api/pairing-code")
        assert status == 429 and "locked" in data["reason"]
        assert [d.name for d in server.store.devices.list()] == ["Kitchen phone"]
        # Malformed input is an error of its own and does not touch the count or the lock.
        status, data, _ = await call(url, "POST", "/api/pair", body={"code": "12", "name": "x"})
        assert status == 400 and "6 digits" in data["reason"]

        clock.advance(server.app[SHARED].pairing.lock_s + 1)
        # The lock burned the code: after it, only a new one pairs.
        status, data, _ = await attempt(code, "Sofa laptop")
        assert status == 403 and "no pairing code is waiting" in data["reason"]
        assert await pair(url, await new_code(url), "Sofa laptop")


async def test_only_this_machine_or_the_token_makes_codes_and_manages_devices(
    engines: Engines, tokenizer: Tokenizer
) -> None:
    settings = settings_with(TOKEN)
    lan = lan_host(settings)
    async with running(settings, engines, tokenizer, host="0.0.0.0") as server:
        port = server.url.rsplit(":", 1)[1]
        local, remote = f"http://127.0.0.1:{port}", f"http://{lan}:{port}"
        # A device on the network with no credential: every API refuses, the page says pair.
        for method, path in (
            ("POST", "/api/pairing-code"),
            ("GET", "/api/devices"),
            ("GET", "/api/knowledge"),
        ):
            assert (await call(remote, method, path))[0] == 401, path
        status, me, _ = await call(remote, "GET", "/api/pairing")
        assert status == 200 and me["pair"] is True and me["authorized"] is False

        # It pairs with a code the owner made on the machine, and may then talk to Annie...
        device_token = await pair(remote, await new_code(local, owner()), "Kitchen phone")
        assert (await call(remote, "GET", "/api/knowledge", cookie(device_token)))[0] == 200
        # ...but not make codes for others or manage devices.
        for method, path, body in (
            ("POST", "/api/pairing-code", None),
            ("GET", "/api/devices", None),
            ("POST", "/api/devices/revoke", {"device": "Kitchen phone"}),
        ):
            status, data, _ = await call(remote, method, path, cookie(device_token), body)
            assert status == 403 and "only Annie's own machine" in data["reason"], (path, data)
        # Through a proxy on the machine a request is not the machine's own.
        proxied = {**cookie(device_token), "X-Forwarded-For": "192.168.1.50"}
        status, data, _ = await call(local, "POST", "/api/pairing-code", proxied)
        assert status == 403 and "only Annie's own machine" in data["reason"]
        # With the token a script may do it from anywhere.
        assert (await call(remote, "GET", "/api/devices", owner()))[0] == 200
        assert [d.active for d in server.store.devices.list()] == [True]

    # With no token set, a network address still needs a credential (loopback does not).
    async with running(settings_with(), engines, tokenizer, host="0.0.0.0") as server:
        port = server.url.rsplit(":", 1)[1]
        remote = f"http://{lan}:{port}"
        status, data, _ = await call(remote, "GET", "/api/knowledge")
        assert status == 401
        assert (await call(f"http://127.0.0.1:{port}", "GET", "/api/knowledge"))[0] == 200
        status, data, _ = await call(remote, "POST", "/api/pairing-code")
        assert status == 401


async def test_the_terminal_pairing_command_gets_a_code_from_the_running_server(
    engines: Engines, tokenizer: Tokenizer, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running(settings_with(), engines, tokenizer) as server:
        # The command blocks on its request: it runs beside the server's event loop.
        assert await asyncio.to_thread(main, ["pair", "--url", server.url]) == 0
        out = capsys.readouterr().out
        live = server.app[SHARED].pairing.current
        assert live is not None and f"Pairing code: {live.code}" in out
        assert f"/pair?code={live.code}" in out and "▀" in out  # the QR code, in blocks
        assert await pair(server.url, live.code, "Hall tablet")
    # A server that wants a token this command was not given refuses, and it says so.
    async with running(settings_with(TOKEN), engines, tokenizer) as guarded:
        assert await asyncio.to_thread(main, ["pair", "--url", guarded.url, "--no-qr"]) == 1
        err = capsys.readouterr().err
        assert "gave no pairing code" in err and "missing or wrong token" in err
        assert guarded.app[SHARED].pairing.current is None
    # With no server to ask, it says so.
    assert main(["pair", "--url", server.url]) == 1
    assert "cannot reach Annie's server" in capsys.readouterr().err
