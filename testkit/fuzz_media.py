"""Generated hostile input on the voice server's media surfaces: SDP offers, data-channel
messages and microphone audio.

- "sdp": real aiortc offers, mutated (lines dropped, doubled, swapped, codecs broken, junk
  padding, candidates added, cut short), JSON bodies of the wrong shape and bytes that are not
  UTF-8, posted to the real server's `/api/offer` (the only route an offer or a candidate
  takes: aiortc gathers in full and does not trickle). Every candidate and connection address
  is rewritten to 127.0.0.x before the offer is sent, since this machine allows traffic to no
  other address. Property: a 4xx with a JSON reason, or an answer the offering peer connects
  with; either way the server's peer count is 0 again soon after and /healthz answers.
- "datachannel": one real aiortc peer connected to the real server, sending generated
  messages one case at a time (JSON of every shape, wrong types, unknown kinds, huge strings,
  binary, invalid UTF-8, bursts, approvals and panel actions out of order). Property: an
  error event for what `bot.voice.page_channel` refuses, the documented reaction for the rest,
  the connection stays open, /healthz answers, and at the end the store passes its integrity
  check with every turn the peer was told is done.
- "audio": generated frames (rates, layouts, sample formats, lengths from 0, silence, DC,
  clipping, int16 extremes, NaN and infinities in float frames, format changes mid-stream)
  through the real `AudioInput` (resampling and the Silero VAD) in process; one case in 20
  goes on through the real Whisper `tiny.en`. Property: no exception escapes, every VAD frame
  is 512 finite samples in [-1, 1] with a probability in [0, 1], a transcript (maybe empty)
  comes back in time.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fractions
import json
import re
import sqlite3
import time
from collections import deque
from pathlib import Path
from typing import Any

import av
import numpy as np
from aiortc import MediaStreamTrack
from aiortc.mediastreams import MediaStreamError
from hypothesis import strategies as st

from config.settings import ServerSettings
from testkit import reliability_raw as raw
from testkit.fuzz import Surface, SurfaceReport, fixed_cases, generate, shown
from testkit.fuzz_model import LoopThread
from testkit.peer import VoiceClient
from testkit.reliability import ServerProcess

JSON_TYPE = {"Content-Type": "application/json"}
# How soon a refused offer, or a peer that connected and closed, must be gone from /healthz.
PEER_GONE_S = 5.0
# An answered offer whose peer never connects on the server's side holds its slot until the
# server's connect deadline closes it (`server.connect_timeout_s`); past this it is a failure.
ICE_GIVE_UP_S = ServerSettings().connect_timeout_s + 10.0
# Then waited out, so the next case starts clean.
PEER_LINGER_S = 120.0

_JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)


# --- "sdp" ----------------------------------------------------------------------------------

_ADDRESS = st.one_of(
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(str),
    st.sampled_from(["0.0.0.0", "255.255.255.255", "::", "host.local", "a" * 300, "-", "1.2.3"]),
    st.text(min_size=1, max_size=20).filter(lambda s: not any(c.isspace() for c in s)),
)
_CANDIDATE = st.fixed_dictionaries(
    {
        "foundation": st.text(alphabet="abcdef0123456789", min_size=1, max_size=32),
        "component": st.sampled_from(["1", "2", "0", "99999999999", "x"]),
        "transport": st.sampled_from(["udp", "UDP", "tcp", "sctp", "x"]),
        "priority": st.sampled_from(["2130706431", "0", "-1", "99999999999999999999", "p"]),
        "address": _ADDRESS,
        "port": st.sampled_from(["9", "0", "65535", "65536", "-1", "x"])
        | st.integers(1, 65535).map(str),
        "type": st.sampled_from(["host", "srflx", "prflx", "relay", "bogus"]),
        "extra": st.sampled_from(
            ["", " generation 0", " raddr 10.0.0.1 rport 9", " tcptype active"]
        ),
    }
)
_LINE_OP = st.one_of(
    st.tuples(st.just("drop"), st.integers(0, 200)),
    st.tuples(st.just("double"), st.integers(0, 200)),
    st.tuples(st.just("swap"), st.integers(0, 200), st.integers(0, 200)),
    st.tuples(
        st.just("insert"),
        st.integers(0, 200),
        st.sampled_from(
            [
                "a=rtpmap:96 NOTACODEC/12345",
                "a=rtpmap:111 opus/0/99",
                "a=fmtp:96 maxplaybackrate=-1",
                "m=audio 0 RTP/AVP 0",
                "m=video 9 UDP/TLS/RTP/SAVPF 96",
                "a=setup:active",
                "a=fingerprint:sha-256 00",
                "a=ice-ufrag:",
                "a=mid:0",
                "a=group:BUNDLE 7 8 9",
                "c=IN IP6 ::1",
                "a=ssrc:0 cname:x",
                "a=sctp-port:0",
                "a=max-message-size:-5",
                "b=AS:99999999999",
                "v=1",
                "a=end-of-candidates",
                "a=inactive",
            ]
        )
        | st.text(max_size=60),
    ),
    st.tuples(st.just("candidate"), st.integers(0, 200), _CANDIDATE),
    st.tuples(st.just("codecs"), st.sampled_from(["none", "unknown", "only PCMU", "only G722"])),
    st.tuples(st.just("pad"), st.integers(1, 400)),
    st.tuples(st.just("cut"), st.integers(0, 5000)),
    st.tuples(st.just("newlines"), st.sampled_from(["\n", "\r", "\r\r\n", " \r\n"])),
)
# Deferred: Hypothesis's repr of the whole tree is tens of kB, and it warns.
SDP_CASE = st.deferred(
    lambda: st.one_of(
        st.fixed_dictionaries(
            {
                "kind": st.just("offer"),
                "ops": st.lists(_LINE_OP, max_size=4),
                "extra": st.dictionaries(
                    st.sampled_from(["resume", "token", "x", "sdp2"]), _JSON, max_size=2
                ),
                "content_type": st.sampled_from(["application/json"] * 8 + ["text/plain", ""]),
            }
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("json"),
                "body": st.one_of(
                    _JSON,
                    st.fixed_dictionaries({"type": _JSON, "sdp": _JSON}),
                    st.fixed_dictionaries(
                        {"type": st.just("offer"), "sdp": _JSON, "resume": _JSON}
                    ),
                    st.fixed_dictionaries(
                        {
                            "type": st.just("offer"),
                            "sdp": st.text(max_size=200).map(lambda s: "v=0" + s),
                        }
                    ),
                ),
            }
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("bytes"),
                "b64": st.binary(max_size=300).map(lambda b: base64.b64encode(b).decode()),
            }
        ),
    )
)


def to_loopback(sdp: str, salt: int = 0) -> str:
    """Every candidate and connection address in `sdp` rewritten to 127.0.0.x: this machine
    forbids traffic to any other address, and the server checks each candidate it is given."""
    n = [salt]

    def host(match: re.Match[str]) -> str:
        n[0] += 1
        return f"{match.group(1)}127.0.0.{n[0] % 254 + 1}{match.group(3)}"

    sdp = re.sub(r"(?im)^(a=candidate:\S*\s+\S+\s+\S+\s+\S+\s+)(\S+)(.*)$", host, sdp)
    sdp = re.sub(r"(?im)(raddr\s+)(\S+)", r"\g<1>127.0.0.1", sdp)
    sdp = re.sub(r"(?im)^(c=IN\s+)(\S+\s+\S+)", r"\1IP4 127.0.0.1", sdp)
    return re.sub(r"(?im)^(a=rtcp:\S+\s+IN\s+)(\S+\s+\S+)", r"\1IP4 127.0.0.1", sdp)


def mutate(sdp: str, ops: list[Any]) -> str:
    """A real offer with generated changes applied, line by line."""
    lines = sdp.splitlines()
    newline = "\r\n"
    for op in ops:
        kind = op[0]
        if kind == "drop" and lines:
            del lines[op[1] % len(lines)]
        elif kind == "double" and lines:
            i = op[1] % len(lines)
            lines.insert(i, lines[i])
        elif kind == "swap" and lines:
            i, j = op[1] % len(lines), op[2] % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "insert":
            lines.insert(op[1] % (len(lines) + 1), op[2])
        elif kind == "candidate":
            c = op[2]
            line = (
                f"a=candidate:{c['foundation']} {c['component']} {c['transport']} {c['priority']}"
                f" {c['address']} {c['port']} typ {c['type']}{c['extra']}"
            )
            lines.insert(op[1] % (len(lines) + 1), line)
        elif kind == "codecs":
            lines = _codecs(lines, op[1])
        elif kind == "pad":
            at = next((i for i, ln in enumerate(lines) if ln.startswith("m=")), len(lines))
            lines[at + 1 : at + 1] = [f"a=x-junk-{i}:{'z' * 100}" for i in range(op[1])]
        elif kind == "cut":
            joined = newline.join(lines)
            lines = joined[: op[1] % (len(joined) + 1)].split(newline)
        elif kind == "newlines":
            newline = op[1]
    return newline.join(lines) + newline


def _codecs(lines: list[str], how: str) -> list[str]:
    keep = {"only PCMU": "PCMU/", "only G722": "G722/"}.get(how)
    out = []
    for line in lines:
        if line.startswith(("a=rtpmap:", "a=fmtp:", "a=rtcp-fb:")) and (
            keep is None or keep not in line
        ):
            continue
        out.append(line)
    if how == "unknown":
        at = next((i for i, ln in enumerate(out) if ln.startswith("m=audio")), 0)
        out.insert(at + 1, "a=rtpmap:96 NOTACODEC/12345")
    return out


class SdpFuzz:
    def __init__(self, server: ServerProcess, report: SurfaceReport) -> None:
        self.server = server
        self.report = report
        self.lingered = 0  # answered offers the server held until its connect deadline

    async def case(self, spec: dict[str, Any]) -> None:
        headers = dict(JSON_TYPE)
        async with raw.Offerer() as peer:
            if spec["kind"] == "offer":
                sdp = to_loopback(mutate(await peer.offer(), spec["ops"]))
                body = json.dumps({"type": "offer", "sdp": sdp, **spec["extra"]}).encode()
                if spec["content_type"] != "application/json":
                    headers = {"Content-Type": spec["content_type"]} if spec["content_type"] else {}
            elif spec["kind"] == "json":
                value = spec["body"]
                if isinstance(value, dict) and isinstance(value.get("sdp"), str):
                    value = {**value, "sdp": to_loopback(value["sdp"])}
                body = json.dumps(value).encode()
            else:
                body = base64.b64decode(spec["b64"])
            reply = await raw.request(self.server.port, "POST", "/api/offer", body, headers)
            answered: bool | None = None
            if reply.status == 200:
                answered = await self._answered(peer, reply, spec)
            elif not reply.clear_error(400, 413, 415):
                self.report.fail(f"HTTP {reply.status} without a JSON reason", shown(spec))
        await self._gone(spec, answered)

    async def _answered(self, peer: raw.Offerer, reply: raw.Reply, spec: dict[str, Any]) -> bool:
        try:
            data = json.loads(reply.body)
            assert data["type"] == "answer" and data["sdp"].startswith("v=0") and data["session_id"]
        except (ValueError, KeyError, AssertionError, TypeError, AttributeError):
            self.report.fail("an accepted offer's answer is not an SDP answer", shown(spec))
            return False
        from aiortc import RTCSessionDescription

        try:
            await peer.pc.setRemoteDescription(RTCSessionDescription(data["sdp"], "answer"))
        except Exception:
            return False  # the answer fits the mutated offer, not the peer's own: no matter
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and peer.pc.connectionState != "connected":
            await asyncio.sleep(0.05)
        return peer.pc.connectionState == "connected"

    async def _gone(self, spec: dict[str, Any], answered: bool | None) -> None:
        """The server's peer count is back to 0 soon: at once for a refusal or a peer that
        closed, once ICE gives up for an answer the server never saw connect. `answered`:
        None for a refusal, else whether the offering peer saw itself connected."""
        t0 = time.monotonic()
        peers = -1
        while time.monotonic() - t0 < PEER_LINGER_S:
            try:
                peers = int((await asyncio.to_thread(self.server.health, 5.0))["peers"])
            except (OSError, ValueError, KeyError):
                self.report.fail("/healthz did not answer", shown(spec))
                return
            if peers == 0:
                break
            await asyncio.sleep(0.1)
        waited = time.monotonic() - t0
        if peers != 0:
            self.report.fail(f"{peers} peers still open after {PEER_LINGER_S:.0f} s", shown(spec))
        elif waited > ICE_GIVE_UP_S or (waited > PEER_GONE_S and answered is None):
            what = "a refused offer" if answered is None else "an answered offer"
            self.report.fail(f"{what} held its slot for {waited:.0f} s", shown(spec))
        elif waited > PEER_GONE_S:
            self.lingered += 1  # the server never saw it connect: closed at its deadline


def sdp(cases: int, seed: int, home: Path) -> SurfaceReport:
    """Fixed, then generated offers against a real server over `home`."""
    report = SurfaceReport()
    loop = LoopThread()
    server = ServerProcess(home, embeddings=False)
    server.start()
    fuzz = SdpFuzz(server, report)

    def check(spec: dict[str, Any]) -> None:
        report.cases += 1
        try:
            loop.run(fuzz.case(spec), PEER_LINGER_S + 60.0)
        except Exception as exc:
            report.fail(f"the case could not run: {type(exc).__name__}", f"{exc!r}: {shown(spec)}")
        if not server.alive():
            report.fail("the server died", shown(spec))
            server.start()

    try:
        for spec in fixed_cases("sdp"):
            check(spec)
        generate(SDP_CASE, cases, seed, check)
    finally:
        loop.close()
        server.stop()
    _integrity(server.db_path, report)
    return report


def _as_list(case: Any) -> list[dict[str, Any]]:
    """A kept case of a surface whose cases are lists (`fixed_cases` types them as objects)."""
    return list(case)


def _integrity(db: Path, report: SurfaceReport) -> None:
    if not db.exists():
        return
    with contextlib.closing(sqlite3.connect(db, timeout=10.0)) as conn:
        verdict = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    if verdict != ["ok"]:
        report.fail("integrity_check failed", "; ".join(verdict[:5]))


# --- "datachannel" --------------------------------------------------------------------------

MAX_MESSAGE_CHARS = 16384  # bot.voice.page_channel's limits, restated so a change is noticed
MAX_TEXT_CHARS = 4000


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


PANEL_ACTIONS = ("task_done", "reminder_done", "reminder_snooze", "note_delete")
IDS = ("task-1", "task-2", "reminder-1", "note-1", "note-2", "apr-1", "", " ", "task-0", "x" * 30)
_TEXT = st.one_of(
    st.text(max_size=80),
    st.sampled_from(["What time is it?", "Do I have any reminders?", "yes", "no", "   ", ""]),
    st.integers(1, 30000).map(lambda n: "w" * n),
    _JSON,
)
_MESSAGE = st.one_of(
    _JSON.map(lambda v: {"raw": json.dumps(v)}),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["text", "interrupt", "approval", "panel", "Text", "", "ping"])
            | st.text(max_size=12)
            | _JSON
        },
        optional={
            "text": _TEXT,
            "tool": st.sampled_from(["create_task", "list_tasks", "rm -rf", ""]) | _JSON,
            "id": st.sampled_from(IDS) | _JSON,
            "decision": st.sampled_from(["yes", "no", "YES", ""]) | _JSON,
            "action": st.sampled_from(PANEL_ACTIONS) | _JSON,
            "minutes": _JSON | st.integers(-5, 2000),
            "extra": _JSON,
        },
    ).map(lambda m: {"json": m}),
    st.fixed_dictionaries({"type": st.just("text"), "text": _TEXT}).map(lambda m: {"json": m}),
    st.fixed_dictionaries(
        {
            "type": st.just("panel"),
            "action": st.sampled_from(PANEL_ACTIONS),
            "id": st.sampled_from(IDS),
        },
        optional={"minutes": st.integers(-5, 2000) | st.floats()},
    ).map(lambda m: {"json": m}),
    st.fixed_dictionaries(
        {
            "type": st.just("approval"),
            "id": st.sampled_from(IDS),
            "decision": st.sampled_from(["yes", "no"]),
        }
    ).map(lambda m: {"json": m}),
    st.sampled_from(["{type: text", '{"type": "text"', "", "null", "\ufeff{}"]).map(
        lambda s: {"raw": s}
    ),
    # Nested past the JSON parser's recursion limit (built here: a literal in the strategy
    # makes its repr, which Hypothesis prints with some warnings, 10 kB long).
    st.integers(1000, 8000).map(lambda n: {"raw": "[" * n + "]" * n}),
    st.integers(MAX_MESSAGE_CHARS - 5, 250_000).map(
        lambda n: {"raw": json.dumps({"type": "text", "text": "a" * n})}
    ),
    st.binary(max_size=200).map(lambda b: {"binary": base64.b64encode(b).decode()}),
    st.binary(min_size=1, max_size=60)
    .filter(_not_utf8)
    .map(lambda b: {"bad_utf8": base64.b64encode(b).decode()}),
)
# Deferred: Hypothesis's repr of the whole tree is tens of kB, and it warns.
DC_CASE = st.deferred(
    lambda: st.lists(_MESSAGE, min_size=1, max_size=3) | st.lists(_MESSAGE, min_size=4, max_size=20)
)


def expected(message: dict[str, Any]) -> str:
    """What `bot.voice.page_channel` (and the knowledge panel) documents for a message:
    "error", "turn" (typed text that starts a turn), "panel" (a result or an error),
    "approval" (an error unless that approval waits), or "quiet" (interrupt: no answer)."""
    if "binary" in message or "bad_utf8" in message:
        return "error"
    text = message["raw"] if "raw" in message else json.dumps(message["json"])
    if len(text) > MAX_MESSAGE_CHARS:
        return "error"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return "error"
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return "error"
    kind = value["type"]
    if kind == "interrupt":
        return "quiet"
    if kind == "text":
        said, tool = value.get("text"), value.get("tool")
        if not isinstance(said, str) or not said.strip() or len(said) > MAX_TEXT_CHARS:
            return "error"
        if tool is not None and tool not in ("create_task", "list_tasks"):
            return "error"
        return "turn"
    if kind == "approval":
        return "approval" if value.get("decision") in ("yes", "no") else "error"
    if kind == "panel":
        return "panel"
    return "error"


def _wire(message: dict[str, Any]) -> str | bytes:
    if "binary" in message:
        return base64.b64decode(message["binary"])
    if "raw" in message:
        return str(message["raw"])
    return json.dumps(message["json"])


class ChannelFuzz:
    """One client, reused until the server closes it (a failure) or a case needs a new one."""

    def __init__(self, server: ServerProcess, report: SurfaceReport) -> None:
        self.server = server
        self.report = report
        self.client: VoiceClient | None = None
        self.told: set[str] = set()  # turns the client was told are complete
        self._flushes: set[asyncio.Future[None]] = set()  # held until done (weak otherwise)

    async def ensure(self) -> VoiceClient:
        if self.client is not None and self._open(self.client):
            return self.client
        if self.client is not None:
            await self.close()
        deadline = time.monotonic() + 60.0
        while True:
            health = await asyncio.to_thread(self.server.health, 5.0)
            if health.get("peers", 1) == 0 or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        client = VoiceClient(self.server.url)
        try:
            await client.connect(timeout=30.0)
        except BaseException:
            await client.close()
            raise
        self.client = client
        return client

    @staticmethod
    def _open(client: VoiceClient) -> bool:
        channel = client._channel
        return (
            client.pc.connectionState == "connected"
            and channel is not None
            and channel.readyState == "open"
        )

    async def close(self) -> None:
        if self.client is not None:
            self.told |= {e["turn_id"] for e in self.client.of_type("assistant_done")}
            await self.client.close()
            self.client = None

    def _send(self, client: VoiceClient, message: dict[str, Any]) -> None:
        channel = client._channel
        if "bad_utf8" in message:
            # aiortc's send() encodes text itself; a text message (PPID 51) that is not UTF-8
            # goes on its queue as bytes, the way a broken or hostile peer would send it.
            transport = channel.transport
            transport._data_channel_queue.append(
                (channel, 51, base64.b64decode(message["bad_utf8"]))
            )
            self._flushes.add(asyncio.ensure_future(transport._data_channel_flush()))
            return
        channel.send(_wire(message))

    async def case(self, messages: list[dict[str, Any]]) -> None:
        client = await self.ensure()
        n = len(client.events)
        for message in messages:
            if not self._open(client):
                break  # closed by an earlier message of this case: reported below
            self._send(client, message)
        kinds = [expected(m) for m in messages]
        if not self._open(client):
            pass
        elif len(messages) == 1:
            await self._one(client, n, kinds[0], messages)
        else:
            await self._burst(client, n, messages)
        if self._open(client) and any(k == "turn" for k in kinds):
            # Stop what the typed text started: the next case starts with Annie quiet.
            client.send({"type": "interrupt"})
            await self._quiet(client)
        if not self._open(client):
            self.report.fail("the server closed the connection", shown(messages))
            await self.close()
        elif not await self._healthy():
            self.report.fail("/healthz did not answer within 2 s", shown(messages))

    async def _one(
        self, client: VoiceClient, n: int, kind: str, messages: list[dict[str, Any]]
    ) -> None:
        def seen(c: VoiceClient) -> Any:
            new = c.events[n:]
            types = [e.get("type") for e in new]
            if kind in ("error", "approval") and "error" in types:
                return True
            if kind == "panel" and ("error" in types or "panel_result" in types):
                return True
            if kind == "turn" and any(
                t in ("voice_state", "assistant_delta", "assistant_done", "error") for t in types
            ):
                return True
            return kind == "approval" and any(t in ("assistant_done", "voice_state") for t in types)

        if kind == "quiet":
            await asyncio.sleep(0.05)
            return
        try:
            await client.wait_for(seen, 10.0, kind)
        except TimeoutError:
            got = [e.get("type") for e in client.events[n:]][:8]
            self.report.fail(f"no {kind} reaction within 10 s", f"{shown(messages)}; got {got}")

    async def _burst(self, client: VoiceClient, n: int, messages: list[dict[str, Any]]) -> None:
        """A burst may be partly dropped (documented, with one error); afterwards the channel
        must still answer a message it refuses, in order, within 15 s."""
        marker = {"type": "fuzz-probe", "n": n}
        client.send(marker)

        def probed(c: VoiceClient) -> bool:
            return any(
                e.get("type") == "error" and "fuzz-probe" in str(e.get("message", ""))
                for e in c.events[n:]
            )

        try:
            await client.wait_for(probed, 30.0, "the probe's error")
        except TimeoutError:
            got = [e.get("type") for e in client.events[n:]][-8:]
            self.report.fail(
                "a burst left the channel unanswering for 30 s", f"{shown(messages)}; got {got}"
            )

    async def _quiet(self, client: VoiceClient) -> None:
        """Wait until no turn runs: the last voice state is idle or listening."""
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            states = client.of_type("voice_state")
            if not states or states[-1].get("state") in ("idle", "listening"):
                return
            await asyncio.sleep(0.05)
        self.report.fail("a turn did not stop within 30 s of interrupt", "")

    async def _healthy(self) -> bool:
        try:
            await asyncio.wait_for(asyncio.to_thread(self.server.health, 2.0), 2.5)
        except (OSError, TimeoutError, ValueError):
            return False
        return True


def _seed_records(home: Path) -> None:
    """A task, a reminder and notes, so panel actions and approvals can name real ids."""
    from datetime import UTC, datetime, timedelta

    from config import load_settings
    from memory.store import Store

    settings = load_settings(environ={"ANNIE_HOME": str(home), "HF_HUB_OFFLINE": "1"})
    with Store.open(settings) as store:
        store.tasks.add("water the plants", pending="user")
        store.tasks.add("call the plumber")
        store.reminders.add("stretch", datetime.now(UTC) + timedelta(days=2))
        store.notes.add("the gate code is 4411", source="user")
        store.notes.add("I like green tea", source="user")


def datachannel(cases: int, seed: int, home: Path) -> SurfaceReport:
    """Fixed, then generated messages over one real connection to a real server."""
    report = SurfaceReport()
    home.mkdir(parents=True, exist_ok=True)
    _seed_records(home)
    loop = LoopThread()
    server = ServerProcess(home, embeddings=False)
    server.start()
    fuzz = ChannelFuzz(server, report)

    def check(messages: list[dict[str, Any]]) -> None:
        report.cases += 1
        try:
            loop.run(fuzz.case(messages), 120.0)
        except Exception as exc:
            report.fail(
                f"the case could not run: {type(exc).__name__}", f"{exc!r}: {shown(messages)}"
            )
            with contextlib.suppress(Exception):
                loop.run(fuzz.close(), 30.0)
        if not server.alive():
            report.fail("the server died", shown(messages))
            server.start()

    try:
        for case in fixed_cases("datachannel"):
            check(_as_list(case))
        generate(DC_CASE, cases, seed, check)
        loop.run(fuzz.close(), 30.0)
    finally:
        loop.close()
        server.stop()
    _integrity(server.db_path, report)
    from testkit.reliability_store import missing_turns

    lost = missing_turns(server.db_path, sorted(fuzz.told))
    if lost:
        report.fail(f"{len(lost)} completed turns lost", ", ".join(lost[:5]))
    return report


# --- "audio" --------------------------------------------------------------------------------

RATES = (8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000, 96000)
LAYOUTS = {"mono": 1, "stereo": 2, "quad": 4, "5.1": 6}
FORMATS = ("s16", "s16p", "flt", "fltp", "s32", "dbl", "u8")
_DTYPES: dict[str, Any] = {
    "s16": np.int16,
    "s32": np.int32,
    "flt": np.float32,
    "dbl": np.float64,
    "u8": np.uint8,
}
SIGNALS = ("silence", "dc", "clip", "extreme", "noise", "sine", "nan", "inf", "huge")
# One case in this many goes on through Whisper (500 of 10,000).
WHISPER_EVERY = 20

_FRAME = st.fixed_dictionaries(
    {
        "rate": st.sampled_from(RATES),
        "layout": st.sampled_from(list(LAYOUTS)),
        "format": st.sampled_from(FORMATS),
        "samples": st.sampled_from([0, 1, 2, 3, 511, 512, 513, 960, 1023]) | st.integers(0, 24000),
        "signal": st.sampled_from(SIGNALS),
        "level": st.sampled_from([0.0, 1e-6, 0.01, 0.5, 1.0, 2.0]),
        "seed": st.integers(0, 2**16),
        "pts": st.sampled_from(["steady", "none", "backwards", "jump"]),
    }
)
# Deferred: Hypothesis's repr of the whole tree is tens of kB, and it warns.
AUDIO_CASE = st.deferred(
    lambda: (
        st.lists(_FRAME, min_size=1, max_size=5)
        | st.lists(
            _FRAME.map(lambda f: {**f, "rate": 48000, "layout": "stereo", "format": "s16"}),
            min_size=1,
            max_size=5,
        )
    )
)


def make_audio_frame(spec: dict[str, Any], pts: int) -> av.AudioFrame:
    """One frame as the spec says: the signal in [-level, level] of full scale (NaN and
    infinities only where the format is float), in the format's own sample type."""
    n, channels, fmt = int(spec["samples"]), LAYOUTS[spec["layout"]], spec["format"]
    rng = np.random.default_rng(int(spec["seed"]))
    level, signal = float(spec["level"]), spec["signal"]
    t = np.arange(n, dtype=np.float64)
    wave = {
        "silence": np.zeros(n),
        "dc": np.full(n, level),
        "clip": np.sign(np.sin(t / 7.0)) * max(level, 1.0) * 4.0,
        "extreme": np.where(t % 2 == 0, 1.0, -1.0) * 1.5,
        "noise": rng.normal(0.0, max(level, 1e-3), n),
        "sine": np.sin(2 * np.pi * 440.0 * t / int(spec["rate"])) * level,
        "nan": np.where(t % 3 == 0, np.nan, level),
        "inf": np.where(t % 2 == 0, np.inf, -np.inf),
        "huge": np.full(n, 1e30),
    }[signal]
    data = np.repeat(wave[None, :], channels, axis=0)  # channels x samples
    base = fmt.rstrip("p")
    dtype = _DTYPES[base]
    if base in ("flt", "dbl"):
        samples = data.astype(dtype)
    else:
        info = np.iinfo(dtype)
        finite = np.nan_to_num(data, nan=0.0, posinf=1.0, neginf=-1.0)
        if base == "u8":
            scaled = np.clip(finite * 128.0 + 128.0, info.min, info.max)
        else:
            scaled = np.clip(finite * float(info.max), info.min, info.max)
        samples = scaled.astype(dtype)
    if not fmt.endswith("p"):
        samples = samples.T.reshape(1, -1)  # packed: one plane, channels interleaved
    frame = av.AudioFrame.from_ndarray(
        np.ascontiguousarray(samples), format=fmt, layout=spec["layout"]
    )
    frame.sample_rate = int(spec["rate"])
    if spec["pts"] != "none":
        frame.pts = pts
        frame.time_base = fractions.Fraction(1, int(spec["rate"]))
    return frame


class FrameTrack(MediaStreamTrack):
    """A microphone track that hands over given frames, then ends."""

    kind = "audio"

    def __init__(self, frames: list[av.AudioFrame]) -> None:
        super().__init__()
        self._frames = deque(frames)

    async def recv(self) -> av.AudioFrame:
        if not self._frames:
            self.stop()
            raise MediaStreamError
        return self._frames.popleft()


def frames_for(specs: list[dict[str, Any]]) -> list[av.AudioFrame]:
    frames, pts = [], 0
    for spec in specs:
        if spec["pts"] == "backwards":
            pts = max(0, pts - 5000)
        elif spec["pts"] == "jump":
            pts += 10_000_000
        frames.append(make_audio_frame(spec, pts))
        pts += int(spec["samples"])
    return frames


class AudioFuzz:
    def __init__(self, stt: Any, vad: Any, report: SurfaceReport) -> None:
        self.stt = stt
        self.vad = vad
        self.report = report
        self.loop = LoopThread()
        self.whispered = 0

    async def _hear(self, specs: list[dict[str, Any]]) -> tuple[list[np.ndarray], list[float], str]:
        from bot.voice.audio_in import AudioInput

        fed: list[np.ndarray] = []
        probs: list[float] = []
        ended = asyncio.Event()

        def on_frame(frame: np.ndarray, probability: float) -> None:
            fed.append(frame.copy())
            probs.append(probability)

        audio = AudioInput(
            FrameTrack(frames_for(specs)), self.vad.new_stream(), on_frame, on_end=ended.set
        )
        audio.start()
        try:
            await asyncio.wait_for(ended.wait(), 10.0)
        except TimeoutError:
            await audio.stop()
            return fed, probs, "the input did not end within 10 s"
        await audio.stop()  # raises what the reader or the VAD task met
        return fed, probs, ""

    def check(self, specs: list[dict[str, Any]]) -> None:
        report = self.report
        report.cases += 1
        try:
            fed, probs, late = self.loop.run(self._hear(specs), 30.0)
        except Exception as exc:
            report.fail(f"{type(exc).__name__} escaped the audio input", f"{exc!r}: {shown(specs)}")
            return
        if late:
            report.fail(late, shown(specs))
        for frame, p in zip(fed, probs, strict=True):
            if frame.shape != (512,) or frame.dtype != np.float32:
                report.fail("a VAD frame of the wrong shape or type", shown(specs))
                break
            if not np.all(np.isfinite(frame)) or float(np.max(np.abs(frame))) > 1.0:
                report.fail("a non-finite or out-of-range sample reached the VAD", shown(specs))
                break
            if not (np.isfinite(p) and 0.0 <= p <= 1.0):
                report.fail("the VAD gave a probability outside [0, 1]", shown(specs))
                break
        expected_16k = sum(int(s["samples"]) * 16000 / int(s["rate"]) for s in specs)
        if len(fed) * 512 > expected_16k + 2048:
            report.fail("more audio came out than went in", shown(specs))
        if report.cases % WHISPER_EVERY == 0:
            self._transcribe(np.concatenate(fed) if fed else np.zeros(0, np.float32), specs)

    def _transcribe(self, pcm: np.ndarray, specs: list[dict[str, Any]]) -> None:
        self.whispered += 1
        cap = 30.0 + pcm.size / 16000.0
        try:
            transcript = self.loop.run(self.stt.transcribe(pcm), cap)
        except TimeoutError:
            self.report.fail(f"no transcript within {cap:.0f} s", shown(specs))
            return
        except Exception as exc:
            self.report.fail(f"{type(exc).__name__} escaped Whisper", f"{exc!r}: {shown(specs)}")
            return
        if not isinstance(transcript.text, str):
            self.report.fail("the transcript is not text", shown(specs))


def audio(cases: int, seed: int, home: Path, *, stt: Any = None, vad: Any = None) -> SurfaceReport:
    """Fixed, then generated audio through the audio input, the VAD and (one in 20) Whisper;
    `stt` and `vad` default to the shipped models, loaded here."""
    from config import load_settings
    from models import load_stt, load_vad

    settings = load_settings(environ={"ANNIE_HOME": str(home), "HF_HUB_OFFLINE": "1"})
    report = SurfaceReport()
    fuzz = AudioFuzz(stt or load_stt(settings), vad or load_vad(settings), report)
    try:
        for case in fixed_cases("audio"):
            fuzz.check(_as_list(case))
        generate(AUDIO_CASE, cases, seed, fuzz.check)
    finally:
        fuzz.loop.close()
    return report


SURFACES: dict[str, Surface] = {"sdp": sdp, "datachannel": datachannel, "audio": audio}
