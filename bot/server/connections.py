"""The voice server's WebRTC connections: the offer endpoint that opens one, and their end.

Shaped like aiortc's `examples/server/server.py`: a POST of the browser's SDP offer creates a
peer connection, wires its microphone track and data channel to a `VoiceSession`, and
answers with the server's SDP (ICE gathered in full, since aiortc does not trickle). An offer
is checked before anything opens (JSON only, an SDP with audio in a codec aiortc decodes, the
token, the session cap), and every refusal says why. An answered offer whose peer has not
connected within `server.connect_timeout_s` is closed, so a peer that takes the answer and
never completes ICE frees its place among `server.max_sessions` then, not when aiortc's own
checks give up (about a minute). A connection that fails or closes drops its session; shutdown
drops them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from typing import Any

from aiohttp import web
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

from bot.server.allocator import release_free
from bot.server.guard import TOKEN_HEADER, authorized, check_sdp_size, read_body, reason
from bot.server.shared import SHARED, Connection, ServerShared
from bot.voice.audio_in import prompt_receiver
from bot.voice.session import VoiceSession
from memory.db import StoreError

log = logging.getLogger(__name__)

# SCTP payload protocol ids of a data channel's text and binary messages (RFC 8831).
_PPID_STRING, _PPID_BINARY = 51, 53

# The audio codecs aiortc decodes; an offer with none of them cannot be answered.
_SPOKEN_CODEC = re.compile(r"^a=rtpmap:\d+ (opus|G722|PCMU|PCMA)/", re.IGNORECASE | re.MULTILINE)


async def _read_offer(request: web.Request, shared: ServerShared) -> dict[str, Any]:
    # A cross-site form can post text/plain without asking first; JSON it cannot.
    if request.content_type != "application/json":
        given = request.headers.get("Content-Type") or "none"
        raise web.HTTPUnsupportedMediaType(
            reason=f"Content-Type must be application/json (got {given})"
        )
    raw = await read_body(request, shared.settings.server.max_body_bytes, shared.body_timeout_s)
    if not raw.strip():
        raise web.HTTPBadRequest(reason='empty body; expected JSON {"sdp": ..., "type": "offer"}')
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise web.HTTPBadRequest(reason=f"body is not valid JSON: {exc}") from exc
    except RecursionError as exc:  # the parser recurses per bracket; the cap allows 64k of them
        raise web.HTTPBadRequest(reason="body is not valid JSON: nested too deeply") from exc
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
    shared = request.app[SHARED]
    if not authorized(request, shared.settings.server.token):
        return reason(401, f"missing or wrong token (send {TOKEN_HEADER} or ?token=)")
    body = await _read_offer(request, shared)
    if shared.closing:
        return reason(503, "the server is shutting down")
    limit = shared.max_sessions
    if len(shared.connections) + shared.pending >= limit:
        return reason(503, f"too many open sessions ({limit}); close one and retry")
    shared.pending += 1
    try:
        return await _connect(shared, body)
    finally:
        shared.pending -= 1


async def _connect(shared: ServerShared, body: dict[str, Any]) -> web.Response:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    try:
        await pc.setRemoteDescription(RTCSessionDescription(sdp=body["sdp"], type="offer"))
    except Exception as exc:
        await _discard(pc)
        if "a=rtpmap:" in body["sdp"] and not _SPOKEN_CODEC.search(body["sdp"]):
            return reason(400, "the SDP has no codec this server speaks (Opus, G722, PCMU, PCMA)")
        return reason(400, f"could not parse the SDP offer: {exc or type(exc).__name__}")
    audio = [t for t in pc.getTransceivers() if t.kind == "audio"]
    if not audio:
        await _discard(pc)
        return reason(400, "the offer has no audio section; the page must offer audio")
    for transceiver in audio:
        prompt_receiver(transceiver.receiver)
    _refuse_bad_text(pc)

    try:
        session_id, session = await shared.open_session(body.get("resume"))
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
        settings=shared.settings,
        stt=shared.engines.stt,
        tts=shared.engines.tts,
        vad=shared.engines.vad,
        end_of_turn=shared.engines.end_of_turn,
        words=shared.engines.words,
        voice=shared.voice,
        metrics=shared.metrics,
        approvals=shared.approvals,
        tools=frozenset(session.tool_names()),
    )
    voice.send(session.meter())  # the fixed overhead shows on the meter before the first turn
    conn = Connection(session_id, pc, voice)
    shared.connections[session_id] = conn
    for hook in shared.on_page:
        hook(voice.page)
    for watcher in shared.on_voice_session:
        watcher(voice)

    @pc.on("datachannel")
    def _datachannel(channel: Any) -> None:
        voice.attach_channel(channel)

    @pc.on("connectionstatechange")
    async def _state_change() -> None:
        log.info("session %s: connection %s", session_id, pc.connectionState)
        if pc.connectionState == "connected" and conn.deadline is not None:
            conn.deadline.cancel()
            conn.deadline = None
        if pc.connectionState in ("failed", "closed"):
            await _drop(shared, conn)

    for receiver in pc.getReceivers():
        if receiver.track is not None and receiver.track.kind == "audio":
            voice.attach_input(receiver.track)
            break
    try:
        pc.addTrack(voice.output)  # joins the offer's audio transceiver (sendrecv)
        answer = await pc.createAnswer()
        await pc.setLocalDescription(answer)
    except Exception as exc:
        await _drop(shared, conn)
        return reason(400, f"could not answer the offer: {exc or type(exc).__name__}")
    conn.deadline = asyncio.create_task(_connect_deadline(shared, conn))
    local = pc.localDescription
    return web.json_response({"sdp": local.sdp, "type": local.type, "session_id": session_id})


async def _connect_deadline(shared: ServerShared, conn: Connection) -> None:
    """Close an answered connection whose peer has not connected in time (cancelled once it
    has): a peer that took the answer and never completed ICE would hold its slot."""
    timeout = shared.settings.server.connect_timeout_s
    await asyncio.sleep(timeout)
    conn.deadline = None  # fired: the drop below must not cancel this task
    log.warning(
        "session %s: the peer did not connect within %g s (connection %s); closed, its slot freed",
        conn.id,
        timeout,
        conn.pc.connectionState,
    )
    await _drop(shared, conn)


async def _discard(pc: RTCPeerConnection) -> None:
    """Close a connection whose offer was refused. aiortc's own close can fail on what a
    broken offer left half set up (an SCTP transport with no DTLS under it raised
    AttributeError, a 500); the refusal still goes out."""
    try:
        await pc.close()
    except Exception:
        log.warning("closing a refused offer's connection failed", exc_info=True)


def _refuse_bad_text(pc: RTCPeerConnection) -> None:
    """Hand a text message that is not UTF-8 on as binary, which the page channel refuses
    with an error event. aiortc decodes text inside its SCTP receive loop, where the
    UnicodeDecodeError ends the DTLS transport: one bad message closed the connection."""
    sctp = pc.sctp
    if sctp is None:
        return
    receive = sctp._data_channel_receive

    async def tolerant(stream_id: int, pp_id: int, data: bytes) -> None:
        if pp_id == _PPID_STRING:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                pp_id = _PPID_BINARY
        await receive(stream_id, pp_id, data)

    sctp._data_channel_receive = tolerant  # type: ignore[method-assign]


async def _drop(shared: ServerShared, conn: Connection) -> None:
    """A connection ended (page closed, network lost, failed): close its session (tier 3)."""
    if conn.deadline is not None:
        conn.deadline.cancel()
        conn.deadline = None
    if shared.connections.get(conn.id) is conn:
        del shared.connections[conn.id]
    try:
        await conn.voice.close()
    except Exception:
        log.exception("closing session %s failed", conn.id)
    with contextlib.suppress(Exception):
        await conn.pc.close()
    if not shared.closing:
        # What the connection's audio, transcripts and model states freed goes back now.
        await asyncio.to_thread(release_free)


async def shutdown(app: web.Application) -> None:
    """The app is shutting down: refuse new offers and close every open connection."""
    shared = app[SHARED]
    shared.closing = True
    conns = list(shared.connections.values())
    await asyncio.gather(*(_drop(shared, c) for c in conns), return_exceptions=True)
