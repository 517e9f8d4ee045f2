"""The HTTP + WebRTC server's aiohttp application: the page, health, the offer endpoint, and
what a shared `Runtime` adds (its sessions, metrics, approvals, knowledge panel, reminders).

The offer endpoint and the connections it opens are `bot.server.connections`; what the routes
share (settings, engines, open connections, the session cap) is `bot.server.shared`, kept on
the application object. Peer connections and sessions all close on shutdown.
Hardening: a body-size cap, a cap on concurrent sessions (503 past it), JSON reasons for
every refusal (400 for malformed JSON or SDP, 415 for a body that is not JSON, 503 when
the database is locked or full), and a token that is required whenever the server listens
beyond loopback. Host, Origin, security headers, timeouts and the redacted access log are
`bot.server.guard`, which every request passes first; under `serve --lan` a request that
reaches a network address then needs a credential (`bot.server.lan`), and `/trust` explains
how to trust the HTTPS certificate. The session cap is
`server.max_sessions`; with the chat model on a serving engine that says how many requests
it runs at once, it is also at most that.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from bot.server.access_log import handler_args
from bot.server.allocator import heap_mb
from bot.server.connections import offer, shutdown
from bot.server.guard import HostRule, add_security_headers, authorized, guard
from bot.server.knowledge import Panels, snapshot_route
from bot.server.lan import add_trust_routes, lan_gate
from bot.server.pairing import add_pairing_routes
from bot.server.shared import SHARED, Engines, ServerShared, SessionOpener, engine_slots
from bot.server.tls import machine_names
from bot.voice.prepared import PreparedVoice
from bot.voice.session import MetricsSink
from config import Settings
from memory.approvals import Approvals
from models.base import LLM

if TYPE_CHECKING:
    from bot.runtime import Runtime
    from bot.turn.session import Session

WEB_DIR = Path(__file__).with_name("web")


def runtime_sessions(runtime: Runtime) -> SessionOpener:
    """Sessions from the shared `Runtime`, tagged as voice sessions."""

    async def open_session(resume: str | None) -> tuple[str, Session]:
        meta: dict[str, Any] = {"front_end": "voice"}
        if resume:
            meta["resumed_from"] = resume
        # The voice loop stores its own end-to-end timings (speech, model, synthesis).
        session = runtime.open_session(meta=meta, record_metrics=False)
        session.warm_up()  # while the connection is set up and the user starts to speak
        return str(session.id), session

    return open_session


def thread_kinds() -> dict[str, int]:
    """Python threads by kind: a pool worker is named after its pool (prefix, "_", number)."""
    kinds: Counter[str] = Counter()
    for t in threading.enumerate():
        head, _, tail = t.name.rpartition("_")
        kinds[head if head and tail.isdigit() else t.name] += 1
    return dict(kinds)


def cache_bytes(llm: LLM | None) -> int:
    return llm.cache_bytes if llm is not None else 0


async def index(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(WEB_DIR / "index.html", headers={"Cache-Control": "no-cache"})


async def healthz(request: web.Request) -> web.Response:
    shared = request.app[SHARED]
    return web.json_response(
        {
            "ok": not shared.closing,
            "sessions": len(shared.connections),
            "max_sessions": shared.max_sessions,
            "backend": shared.settings.models.llm_backend,
            "engine_slots": engine_slots(shared.loaded_llm()),
            "head_kept": shared.head_kept(),
            # The calendar URL's last refresh (None: no URL set, or not fetched yet); the page
            # shows a failed one as a warning.
            "calendar": _feed_status(shared),
            # Still being made ready after start-up (the page says "warming up" until empty).
            "warming": shared.warming(),
            # What must not grow over a long run (the reliability soak reads these).
            "tasks": len(asyncio.all_tasks()),
            "peers": len(shared.connections) + shared.pending,
            "threads": thread_kinds(),
            "heap_mb": heap_mb(),
            # Saved model states: bounded by models.llm_checkpoints, and the part of resident
            # memory that grows with the conversation by design.
            "llm_cache_mb": round(cache_bytes(shared.loaded_llm()) / 2**20, 1),
        }
    )


def _feed_status(shared: ServerShared) -> dict[str, object] | None:
    feed = shared.calendar_feed
    return asdict(feed.status) if feed is not None and feed.status is not None else None


def create_app(
    settings: Settings,
    engines: Engines,
    open_session: SessionOpener,
    *,
    metrics: MetricsSink | None = None,
    approvals: Approvals | None = None,
) -> web.Application:
    """The aiohttp application; `check_bind(settings)` before listening on a real socket."""
    shared = ServerShared(settings, engines, open_session, metrics, approvals)
    shared.voice = PreparedVoice(engines.tts)
    lan = settings.server.lan  # `serve --lan`: the machine's names too, and a credential
    rule = HostRule(settings.server.allowed_hosts, machine_names() if lan else None)
    middlewares = [guard(rule, lambda: settings.server.max_body_bytes)]
    if lan:
        middlewares.append(lan_gate(settings.server.token))
    # aiohttp enforces the cap while reading the body, whatever Content-Length claims.
    app = web.Application(
        client_max_size=settings.server.max_body_bytes,
        middlewares=middlewares,
        handler_args=handler_args(),
    )
    app[SHARED] = shared
    app.on_response_prepare.append(add_security_headers)
    app.router.add_get("/", index)
    app.router.add_get("/healthz", healthz)
    app.router.add_post("/api/offer", offer)
    app.router.add_static("/static/", WEB_DIR, follow_symlinks=False)
    add_trust_routes(app, settings, WEB_DIR / "trust.html")
    app.on_shutdown.append(shutdown)
    return app


def runtime_app(settings: Settings, engines: Engines, runtime: Runtime) -> web.Application:
    """The application over a shared `Runtime`: its sessions, metrics and approvals, and
    the knowledge panel (`bot.server.knowledge`) on every page."""
    app = create_app(
        settings,
        engines,
        runtime_sessions(runtime),
        metrics=runtime.store.metrics,
        approvals=runtime.store.approvals,
    )
    app[SHARED].on_page.append(Panels(runtime.store, runtime.settings, runtime.registry))
    # Never loads the model itself: `serve` loads it before listening; until then, config.
    app[SHARED].loaded_llm = lambda: runtime.llm if runtime.has_llm else None
    app[SHARED].head_kept = lambda: runtime.head_kept
    _run_in_background(app, runtime)
    token = settings.server.token
    app.router.add_get(
        "/api/knowledge", snapshot_route(runtime.store, lambda r: authorized(r, token))
    )
    # Phones and laptops pair with a one-time code and then carry their own token.
    add_pairing_routes(app, app[SHARED].pairing, runtime.store.devices, settings)
    return app


def _run_in_background(app: web.Application, runtime: Runtime) -> None:
    """Reminders fire while the server runs, whether or not a page is open; the calendar at
    `[calendar] url` is refreshed while it runs too."""
    from bot.calendar_feed import CalendarFeed

    feed = CalendarFeed(runtime.settings, runtime.store, calendar=runtime.calendar)
    app[SHARED].calendar_feed = feed

    async def start(_: web.Application) -> None:
        runtime.reminders.start()
        feed.start()

    async def stop(_: web.Application) -> None:
        await runtime.reminders.stop()
        await feed.stop()

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
