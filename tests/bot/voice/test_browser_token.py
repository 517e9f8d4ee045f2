"""The page in a real browser under its own Content Security Policy, opened by a token link.

Unlike the other browser tests this one does not bypass the policy: the page must load and
work with only itself allowed, and Chromium must report no violation. The token in the link
must be gone from the address once the page has loaded, yet still be sent (the knowledge
panel's request needs it) and survive a reload of the tab.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from playwright.async_api import Page, async_playwright

from bot.server.app import SHARED, Engines
from config import load_settings
from memory.store import Store
from models.base import LLM
from tests.bot.voice.conftest import serve
from tests.bot.voice.test_browser import CHROMIUM, FLAGS

# A real browser (Chromium through Playwright): the full run only.
pytestmark = pytest.mark.slow


async def panel_updates(page: Page, at_least: int, timeout: float = 15) -> None:
    # Polled from here: wait_for_function evaluates strings in the page, which the policy
    # (rightly) forbids.
    deadline = time.monotonic() + timeout
    while True:
        got = int(await page.get_attribute("#knowledge", "data-updates") or 0)
        if got >= at_least:
            return
        assert time.monotonic() < deadline, "the knowledge panel never loaded"
        await asyncio.sleep(0.1)


async def test_the_token_leaves_the_address_and_the_page_obeys_its_policy(
    annie_home: Path, engines: Engines, llm: LLM, store: Store, tmp_path: Path
) -> None:
    settings = load_settings(context={"window": 4096}, server={"token": "s3cret"})
    async with serve(settings, engines, llm, store) as server, async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        warming = [True]  # the shared head still being evaluated, as on a first start
        server.app[SHARED].head_warming = lambda: warming[0]
        try:
            page = await browser.new_page()
            console: list[str] = []
            page.on("console", lambda m: console.append(m.text))
            await page.goto(f"{server.url}/?token=s3cret#top")
            await page.wait_for_selector("#warming", state="visible", timeout=15_000)
            assert "Warming up" in await page.inner_text("#warming")
            warming[0] = False
            await page.wait_for_selector("#warming", state="hidden", timeout=15_000)
            await panel_updates(page, 1)  # /api/knowledge answered: the token was sent
            assert await page.evaluate("location.search") == ""
            assert await page.evaluate("location.hash") == "#top"
            assert "s3cret" not in page.url
            await page.reload()
            await panel_updates(page, 1)  # the tab kept it: a reload still works
            assert "s3cret" not in page.url
            violations = [m for m in console if "Content Security Policy" in m]
            assert not violations, violations
        finally:
            await browser.close()
