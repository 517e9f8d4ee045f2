"""The offer endpoint under bad input, the session cap, the token, and the bind rule."""

from __future__ import annotations

import json
import subprocess
import sys

import aiohttp
import pytest
from aiortc import RTCConfiguration, RTCPeerConnection

from bot.server.app import Engines
from bot.server.guard import check_bind, is_loopback
from config import ConfigError, Settings, load_settings
from memory.store import Store
from models.base import LLM, Tokenizer
from models.fakes import ScriptedLLM
from testkit.peer import VoiceClient
from tests.bot.voice.conftest import serve

BROKEN_SDP = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nm=audio nonsense\r\na=garbage:::\r\n"


async def data_only_offer() -> str:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.createDataChannel("events")
    await pc.setLocalDescription(await pc.createOffer())
    sdp = str(pc.localDescription.sdp)
    await pc.close()
    return sdp


async def post(url: str, data: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{url}/api/offer", data=data, headers=headers or {}) as response,
    ):
        return response.status, await response.json()


async def test_bad_offers_get_a_4xx_with_a_reason_and_the_server_keeps_serving(
    voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    json_type = {"Content-Type": "application/json"}
    async with serve(voice_settings, engines, llm, store) as server:
        cases: list[tuple[bytes, int, str]] = [
            (b"", 400, "empty"),
            (b"{not json", 400, "not valid JSON"),
            (b"[1, 2]", 400, "JSON object"),
            (b'{"sdp": "v=0", "type": "answer"}', 400, '"type"'),
            (b'{"type": "offer", "sdp": 42}', 400, '"sdp"'),
            (b"x" * (10 * 1024 * 1024), 413, "too large"),
            (json.dumps({"type": "offer", "sdp": BROKEN_SDP}).encode(), 400, "SDP"),
        ]
        for body, status, reason in cases:
            got, data = await post(server.url, body, json_type)
            assert (got, data["error"]) == (status, status), (body[:40], data)
            assert reason in data["reason"], data

        no_audio = await data_only_offer()
        body = json.dumps({"sdp": no_audio, "type": "offer"}).encode()
        got, data = await post(server.url, body, json_type)
        assert got == 400 and "audio" in data["reason"]
        # A real offer padded with 35 KB of junk lines: under the body cap, over the SDP cap.
        junk = "".join(f"a=x-junk-{i}:{'z' * 100}\r\n" for i in range(300))
        body = json.dumps({"sdp": no_audio + junk, "type": "offer"}).encode()
        assert len(body) < voice_settings.server.max_body_bytes
        got, data = await post(server.url, body, json_type)
        assert got == 400 and "at most 16,384 are accepted" in data["reason"], data

        # Still up: health answers and a real peer connects.
        async with aiohttp.ClientSession() as http, http.get(f"{server.url}/healthz") as r:
            health = await r.json()
            assert r.status == 200 and health["ok"] is True
            assert health["peers"] == 0 and health["tasks"] >= 1
        client = VoiceClient(server.url)
        assert await client.connect()
        async with aiohttp.ClientSession() as http, http.get(f"{server.url}/healthz") as r:
            assert (await r.json())["peers"] == 1
        await client.close()


async def test_healthz_says_when_the_shared_head_is_kept(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    """What a client that wants a warm server waits for (`bench voice` does)."""
    async with serve(voice_settings, engines, ScriptedLLM(tokenizer, []), store) as server:
        async with aiohttp.ClientSession() as http, http.get(f"{server.url}/healthz") as r:
            assert (await r.json())["head_kept"] is False
        stats = await server.runtime.keep_head()
        assert stats is not None and stats.evaluated_tokens > 500 and not stats.cancelled
        async with aiohttp.ClientSession() as http, http.get(f"{server.url}/healthz") as r:
            assert (await r.json())["head_kept"] is True


async def test_sessions_past_the_cap_get_503(
    annie_home: object, engines: Engines, llm: LLM, store: Store
) -> None:
    settings = load_settings(context={"window": 4096}, server={"max_sessions": 1})
    async with serve(settings, engines, llm, store) as server:
        first = VoiceClient(server.url)
        await first.connect()
        second = VoiceClient(server.url)
        with pytest.raises(RuntimeError, match="HTTP 503"):
            await second.connect()
        await second.close()
        async with aiohttp.ClientSession() as http, http.get(f"{server.url}/healthz") as r:
            health = await r.json()
        assert (health["sessions"], health["max_sessions"]) == (1, 1)
        voice = server.voices[0]
        session = server.runtime.sessions[0]
    # Shutting the server down closed the open connection and its session (tier 3).
    assert voice.closed.is_set() and session.closed
    row = store.sessions.get(voice.session_id)
    assert row is not None and row.ended_at
    await first.close()


async def test_the_token_is_required_when_set(
    annie_home: object, engines: Engines, llm: LLM, store: Store
) -> None:
    settings = load_settings(context={"window": 4096}, server={"token": "s3cret"})
    async with serve(settings, engines, llm, store) as server:
        status, data = await post(server.url, b'{"type": "offer", "sdp": "v=0"}')
        assert status == 401 and "token" in data["reason"]
        wrong = VoiceClient(server.url, token="nope")
        with pytest.raises(RuntimeError, match="HTTP 401"):
            await wrong.connect()
        await wrong.close()
        right = VoiceClient(server.url, token="s3cret")
        assert await right.connect()
        await right.close()
        # The page itself loads without the token; it reads ?token= from its own address.
        async with aiohttp.ClientSession() as http, http.get(f"{server.url}/?token=s3cret") as r:
            assert r.status == 200 and "app.js" in await r.text()


def test_a_non_loopback_bind_needs_a_token(annie_home: object) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.2")
    check_bind(load_settings())
    with pytest.raises(ConfigError, match="token"):
        check_bind(load_settings(server={"host": "0.0.0.0"}))
    check_bind(load_settings(server={"host": "0.0.0.0", "token": "t"}))

    # The command refuses before loading any model.
    result = subprocess.run(
        [sys.executable, "-m", "bot", "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "server.token" in result.stderr
