"""The page in a real browser: headless Chromium speaks a WAV file into the microphone.

Debian's Chromium binary is driven by Playwright (never `playwright install`). Its fake
capture device plays a 48 kHz mono 16-bit WAV (made from a fixed recording of the question)
from the moment `getUserMedia` is called, looping, so the file starts with two seconds of
silence (connection setup) and ends with a long one (so the question is not asked again
while Annie answers). Like any real microphone it carries a faint noise floor: on digital
silence the browser's noise suppressor has nothing to learn from and can eat the "s" of
"tasks".
"""

from __future__ import annotations

import asyncio
import wave
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import numpy as np
import pytest
from playwright.async_api import BrowserContext, Page, async_playwright

from bot.server.app import Engines
from bot.server.shared import SHARED
from config import Settings, load_settings
from memory.store import Store
from models.base import LLM, Tokenizer
from models.pcm import resample
from tests.bot.voice.conftest import DELETED, QUESTION, asks_to_delete, model_rounds, serve
from tests.recordings import read_recording

# A real browser (Chromium through Playwright): the full run only.
pytestmark = pytest.mark.slow

CHROMIUM = "/usr/lib/chromium/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Chromium would offer its local addresses as mDNS names; aioice resolves those with one
    # process-wide mDNS responder tied to the first event loop that used it, so a later test
    # (a new event loop) would wait for it forever. Plain loopback addresses need no lookup.
    "--disable-features=WebRtcHideLocalIpsWithMdns",
]


def write_wav(path: Path, samples: np.ndarray, rate: int = 48000) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.astype("<i2").tobytes())


def question_wav(path: Path) -> Path:
    """The status question as the fake microphone's file (see the module docstring)."""
    # A fixed rendition of the question (tests/recordings.py), so each run hears the same audio.
    pcm, rate = read_recording("pending_question.wav")
    speech = np.round(resample(pcm, rate, 48000) * 32767)
    silence = np.zeros(48000, dtype=np.int16)
    clip = np.concatenate([silence, silence, speech, *[silence] * 12]).astype(np.float64)
    clip += np.random.default_rng(7).normal(0.0, 30.0, clip.size)  # about -61 dBFS
    write_wav(path, np.clip(clip, -32768, 32767).astype(np.int16))
    return path


@asynccontextmanager
async def chromium(profile: Path, args: list[str]) -> AsyncIterator[tuple[BrowserContext, Page]]:
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing: apt-get install chromium"
    async with async_playwright() as p:
        context = await p.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS + args,
            bypass_csp=True,  # the page's CSP forbids eval, which wait_for_function uses
        )
        page = context.pages[0] if context.pages else await context.new_page()
        try:
            yield context, page
        finally:
            await context.close()


UPDATES = "Number(document.querySelector('#meter').dataset.updates)"


async def growth_curve_follows_the_meter(page: Page) -> None:
    """The growth curve under the meter: one point per meter update, the newest at the
    meter's share, the tier marks as dashed lines, and a tier's run as an upright line; it
    fits a phone's width."""
    updates = int(await page.get_attribute("#meter", "data-updates") or 0)
    assert int(await page.get_attribute("#growth", "data-points") or 0) == updates
    points = (await page.get_attribute("#growth-line", "points") or "").split()
    assert len(points) == updates
    used = await meter_used(page)
    window = int(await page.get_attribute("#meter", "data-window") or 1)
    assert float(points[-1].split(",")[1]) == pytest.approx(40 * (1 - used / window), abs=0.01)
    assert float(points[0].split(",")[0]) == 0 and float(points[-1].split(",")[0]) == 100
    # The marks at 65% and 80% of the window, from the meter event's own tier figures.
    assert await page.get_attribute("#growth-t1", "y1") == "14.00"
    assert await page.get_attribute("#growth-t2", "y1") == "8.00"
    # A compaction event, as the server sends one, draws where the tier ran.
    await page.evaluate(
        "annie.view.compaction({tier: 1, at: Date.now() / 1000, tokens_before: 900,"
        " tokens_after: 500, items_affected: 3, reprefill_tokens: 0, duration_ms: 4,"
        " detail: ''})"
    )
    assert await page.get_attribute("#growth", "data-runs") == "1"
    assert await page.locator("#growth-runs line.run.tier1").count() == 1
    await page.set_viewport_size({"width": 375, "height": 800})
    box = await page.locator("#growth").bounding_box()
    assert box is not None and 200 < box["width"] <= 375 and box["height"] >= 40


async def meter_used(page: Page) -> int:
    return int(await page.get_attribute("#meter", "data-used") or 0)


async def test_the_page_hears_the_question_shows_the_answer_and_plays_it(
    tmp_path: Path,
    annie_home: Path,
    engines: Engines,
    llm: LLM,
    store: Store,
) -> None:
    store.tasks.add("Send the quarterly invoice", pending="user")
    wav = question_wav(tmp_path / "question.wav")

    # A token, as off loopback: the page must present the one in its own address.
    settings = load_settings(context={"window": 4096}, server={"token": "page-token"})
    async with serve(settings, engines, llm, store) as server:
        media = [
            "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={wav}",
        ]
        async with chromium(tmp_path / "profile", media) as (_, page):
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            await page.goto(server.url + "/?token=page-token")
            assert await meter_used(page) == 0
            await page.click("#talk")
            await page.wait_for_selector("#conn[data-state=connected]", timeout=30_000)
            # The meter shows the fixed overhead as soon as the session opens...
            await page.wait_for_function(f"{UPDATES} >= 1", timeout=30_000)
            at_connect = await meter_used(page)
            assert at_connect > 0

            # Chromium plays the file from when the page opens the microphone: on a loaded
            # machine the session may connect after the question began and hear only its end
            # ("depending on me"). The file loops, so its next playing is heard whole.
            asked = '#log .msg.user:has-text("tasks pending")'
            await page.locator(asked).first.wait_for(timeout=90_000)
            answered = page.locator(f"{asked} ~ .msg.annie.state").first
            answer = answered.locator(".text")
            await answer.wait_for(timeout=30_000)
            assert "invoice" in (await answer.inner_text()).lower()
            badge = await answered.locator(".badge").inner_text()
            assert badge.startswith("state path")

            # ...and moves with every turn; its 65% and 80% marks are in place.
            await page.wait_for_function(f"{UPDATES} >= 2", timeout=30_000)
            after_spoken = await meter_used(page)
            assert after_spoken > at_connect
            assert await page.locator("#meter-bar .seg").count() >= 2
            marks = await page.eval_on_selector_all(
                ".meter .mark", "els => els.map(e => e.style.left)"
            )
            assert marks == ["65%", "80%"]

            # Annie's answer arrived as audio (decoded, with energy), and latency is shown.
            await page.wait_for_function(
                "window.annie.audio.energy > 0 && window.annie.audio.packets > 50",
                timeout=30_000,
            )
            await page.wait_for_selector("#latency .chip.main", timeout=30_000)
            assert "voice_to_voice" in await page.inner_text("#latency")
            # The wait as a stacked bar: its parts in order, their widths adding up to it all.
            parts = await page.eval_on_selector_all(
                "#latency tr:first-child .wait-bar .part",
                "els => els.map(e => [e.className, parseFloat(e.style.width)])",
            )
            names = [name.split()[1] for name, _ in parts]
            assert names[:2] == ["endpoint", "stt"], names
            assert 99.0 <= sum(width for _, width in parts) <= 100.5, parts
            await page.wait_for_selector("#voice[data-state=idle]", timeout=30_000)

            # Typed text goes through the same loop; the meter moves again.
            await page.fill("#text", QUESTION)
            await page.press("#text", "Enter")
            await page.wait_for_function(f"{UPDATES} >= 3", timeout=30_000)
            assert await meter_used(page) > after_spoken
            await growth_curve_follows_the_meter(page)
            assert await page.locator("#log .msg.annie.state").count() >= 2
            assert await page.is_hidden("#error")
            assert errors == []
            assert model_rounds(server) == [], "state-path answers must not call the model"

        # Closing the browser closes the session, which persists it (tier 3).
        voice = server.voices[0]
        await asyncio.wait_for(voice.closed.wait(), 60)
        row = store.sessions.get(voice.session_id)
        assert row is not None and row.ended_at


async def test_the_page_says_clearly_when_the_mic_is_denied_or_the_server_is_unreachable(
    tmp_path: Path, voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    async with (
        serve(voice_settings, engines, llm, store) as server,
        chromium(
            tmp_path / "denied", ["--use-fake-device-for-media-stream", "--deny-permission-prompts"]
        ) as (_, page),
    ):
        await page.goto(server.url + "/")
        await page.click("#talk")
        await page.wait_for_selector("#error:not([hidden])", timeout=30_000)
        assert "Microphone access was denied" in await page.inner_text("#error-text")
        assert await page.get_attribute("#talk", "data-mode") == "talk"

        # The server goes away: typing shows that it cannot be reached.
        await page.route("**/api/offer", lambda route: route.abort())
        await page.click("#error-close")
        await page.fill("#text", "hello")
        await page.press("#text", "Enter")
        await page.wait_for_selector("#error:not([hidden])", timeout=30_000)
        assert "Cannot reach the Annie server" in await page.inner_text("#error-text")
        assert not server.voices


async def test_the_page_shows_an_approval_and_approve_runs_it(
    tmp_path: Path, voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    note = store.notes.add("old gate code 4411")
    llm, script = asks_to_delete(tokenizer, note)
    async with (
        serve(voice_settings, engines, llm, store) as server,
        chromium(tmp_path / "approve", []) as (_, page),
    ):
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await page.goto(server.url + "/")
        assert await page.is_hidden("#approval")
        await page.fill("#text", "Delete my note with the old gate code.")
        await page.press("#text", "Enter")
        await page.wait_for_selector("#approval:not([hidden])", timeout=60_000)
        said = await page.inner_text("#approval-text")
        assert said == "delete the note 'old gate code 4411'" and note not in said
        assert await page.inner_text("#approval-params") == f'delete_note {{"note_id":"{note}"}}'
        assert await page.is_visible("#approve") and await page.is_visible("#deny")
        assert store.notes.get(note) is not None

        await page.click("#approve")
        # The yes ran the deletion, and the model's answer that uses its result is shown.
        await page.wait_for_function(
            "[...document.querySelectorAll('#log .msg.annie .text')]"
            f".some(e => e.textContent.includes({DELETED!r}))",
            timeout=60_000,
        )
        await page.wait_for_selector("#approval", state="hidden", timeout=30_000)
        assert store.notes.get(note) is None
        assert errors == [] and script == []


async def test_the_page_says_when_the_calendar_url_cannot_be_refreshed(
    tmp_path: Path, voice_settings: Settings, engines: Engines, llm: LLM, store: Store
) -> None:
    # Nothing listens on port 9 of this machine: the refresh fails at start-up.
    settings = load_settings(
        context={"window": 4096},
        calendar={"url": "http://127.0.0.1:9/cal.ics", "url_allow_private": True},
    )
    async with serve(settings, engines, llm, store) as server:
        feed = server.app[SHARED].calendar_feed
        for _ in range(300):
            if feed.status is not None:
                break
            await asyncio.sleep(0.1)
        assert feed.status is not None and not feed.status.ok
        async with chromium(tmp_path / "calendar", []) as (_, page):
            await page.goto(server.url + "/")
            await page.wait_for_selector("#calendar-note:not([hidden])", timeout=30_000)
            note = await page.inner_text("#calendar-note")
            assert note.startswith("Your calendar could not be refreshed: could not fetch")
            await page.evaluate("annie.view.calendar({ok: true, detail: '1 event fetched'})")
            assert await page.get_attribute("#calendar-note", "hidden") is not None
