"""`serve --lan` in a real browser: Chromium that trusts Annie's authority opens the page on
the network address as a secure context (what the microphone needs) under its own policy, and
reads the trust page; Chromium that does not trust it stops at the certificate; plain HTTP
shows the reason with the https:// address."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from bot.server.app import Engines
from memory.store import Store
from models.base import LLM
from tests.bot.voice.test_browser import CHROMIUM, FLAGS
from tests.bot.voice.test_lan import lan_settings, serve_lan

# A real browser (Chromium through Playwright): the full run only.
pytestmark = pytest.mark.slow


def spki_hash(ca: Path) -> str:
    """What Chromium's --ignore-certificate-errors-spki-list takes: it then accepts a chain
    that holds this key, as a browser that trusts the authority would."""
    cert = x509.load_pem_x509_certificate(ca.read_bytes())
    der = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


async def test_a_browser_that_trusts_the_authority_gets_a_secure_page_on_the_lan(
    annie_home: Path, engines: Engines, llm: LLM, store: Store
) -> None:
    async with serve_lan(lan_settings(), engines, llm, store) as server, async_playwright() as p:
        assert server.ca is not None
        trusting = [*FLAGS, f"--ignore-certificate-errors-spki-list={spki_hash(server.ca)}"]
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=trusting)
        try:
            page = await browser.new_page()
            console: list[str] = []
            page.on("console", lambda m: console.append(m.text))
            # The page (an unpaired browser is then sent on to pairing), and the trust page,
            # which runs no script of its own: the origin is a secure context.
            answer = await page.goto(server.url(server.lan))
            assert answer is not None and answer.status == 200
            await page.wait_for_url(server.url(server.lan, "/pair"), timeout=15_000)
            await page.goto(server.url(server.lan, "/trust"))
            await page.wait_for_selector("main.trust")
            assert await page.evaluate("window.isSecureContext") is True
            assert await page.evaluate("typeof navigator.mediaDevices?.getUserMedia") == "function"
            assert "Trust Annie's authority" in await page.inner_text("main")
            assert await page.get_attribute("a.download", "href") == "/annie-ca.crt"
            violations = [m for m in console if "Content Security Policy" in m]
            assert not violations, violations

            answer = await page.goto(f"http://{server.lan}:{server.port}/")
            assert answer is not None and answer.status == 400
            assert server.url(server.lan) in await page.inner_text("body")
        finally:
            await browser.close()

        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = await browser.new_page()
            with pytest.raises(PlaywrightError, match="ERR_CERT_AUTHORITY_INVALID"):
                await page.goto(server.url(server.lan))
        finally:
            await browser.close()
