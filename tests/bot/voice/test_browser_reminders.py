"""Reminders in a real browser (headless Debian Chromium, driven by Playwright): one set a few
seconds ahead with the page open is spoken, shown in the conversation and chimed; one that
falls due while no page is open is spoken and shown as soon as a page opens."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from playwright.async_api import Page

from bot.server.app import Engines
from config import load_settings
from memory.rows import utc_now
from memory.store import Store
from models.base import LLM
from tests.bot.voice.conftest import serve
from tests.bot.voice.test_browser import chromium, write_wav

# A real browser (Chromium through Playwright): the full run only.
pytestmark = pytest.mark.slow

ENERGY = "window.annie.audio.energy"
SHOWN = "#log .msg.reminder .text"


async def energy(page: Page) -> float:
    return float(await page.evaluate(ENERGY))


async def talk(page: Page, url: str) -> None:
    await page.goto(url)
    await page.click("#talk")  # a user gesture: the page may make sound from now on
    await page.wait_for_selector("#conn[data-state=connected]", timeout=30_000)


async def test_a_reminder_is_spoken_shown_and_chimed_with_the_page_open_or_closed(
    tmp_path: Path, annie_home: Path, engines: Engines, llm: LLM, store: Store
) -> None:
    # A quiet microphone: a faint noise floor and nothing said.
    noise = np.random.default_rng(3).normal(0.0, 30.0, 48000 * 4)
    wav = tmp_path / "room.wav"
    write_wav(wav, np.clip(noise, -32768, 32767).astype(np.int16))
    media = [
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={wav}",
    ]
    settings = load_settings(context={"window": 4096, "warm_up": False})
    async with (
        serve(settings, engines, llm, store) as server,
        chromium(tmp_path / "profile", media) as (context, page),
    ):
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await talk(page, server.url + "/")
        before = await energy(page)
        due = utc_now() + timedelta(seconds=2)
        store.reminders.add("take the bread out of the oven", due)
        shown = page.locator(SHOWN).first
        await shown.wait_for(timeout=30_000)
        assert await shown.inner_text() == "Reminder: take the bread out of the oven."
        who = await page.locator("#log .msg.reminder .who").first.inner_text()
        assert who.lower() == "annie · reminder"
        chimes = await page.evaluate("window.annie.chimes")
        assert len(chimes) == 1 and chimes[0]["audio"] == "running"
        # Annie's voice arrives: the received audio gains energy after the reminder.
        await page.wait_for_function(f"{ENERGY} > {before}", timeout=30_000)
        late = server.voices[0].reminders_spoken[0][1] - due.timestamp()
        print(f"reminder spoken {late * 1000:.0f} ms after its due time (page open)")
        assert 0 <= late < 2.5, late
        assert errors == []

        # The page closes; a reminder falls due while no page is open.
        first = server.voices[0]
        await page.close()
        await asyncio.wait_for(first.closed.wait(), 30)
        rid = store.reminders.add("call the dentist", utc_now() + timedelta(seconds=0.5))
        for _ in range(100):
            row = store.reminders.get(rid)
            if row is not None and row.status == "fired":
                break
            await asyncio.sleep(0.05)
        assert row is not None and row.status == "fired"

        # The next page opens with it, before anything else.
        page = await context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await talk(page, server.url + "/")
        shown = page.locator(SHOWN).first
        await shown.wait_for(timeout=30_000)
        text = await shown.inner_text()
        assert text.startswith("While you were away: call the dentist (due at ")
        who = await page.locator("#log .msg .who").first.inner_text()
        assert who.lower() == "annie · while you were away"
        assert await page.locator("#log .msg").count() == 1  # nothing came before it
        chimes = await page.evaluate("window.annie.chimes")
        assert len(chimes) == 1 and chimes[0]["audio"] == "running"
        await page.wait_for_function(f"{ENERGY} > 0", timeout=30_000)
        row = store.reminders.get(rid)
        assert row is not None and row.status == "announced"
        assert row.announced_in == server.voices[1].session_id
        assert errors == []
