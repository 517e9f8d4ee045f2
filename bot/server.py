"""The HTTP + WebRTC server: the page, the offer endpoint, health, and the open connections.

Shaped like aiortc's `examples/server/server.py`: a POST of the browser's SDP offer creates a
peer connection, wires its microphone track and data channel to a `VoiceSession`, and
answers with the server's SDP (ICE gathered in full, since aiortc does not trickle). Peer
connections and sessions live on the application object and all close on shutdown.
Hardening: a body-size cap, a cap on concurrent sessions (503 past it), JSON reasons for
every refusal (400 for malformed JSON or SDP, 415 for a body that is not JSON, 503 when
the database is locked or full), and a token that is required whenever the server listens
beyond loopback. Host, Origin, security headers, timeouts and the redacted access log are
`bot.http_guard`, which every request passes first. The session cap is
`server.max_sessions`; with the chat model on a serving engine that says how many requests
it runs at once, it is also at most that.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

from bot.allocator import heap_mb, release_free
from bot.audio_in import prompt_receiver
from bot.events import Event
from bot.http_guard import (
    BODY_TIMEOUT_S,
    TOKEN_HEADER,
    HostRule,
    add_security_headers,
    authorized,
    check_sdp_size,
    guard,
    handler_args,
    read_body,
    reason,
)
from bot.knowledge import Panels, snapshot_route
from bot.voice_session import MetricsSink, TurnSession, VoiceSession
from config import Settings
from memory.approvals import Approvals
from memory.db import StoreError
from models.base import LLM, STT, TTS, VAD
from models.turn import TurnDetector

if TYPE_CHECKING:
    from bot.runtime import Runtime

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).with_name("web")
# The audio codecs aiortc decodes; an offer with none of them cannot be answered.
_SPOKEN_CODEC = re.compile(r"^a=rtpmap:\d+ (opus|G722|PCMU|PCMA)/", re.IGNORECASE | re.MULTILINE)


EventCallback = Callable[[Event], None]


class SessionOpener(Protocol):
    """Opens a conversation session and returns its id and the session.

    `resume` is the page's previous session id, if any (the new session's memory briefing
    already carries what the previous one persisted); `on_event` receives events the session
    emits outside a turn (idle-time compaction, for instance).
    """

    def __call__(
        self, resume: str | None, on_event: EventCallback
    ) -> Awaitable[tuple[str, TurnSession]]: ...


class _Relay:
    """Holds events emitted before the voice session exists, then forwards them."""

    def __init__(self) -> None:
        self.target: VoiceSession | None = None
        self.held: list[Event] = []

    def __call__(self, event: Event) -> None:
        if self.target is None:
            self.held.append(event)
        else:
            self.target.send(event)

    def attach(self, voice: VoiceSession) -> None:
        self.target = voice
        for event in self.held:
            voice.send(event)
        self.held.clear()


def runtime_sessions(runtime: Runtime) -> SessionOpener:
    """Sessions from the shared `Runtime`, tagged as voice sessions."""

    async def open_session(resume: str | None, on_event: EventCallback) -> tuple[str, TurnSession]:
        meta: dict[str, Any] = {"front_end": "voice"}
        if resume:
            meta["resumed_from"] = resume
        session = runtime.open_session(on_event=on_event, meta=meta)
        session.warm_up()  # while the connection is set up and the user starts to speak
        return str(session.id), session

    return open_session


@dataclass
class Engines:
    stt: STT
    tts: TTS
    vad: VAD
    # The turn detector for semantic endpointing; None keeps the fixed silence window.
    turn: TurnDetector | None = None


@dataclass
class Connection:
    id: str
    pc: RTCPeerConnection
    voice: VoiceSession


@dataclass
class ServerState:
    """Everything the routes share; kept on the app, never in module globals."""

    settings: Settings
    engines: Engines
    open_session: SessionOpener
    metrics: MetricsSink | None = None
    # The approval ledger: the page shows this conversation's open approval with buttons.
    approvals: Approvals | None = None
    connections: dict[str, Connection] = field(default_factory=dict)
    pending: int = 0  # offers being processed (they count against max_sessions)
    body_timeout_s: float = BODY_TIMEOUT_S
    closing: bool = False
    on_voice_session: list[Callable[[VoiceSession], None]] = field(default_factory=list)
    # The chat model once loaded (None before): a serving engine's slots cap the sessions.
    loaded_llm: Callable[[], LLM | None] = lambda: None
    # Whether the head every session shares is evaluated and kept (None: no shared head).
    head_kept: Callable[[], bool | None] = lambda: None

    @property
    def max_sessions(self) -> int:
        return session_limit(self.settings, self.loaded_llm())


def session_limit(settings: Settings, llm: LLM | None) -> int:
    """Sessions open at once. A local model queues calls, so config stands; a serving engine
    runs turns at once up to its slots (more would wait inside it mid-turn), so the smaller of
    the two. An engine that does not say (vLLM, llama-cpp-python's server) leaves config."""
    slots = engine_slots(llm)
    return min(settings.server.max_sessions, slots or settings.server.max_sessions)


def engine_slots(llm: LLM | None) -> int | None:
    """Requests a serving engine runs at once, where it says; None for a local model."""
    return llm.max_parallel if llm is not None and llm.backend == "server" else None


def thread_kinds() -> dict[str, int]:
    """Python threads by kind: a pool worker is named after its pool (prefix, "_", number)."""
    kinds: Counter[str] = Counter()
    for t in threading.enumerate():
        head, _, tail = t.name.rpartition("_")
        kinds[head if head and tail.isdigit() else t.name] += 1
    return dict(kinds)


def cache_bytes(llm: LLM | None) -> int:
    return llm.cache_bytes if llm is not None else 0


STATE: web.AppKey[ServerState] = web.AppKey("annie_state", ServerState)


async def index(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(WEB_DIR / "index.html", headers={"Cache-Control": "no-cache"})


async def healthz(request: web.Request) -> web.Response:
    state = request.app[STATE]
    return web.json_response(
        {
            "ok": not state.closing,
            "sessions": len(state.connections),
            "max_sessions": state.max_sessions,
            "backend": state.settings.models.llm_backend,
            "engine_slots": engine_slots(state.loaded_llm()),
            "head_kept": state.head_kept(),
            # What must not grow over a long run (the reliability soak reads these).
            "tasks": len(asyncio.all_tasks()),
            "peers": len(state.connections) + state.pending,
            "threads": thread_kinds(),
            "heap_mb": heap_mb(),
            # Saved model states: bounded by models.llm_checkpoints, and the part of resident
            # memory that grows with the conversation by design.
            "llm_cache_mb": round(cache_bytes(state.loaded_llm()) / 2**20, 1),
        }
    )


async def _read_offer(request: web.Request, state: ServerState) -> dict[str, Any]:
    # A cross-site form can post text/plain without asking first; JSON it cannot.
    if request.content_type != "application/json":
        given = request.headers.get("Content-Type") or "none"
        raise web.HTTPUnsupportedMediaType(
            reason=f"Content-Type must be application/json (got {given})"
        )
    raw = await read_body(request, state.settings.server.max_body_bytes, state.body_timeout_s)
    if not raw.strip():
        raise web.HTTPBadRequest(reason='empty body; expected JSON {"sdp": ..., "type": "offer"}')
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise web.HTTPBadRequest(reason=f"body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(reason='expected a JSON object {"sdp": ..., "type": "offer"}')
    if body.get("type") != "offer":
        raise web.HTTPBadRequest(reason='"type" must be "offer"')
    sdp = body.get("sdp")
    if not isinstance(sdp, str) or not sdp.startswith("v=0"):
        raise web.HTTPBadRequest(reason='"sdp" must be an SDP offer (text starting with "v=0")')
    check_sdp_size(sdp)
    resume = body.get("resume")
    if resume is not None and not isinstance(resume, str):
        raise web.HTTPBadRequest(reason='"resume" must be a session id string')
    return body


async def offer(request: web.Request) -> web.Response:
    state = request.app[STATE]
    if not authorized(request, state.settings.server.token):
        return reason(401, f"missing or wrong token (send {TOKEN_HEADER} or ?token=)")
    body = await _read_offer(request, state)
    if state.closing:
        return reason(503, "the server is shutting down")
    limit = state.max_sessions
    if len(state.connections) + state.pending >= limit:
        return reason(503, f"too many open sessions ({limit}); close one and retry")
    state.pending += 1
    try:
        return await _connect(state, body)
    finally:
        state.pending -= 1


async def _connect(state: ServerState, body: dict[str, Any]) -> web.Response:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    try:
        await pc.setRemoteDescription(RTCSessionDescription(sdp=body["sdp"], type="offer"))
    except Exception as exc:
        await pc.close()
        if "a=rtpmap:" in body["sdp"] and not _SPOKEN_CODEC.search(body["sdp"]):
            return reason(400, "the SDP has no codec this server speaks (Opus, G722, PCMU, PCMA)")
        return reason(400, f"could not parse the SDP offer: {exc or type(exc).__name__}")
    audio = [t for t in pc.getTransceivers() if t.kind == "audio"]
    if not audio:
        await pc.close()
        return reason(400, "the offer has no audio section; the page must offer audio")
    for transceiver in audio:
        prompt_receiver(transceiver.receiver)

    relay = _Relay()
    try:
        session_id, session = await state.open_session(body.get("resume"), relay)
    except StoreError as exc:
        # The database is locked or full: say which file and why, and that it may pass.
        await pc.close()
        log.error("could not open a session: %s", exc)
        return reason(503, f"could not open a session: {exc}")
    except Exception:
        await pc.close()
        log.exception("could not open a session")
        return reason(500, "could not open a session; see the server log")

    voice = VoiceSession(
        session,
        session_id=session_id,
        settings=state.settings,
        stt=state.engines.stt,
        tts=state.engines.tts,
        vad=state.engines.vad,
        turn=state.engines.turn,
        metrics=state.metrics,
        approvals=state.approvals,
    )
    relay.attach(voice)
    meter = getattr(session, "meter", None)
    if callable(meter):
        voice.send(meter())  # the fixed overhead shows on the meter before the first turn
    conn = Connection(session_id, pc, voice)
    state.connections[session_id] = conn
    for hook in state.on_voice_session:
        hook(voice)

    @pc.on("datachannel")
    def _datachannel(channel: Any) -> None:
        voice.attach_channel(channel)

    @pc.on("connectionstatechange")
    async def _state_change() -> None:
        log.info("session %s: connection %s", session_id, pc.connectionState)
        if pc.connectionState in ("failed", "closed"):
            await _drop(state, conn)

    for receiver in pc.getReceivers():
        if receiver.track is not None and receiver.track.kind == "audio":
            voice.attach_input(receiver.track)
            break
    try:
        pc.addTrack(voice.output)  # joins the offer's audio transceiver (sendrecv)
        answer = await pc.createAnswer()
        await pc.setLocalDescription(answer)
    except Exception as exc:
        await _drop(state, conn)
        return reason(400, f"could not answer the offer: {exc or type(exc).__name__}")
    local = pc.localDescription
    return web.json_response({"sdp": local.sdp, "type": local.type, "session_id": session_id})


async def _drop(state: ServerState, conn: Connection) -> None:
    """A connection ended (page closed, network lost, failed): close its session (tier 3)."""
    if state.connections.get(conn.id) is conn:
        del state.connections[conn.id]
    try:
        await conn.voice.close()
    except Exception:
        log.exception("closing session %s failed", conn.id)
    with contextlib.suppress(Exception):
        await conn.pc.close()
    if not state.closing:
        # What the connection's audio, transcripts and model states freed goes back now.
        await asyncio.to_thread(release_free)


async def _shutdown(app: web.Application) -> None:
    state = app[STATE]
    state.closing = True
    conns = list(state.connections.values())
    await asyncio.gather(*(_drop(state, c) for c in conns), return_exceptions=True)


def create_app(
    settings: Settings,
    engines: Engines,
    open_session: SessionOpener,
    *,
    metrics: MetricsSink | None = None,
    approvals: Approvals | None = None,
) -> web.Application:
    """The aiohttp application; `check_bind(settings)` before listening on a real socket."""
    state = ServerState(settings, engines, open_session, metrics, approvals)
    rule = HostRule(settings.server.allowed_hosts)
    # aiohttp enforces the cap while reading the body, whatever Content-Length claims.
    app = web.Application(
        client_max_size=settings.server.max_body_bytes,
        middlewares=[guard(rule, lambda: settings.server.max_body_bytes)],
        handler_args=handler_args(),
    )
    app[STATE] = state
    app.on_response_prepare.append(add_security_headers)
    app.router.add_get("/", index)
    app.router.add_get("/healthz", healthz)
    app.router.add_post("/api/offer", offer)
    app.router.add_static("/static/", WEB_DIR, follow_symlinks=False)
    app.on_shutdown.append(_shutdown)
    return app


def runtime_app(settings: Settings, engines: Engines, runtime: Runtime) -> web.Application:
    """The application over a shared `Runtime`: its sessions, metrics and approvals, and
    the knowledge panel (`bot.knowledge`) on every page."""
    app = create_app(
        settings,
        engines,
        runtime_sessions(runtime),
        metrics=runtime.store.metrics,
        approvals=runtime.store.approvals,
    )
    app[STATE].on_voice_session.append(Panels(runtime.store, runtime.settings, runtime.registry))
    # Never loads the model itself: `serve` loads it before listening; until then, config.
    app[STATE].loaded_llm = lambda: runtime.llm if runtime.has_llm else None
    app[STATE].head_kept = lambda: runtime.head_kept
    _schedule_reminders(app, runtime)
    token = settings.server.token
    app.router.add_get(
        "/api/knowledge", snapshot_route(runtime.store, lambda r: authorized(r, token))
    )
    return app


def _schedule_reminders(app: web.Application, runtime: Runtime) -> None:
    """Reminders fire while the server runs, whether or not a page is open."""

    async def start(_: web.Application) -> None:
        runtime.reminders.start()

    async def stop(_: web.Application) -> None:
        await runtime.reminders.stop()

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
