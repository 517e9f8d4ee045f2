"""Pairing in a real browser, under the page's own Content Security Policy: the owner's page
shows a code with its QR code, a second browser (the "phone", with no token) opens the
pairing address, pairs, and then reads the knowledge panel on its cookie alone; the owner
sees it listed and revokes it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from playwright.async_api import Dialog, Page, async_playwright

from bot.server.app import Engines
from config import load_settings
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.voice.conftest import serve
from tests.bot.voice.test_browser import CHROMIUM, FLAGS
from tests.bot.voice.test_browser_token import panel_updates

# A real browser (Chromium through Playwright): the full run only.
pytestmark = pytest.mark.slow


async def text_of(page: Page, selector: str, wanted: str, timeout: float = 15) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = await page.inner_text(selector)
        if wanted in text:
            return text
        assert time.monotonic() < deadline, f"{selector} never said {wanted!r}: {text!r}"
        await asyncio.sleep(0.1)


async def test_a_phone_pairs_with_the_code_the_owner_page_shows(
    annie_home: Path, engines: Engines, tokenizer: Tokenizer
) -> None:
    settings = load_settings(context={"window": 4096}, server={"token": "s3cret"})
    llm = ScriptedLLM(tokenizer, ["Hello."])
    with Store.open(settings) as store:
        async with serve(settings, engines, llm, store) as server, async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            console: list[str] = []
            try:
                owner = await browser.new_page()
                owner.on("console", lambda m: console.append(m.text))
                await owner.goto(f"{server.url}/?token=s3cret")
                await owner.wait_for_selector("#devices", state="visible", timeout=15_000)
                await text_of(owner, "#devices-list", "No phones or laptops paired yet.")
                await owner.click("#pair-start")
                await owner.wait_for_selector("#pair-code-box", state="visible", timeout=15_000)
                code = (await owner.inner_text("#pair-code-digits")).strip()
                assert len(code) == 6 and code.isdigit()
                assert f"/pair?code={code}" in await owner.inner_text("#pair-url")
                qr = await owner.evaluate("document.getElementById('pair-qr').naturalWidth")
                assert qr > 100  # the SVG decoded into an image under the policy

                phone_context = await browser.new_context()
                phone = await phone_context.new_page()
                phone.on("console", lambda m: console.append(m.text))
                await phone.goto(f"{server.url}/pair?code={code}")
                assert await phone.input_value("#pair-code") == code
                assert "code=" not in phone.url  # taken out of the address and the history
                await phone.fill("#pair-name", "Test phone")
                await phone.click("#pair-submit")
                await phone.wait_for_selector("#pair-done", state="visible", timeout=15_000)
                cookies = {c["name"]: c for c in await phone_context.cookies()}
                kept = cookies["annie_device"]
                assert kept["httpOnly"] and kept["secure"] and kept["sameSite"] == "Strict"
                # Then on to Annie's page, where the cookie alone (no token) fills the panel.
                await phone.wait_for_url(f"{server.url}/", timeout=15_000)
                await panel_updates(phone, 1)

                # The owner's page notices the new device, lists it, and revokes it.
                await text_of(owner, "#devices-status", "Paired: Test phone")
                assert await owner.is_hidden("#pair-code-box")

                async def accept(dialog: Dialog) -> None:
                    await dialog.accept()

                owner.on("dialog", accept)
                await owner.click("#devices-list button.deny")
                await text_of(owner, "#devices-status", "Revoked “Test phone”")
                await text_of(owner, "#devices-list", "unpaired")
                assert [d.active for d in store.devices.list()] == [False]
                violations = [m for m in console if "Content Security Policy" in m]
                assert not violations, violations
            finally:
                await browser.close()
