"""The "What Annie knows" panel in a real browser (Debian's Chromium driven by Playwright): it
lists a task, a reminder with its time and a note as soon as the page loads; Done on the task
connects and updates the list; Delete on the note only asks, with Approve and Deny, and
Approve in the panel deletes it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout

from bot.server.app import Engines
from config import Settings
from memory.rows import utc_now
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.voice.conftest import serve
from tests.bot.voice.test_browser import chromium

# A real browser (Chromium through Playwright): the full run only.
pytestmark = pytest.mark.slow

WAIT_MS = 30_000
# Without microphone permission Chromium hides its address behind an mDNS name, and aioice
# resolves those through one lock per thread, bound to the event loop of the first test that
# needed it: a second such browser test in the same run fails its offer. Plain addresses
# (this is loopback) keep each test independent.
NO_MDNS = "--disable-features=WebRtcHideLocalIpsWithMdns"


async def test_the_panel_lists_acts_and_asks_before_deleting(
    tmp_path: Path, voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    task = store.tasks.add("Sign the lease", pending="user")
    other = store.tasks.add("Water the plants")
    reminder = store.reminders.add("Call the dentist", utc_now() + timedelta(hours=2))
    note = store.notes.add("The old gate code is 4411")
    due = store.reminders.get(reminder)
    assert due is not None
    llm = ScriptedLLM(tokenizer, lambda prompt: "Hello.")
    async with (
        serve(voice_settings, engines, llm, store) as server,
        chromium(tmp_path / "panel", [NO_MDNS]) as (_, page),
    ):
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await page.goto(server.url + "/")
        # Filled on load, before any conversation is opened.
        mine = page.locator(f"#k-tasks li[data-id='{task}']")
        await mine.wait_for(timeout=WAIT_MS)
        assert await page.get_attribute("#conn", "data-state") == "offline"
        assert not server.voices
        # What waits on the user comes first.
        listed = await page.eval_on_selector_all("#k-tasks li", "els => els.map(e => e.dataset.id)")
        assert listed == [task, other]
        assert await mine.locator(".k-text").inner_text() == "Sign the lease"
        assert "waiting on you" in await mine.locator(".k-meta").inner_text()
        rem = page.locator(f"#k-reminders li[data-id='{reminder}']")
        assert await rem.locator(".k-text").inner_text() == "Call the dentist"
        assert await rem.get_attribute("data-due") == due.due
        assert await rem.locator("button", has_text="Snooze").is_visible()
        assert await page.locator(f"#k-notes li[data-id='{note}'] .k-text").inner_text() == (
            "The old gate code is 4411"
        )

        # Done connects the page and sends the action; the list follows the store.
        await mine.locator("button", has_text="Done").click()
        try:
            await mine.wait_for(state="detached", timeout=WAIT_MS)
        except PlaywrightTimeout as exc:
            said = await page.inner_text("#error-text")
            raise AssertionError(f"the task stayed listed; the page's error: {said!r}") from exc
        assert len(server.voices) == 1
        row = store.tasks.get(task)
        assert row is not None and row.status == "done"
        assert await page.locator("#k-tasks li").count() == 1
        assert await page.inner_text("#k-tasks-count") == "1"

        # Delete only asks: the approval card and the panel both offer Approve and Deny.
        await page.locator(f"#k-notes li[data-id='{note}'] button", has_text="Delete").click()
        await page.wait_for_selector("#approval:not([hidden])", timeout=WAIT_MS)
        said = await page.inner_text("#approval-text")
        assert said == "delete the note 'The old gate code is 4411'" and note not in said
        assert await page.is_visible("#approve") and await page.is_visible("#deny")
        asked = page.locator("#k-approvals li[data-kind='approval']")
        await asked.wait_for(timeout=WAIT_MS)
        assert await asked.locator("button", has_text="Deny").is_visible()
        assert "Waiting for your approval" in await page.inner_text("#knowledge-status")
        assert store.notes.get(note) is not None

        await asked.locator("button", has_text="Approve").click()
        await page.locator(f"#k-notes li[data-id='{note}']").wait_for(
            state="detached", timeout=WAIT_MS
        )
        await page.wait_for_selector("#approval", state="hidden", timeout=WAIT_MS)
        assert store.notes.get(note) is None
        assert await page.inner_text("#k-approvals") == "Nothing waiting for approval."
        assert await page.is_hidden("#error")
        assert errors == []
