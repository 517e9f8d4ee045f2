"""`serve --lan` end to end across a real network link: the server, started the way a person
starts it (`python -m bot serve --lan`, every engine loaded), runs in a network namespace of
its own, joined to this one by a veth pair with a private /30 on it and nothing routed
beyond. A real Chromium on this side of the pair opens the server's network address: with
Annie's authority trusted it is sent to pairing, pairs with the code the owner gets from
`python -m bot pair` (run on the server's side, over its loopback), and holds a spoken turn
with a recorded question as its microphone. Without the authority trusted the page does not
load; a device that has not paired is refused by every API.

The namespace, the veth pair and the server are removed after the tests, whatever happened
(and namespaces a killed earlier run left behind are removed first). Needs root and
`ip netns`, as the test machine has.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import secrets
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.async_api import Error as PlaywrightError

from bot.server.tls import CA_CERT, tls_dir
from config import load_settings
from memory.store import Store
from testkit.reliability import ROOT, WINDOW
from tests.bot.voice.test_browser import chromium, question_wav
from tests.bot.voice.test_browser_lan import spki_hash
from tests.bot.voice.test_lan import LanServer, call

# A real server process and a real browser: the full run only.
pytestmark = pytest.mark.slow

PREFIX = "annie-test-"  # namespace names: PREFIX + the test process's id + a random tag
PORT = 8765  # a fresh namespace has nothing listening: the default port is free there
TASK = "Send the quarterly invoice"


def ip(*args: str) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=15)
    assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr.strip()}"
    return done.stdout


@dataclass(frozen=True)
class Link:
    """A namespace joined to this one by a veth pair: `near` is this side's address."""

    netns: str
    outer: str  # this side's interface; its peer is inside the namespace
    near: str
    far: str  # the address inside the namespace, where the server listens


def remove_leftovers() -> None:
    """Namespaces of earlier runs whose process is gone (killed before its teardown)."""
    for line in ip("netns", "list").splitlines():
        name = line.split()[0] if line.strip() else ""
        found = re.fullmatch(rf"{PREFIX}(\d+)-[0-9a-f]+", name)
        if found and not Path(f"/proc/{found[1]}").exists():
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=15)


def unused_subnet() -> tuple[str, str]:
    """Two addresses of a /30 in 10.213.0.0/16 that no interface here is using."""
    taken = ip("-o", "-4", "addr", "show")
    while True:
        third, block = random.randrange(256), random.randrange(64) * 4
        if (
            f" 10.213.{third}.{block + 1}/" not in taken
            and f" 10.213.{third}.{block + 2}/" not in taken
        ):
            return f"10.213.{third}.{block + 2}", f"10.213.{third}.{block + 1}"


@pytest.fixture(scope="module")
def link() -> Iterator[Link]:
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=15)
    assert probe.returncode == 0, f"this test needs root and `ip netns`: {probe.stderr}"
    remove_leftovers()
    tag = secrets.token_hex(3)
    netns = f"{PREFIX}{os.getpid()}-{tag}"
    outer, inner = f"an{tag}o", f"an{tag}i"  # interface names: 15 characters at most
    near, far = unused_subnet()
    try:
        ip("netns", "add", netns)
        ip("link", "add", outer, "type", "veth", "peer", "name", inner, "netns", netns)
        ip("addr", "add", f"{near}/30", "dev", outer)
        ip("link", "set", outer, "up")
        ip("-n", netns, "addr", "add", f"{far}/30", "dev", inner)
        ip("-n", netns, "link", "set", inner, "up")
        ip("-n", netns, "link", "set", "lo", "up")  # `bot pair` reaches the server over it
        yield Link(netns, outer, near, far)
    finally:
        # Deleting one end of a veth deletes both; the namespace goes once nothing runs in it.
        subprocess.run(["ip", "link", "del", outer], capture_output=True, timeout=15)
        subprocess.run(["ip", "netns", "del", netns], capture_output=True, timeout=15)
        left = ip("netns", "list") + ip("-o", "link", "show")
        assert netns not in left and outer not in left, f"{netns} or {outer} is still there"


@dataclass(frozen=True)
class Served:
    link: Link
    env: dict[str, str]  # what the server runs with (ANNIE_HOME and the rest)
    lan: LanServer  # the server's network address, for test_lan's helpers

    @property
    def url(self) -> str:
        return self.lan.url(self.link.far)


def in_namespace(link: Link, *command: str) -> list[str]:
    return ["ip", "netns", "exec", link.netns, *command]


def wait_healthy(proc: subprocess.Popen[bytes], url: str, ca: Path, log: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the server exited ({proc.returncode}):\n{log.read_text()}"
        if ca.exists():
            with contextlib.suppress(OSError):
                context = ssl.create_default_context(cafile=str(ca))
                with urllib.request.urlopen(f"{url}healthz", timeout=5, context=context) as r:
                    if r.status == 200:
                        return
        time.sleep(0.2)
    raise TimeoutError(f"no /healthz from {url} in 180 s:\n{log.read_text()}")


@pytest.fixture(scope="module")
def served(link: Link, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`python -m bot serve --lan` inside the namespace, over a fresh ANNIE_HOME that holds
    one task waiting on the user (what the spoken question asks about)."""
    home = tmp_path_factory.mktemp("netns-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNIE_")}
    env.update(
        ANNIE_HOME=str(home),
        ANNIE_CONTEXT__WINDOW=str(WINDOW),
        HF_HUB_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    with Store.open(load_settings(environ=env)) as store:
        store.tasks.add(TASK, pending="user")
    ca = tls_dir(load_settings(environ=env)) / CA_CERT
    lan = LanServer(PORT, link.far, ca)
    log = home / "serve.log"
    command = [sys.executable, "-m", "bot", "serve", "--lan", "--port", str(PORT)]
    t0 = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            in_namespace(link, *command),
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, ended as one below
        )
    try:
        wait_healthy(proc, lan.url(link.far), ca, log)
        print(f"serve --lan answered /healthz in the namespace after {time.monotonic() - t0:.1f} s")
        yield Served(link, env, lan)
    finally:
        # `ip netns exec` becomes the server: its process group is the server's alone.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            code = proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
            code = None
    # Ctrl+C's signal closes the open connections and ends the server, as a person expects.
    assert code == 0, f"serve --lan did not end on SIGTERM ({code}):\n{log.read_text()[-3000:]}"


# The addresses of the ICE candidate pair the page's connection chose.
SELECTED_PAIR = """async () => {
  const stats = await window.annie.pc.getStats();
  let pair = null;
  stats.forEach((s) => {
    if (s.type === "transport" && s.selectedCandidatePairId) {
      pair = stats.get(s.selectedCandidatePairId);
    }
  });
  const address = (id) => stats.get(id).address;
  return pair && [address(pair.localCandidateId), address(pair.remoteCandidateId)];
}"""


def pairing_code(server: Served) -> str:
    """What the owner does on a machine without a screen: `python -m bot pair`, run on the
    server's side of the link, which asks the server over its loopback."""
    env = {**server.env, "ANNIE_SERVER__LAN": "1", "ANNIE_SERVER__PORT": str(PORT)}
    command = in_namespace(server.link, sys.executable, "-m", "bot", "pair", "--no-qr")
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = re.search(r"Pairing code: (\d{6})", done.stdout)
    assert found, done.stdout
    assert f"https://{server.link.far}:{PORT}/pair?code={found[1]}" in done.stdout
    return found[1]


async def test_an_unpaired_device_is_refused_and_an_untrusting_browser_stops_at_the_certificate(
    tmp_path: Path, served: Served
) -> None:
    lan, far = served.lan, served.link.far
    # What a device needs before it holds a credential is there: the page, pairing, trust.
    for path in ("/", "/pair", "/trust", "/annie-ca.crt", "/static/app.js"):
        assert (await call(lan, far, "GET", path)).status == 200, path
    asked = await call(lan, far, "GET", "/api/pairing")
    assert asked.status == 200, asked
    assert json.loads(asked.body)["pair"] is True and json.loads(asked.body)["authorized"] is False
    # Every API else refuses it, with a reason that says to pair.
    for method, path in (
        ("GET", "/api/knowledge"),
        ("POST", "/api/offer"),
        ("POST", "/api/pairing-code"),
        ("GET", "/api/devices"),
        ("POST", "/api/devices/revoke"),
        ("GET", "/api/no-such-thing"),
    ):
        body = b"{}" if method == "POST" else b""
        headers = {"Content-Type": "application/json"} if body else {}
        answer = await call(lan, far, method, path, headers, body)
        assert answer.status in (401, 403), (method, path, answer)
        assert "pair" in answer.reason, (method, path, answer)

    # A browser that does not trust Annie's authority gets no page at all.
    async with chromium(tmp_path / "untrusting", []) as (_, page):
        with pytest.raises(PlaywrightError, match="ERR_CERT_AUTHORITY_INVALID"):
            await page.goto(served.url)


async def test_a_browser_across_the_link_pairs_and_holds_a_spoken_turn(
    tmp_path: Path, served: Served
) -> None:
    assert served.lan.ca is not None
    media = [
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={question_wav(tmp_path / 'question.wav')}",
        # What trusting Annie's authority on the device amounts to (see test_browser_lan).
        f"--ignore-certificate-errors-spki-list={spki_hash(served.lan.ca)}",
    ]
    async with chromium(tmp_path / "phone", media) as (context, page):
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        # An unpaired browser that opens the address is sent to pairing.
        await page.goto(served.url)
        await page.wait_for_url(f"{served.url}pair", timeout=15_000)
        assert await page.evaluate("window.isSecureContext") is True
        await page.fill("#pair-code", pairing_code(served))
        await page.fill("#pair-name", "Phone across the link")
        await page.click("#pair-submit")
        await page.wait_for_selector("#pair-done", state="visible", timeout=15_000)
        cookies = {c["name"]: c for c in await context.cookies()}
        assert cookies["annie_device"]["secure"] and cookies["annie_device"]["httpOnly"]
        await page.wait_for_url(served.url, timeout=15_000)

        # A spoken turn: the recorded question into the microphone, the answer on the page
        # and in the ear.
        await page.click("#talk")
        await page.wait_for_selector("#conn[data-state=connected]", timeout=30_000)
        user = page.locator("#log .msg.user .text").first
        await user.wait_for(timeout=60_000)
        assert "tasks pending" in (await user.inner_text()).lower()
        answer = page.locator("#log .msg.annie.state .text").first
        await answer.wait_for(timeout=30_000)
        assert "invoice" in (await answer.inner_text()).lower()
        await page.wait_for_function(
            "window.annie.audio.energy > 0 && window.annie.audio.packets > 50", timeout=30_000
        )
        # The media went over the link: this side's address to the server's.
        route = await page.evaluate(SELECTED_PAIR)
        assert route == [served.link.near, served.link.far], route
        assert await page.is_hidden("#error"), await page.inner_text("#error-text")
        assert errors == []
