"""The page as an app on a phone's home screen: its web app manifest and icons are served
(on the network too, before a device is paired, since a browser reads them first) with the
right types and sizes, and the page links them; the committed icons are what
`testkit.icons` draws. In a real browser at a phone's width the Talk button sits at the
bottom within a thumb's reach, and a connection that drops and comes back is said in words.
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.server.app import SHARED, WEB_DIR, Engines
from config import Settings
from memory.store import Store
from models.base import LLM
from testkit import icons
from tests.bot.voice.conftest import serve
from tests.bot.voice.test_browser import chromium
from tests.bot.voice.test_browser_pairing import text_of
from tests.bot.voice.test_lan import call, lan_settings, serve_lan

MANIFEST_TYPE = "application/manifest+json"


class Head(HTMLParser):
    """The page's <link> and <meta> tags, as attribute dictionaries."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str]] = []
        self.metas: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "link":
            self.links.append(found)
        elif tag == "meta":
            self.metas.append(found)

    def link(self, rel: str) -> dict[str, str]:
        matching = [link for link in self.links if link.get("rel") == rel]
        assert len(matching) == 1, (rel, self.links)
        return matching[0]


def png_header(data: bytes) -> tuple[int, int, int]:
    """Width, height and colour type from a PNG's IHDR chunk, which must come first."""
    assert data[:8] == icons.PNG_SIGNATURE, data[:8]
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13, kind
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    assert depth == 8
    return width, height, colour


def opaque(data: bytes, width: int) -> bool:
    """Whether every pixel of an RGBA PNG written with no row filter (as `testkit.icons`
    writes them) is fully opaque."""
    chunks = []
    at = 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        if kind == b"IDAT":
            chunks.append(data[at + 8 : at + 8 + length])
        at += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = 1 + 4 * width
    return all(
        raw[row * stride] == 0
        and all(a == 255 for a in raw[row * stride + 4 : (row + 1) * stride : 4])
        for row in range(len(raw) // stride)
    )


async def fetch(
    http: aiohttp.ClientSession, url: str
) -> tuple[int, str, bytes, aiohttp.ClientResponse]:
    async with http.get(url) as r:
        return r.status, r.content_type, await r.read(), r


async def test_the_manifest_and_icons_are_served_and_linked_from_the_page(
    voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    async with (
        serve(voice_settings, engines, llm, store) as server,
        aiohttp.ClientSession() as http,
    ):
        status, _, page, _ = await fetch(http, f"{server.url}/")
        assert status == 200
        head = Head()
        head.feed(page.decode())
        manifest_url = head.link("manifest")["href"]
        assert manifest_url == "/static/manifest.webmanifest"
        themes = {
            m.get("media", ""): m["content"] for m in head.metas if m.get("name") == "theme-color"
        }
        assert set(themes) == {"(prefers-color-scheme: light)", "(prefers-color-scheme: dark)"}

        status, kind, body, response = await fetch(http, server.url + manifest_url)
        assert status == 200 and kind == MANIFEST_TYPE, kind
        assert "default-src 'self'" in response.headers["Content-Security-Policy"]
        manifest: dict[str, Any] = json.loads(body)
        assert manifest["short_name"] == "Annie" and manifest["name"].startswith("Annie")
        assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
        # The colours are the page's own: the bar's in light mode, and the page's ground.
        style = (WEB_DIR / "style.css").read_text()
        card = re.search(r"--card:\s*(#[0-9a-f]{6})", style)
        ground = re.search(r"--bg:\s*(#[0-9a-f]{6})", style)
        assert card and ground
        assert manifest["theme_color"] == card[1] == themes["(prefers-color-scheme: light)"]
        assert manifest["background_color"] == ground[1]

        listed = [(i["src"], i["sizes"], i.get("purpose", "any")) for i in manifest["icons"]]
        touch = head.link("apple-touch-icon")["href"]
        favicon = head.link("icon")
        wanted = [*listed, (touch, "180x180", "any"), (favicon["href"], favicon["sizes"], "any")]
        assert {size for _, size, _ in listed} >= {"192x192", "512x512"}
        assert [p for _, _, p in listed].count("maskable") == 1
        for src, sizes, purpose in wanted:
            # Same origin, under the page's files (img-src 'self'; open to unpaired devices).
            assert src.startswith("/static/icons/"), src
            status, kind, data, _ = await fetch(http, server.url + src)
            assert status == 200 and kind == "image/png", (src, kind)
            width, height, colour = png_header(data)
            assert f"{width}x{height}" == sizes, (src, width, height)
            assert colour == 6, src  # RGBA
            if purpose == "maskable" or src == touch:
                # Full-bleed: a launcher or iOS cuts the shape, so no pixel is see-through.
                assert opaque(data, width), src


async def test_an_unpaired_device_on_the_network_can_read_the_manifest_and_icons(
    annie_home: Path, engines: Engines, llm: LLM, store: Store
) -> None:
    async with serve_lan(lan_settings(), engines, llm, store) as server:
        manifest = json.loads((WEB_DIR / "manifest.webmanifest").read_text())
        paths = ["/static/manifest.webmanifest", *(i["src"] for i in manifest["icons"])]
        for path in paths:
            answer = await call(server, server.lan, "GET", path)
            assert answer.status == 200, (path, answer)
        # The API still needs the pairing.
        assert (await call(server, server.lan, "GET", "/api/knowledge")).status == 401


def test_the_committed_icons_are_what_the_script_draws() -> None:
    for icon in icons.ICONS:
        path = WEB_DIR / "icons" / icon.name
        assert path.is_file(), f"{path} is missing: python -m testkit.icons"
        assert path.read_bytes() == icons.png(icon), f"{path} differs: python -m testkit.icons"


PHONE = {"width": 390, "height": 844}


@pytest.mark.slow
async def test_at_phone_width_talk_is_at_the_bottom_and_a_dropped_connection_is_said(
    tmp_path: Path, voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    async with (
        serve(voice_settings, engines, llm, store) as server,
        chromium(tmp_path / "phone", []) as (_, page),
    ):
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await page.set_viewport_size(PHONE)
        await page.goto(server.url + "/")
        box = await page.locator("#talk").bounding_box()
        assert box is not None
        # Fixed near the bottom edge, most of the width: a thumb's reach, whatever is scrolled.
        assert box["y"] + box["height"] > PHONE["height"] - 80, box
        assert box["width"] > PHONE["width"] * 0.8, box
        assert await page.eval_on_selector("#talk", "e => getComputedStyle(e).position") == "fixed"
        await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        after = await page.locator("#talk").bounding_box()
        assert after == box
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        hit = await page.evaluate(f"document.elementFromPoint({x}, {y}).closest('#talk') !== null")
        assert hit, "something covers the Talk button"

        # Typing opens the connection; then the server loses it, and the page says so.
        await page.fill("#text", "Hello")
        await page.press("#text", "Enter")
        await page.wait_for_selector("#conn[data-state=connected]", timeout=30_000)
        assert await page.is_hidden("#conn-note")
        shared = server.app[SHARED]
        for conn in list(shared.connections.values()):
            await conn.pc.close()
        await text_of(page, "#conn-note", "Connection lost, reconnecting…", timeout=30)
        await page.wait_for_selector("#conn[data-state=connected]", timeout=30_000)
        await text_of(page, "#conn-note", "Reconnected")
        assert errors == []

        # Wider than a phone: the button is back in the page's flow.
        await page.set_viewport_size({"width": 1200, "height": 800})
        assert await page.eval_on_selector("#talk", "e => getComputedStyle(e).position") == "static"
