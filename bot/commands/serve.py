"""`python -m bot serve`: load the engines once and serve the voice page (what ./start.sh runs).

With `--lan` (or `server.lan`) it serves loopback and every network address of the machine
on one port, over HTTPS only (`bot.server.lan`, `bot.server.tls`), and prints each address.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import ssl
import sys
import time
from collections.abc import Callable, Coroutine
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import web

    from bot.runtime import Runtime
    from config import Settings

HELP = "serve the voice page and its WebRTC endpoint (default http://127.0.0.1:8765)"


def warm_lookups(runtime: Runtime) -> None:
    """Read the state path's place table and the user's calendar now."""
    from context import clocks
    from memory.calendar import CalendarError

    clocks.warm()
    calendar = runtime.calendar
    if calendar is not None:
        now = datetime.now().astimezone()
        try:
            calendar.between(now, now + timedelta(days=1))
        except CalendarError as exc:
            # Answers that need it say they cannot read it; `doctor` says why.
            print(f"warning: {exc}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="address to listen on (default: server.host, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (default: server.port, 8765)")
    parser.add_argument(
        "--lan",
        action="store_true",
        help="also serve this machine's home-network addresses, over HTTPS with Annie's own "
        "certificate (devices need pairing or the token; the page's /trust says how to trust it)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="log WebRTC details too")


def run(args: argparse.Namespace) -> int:
    from aiohttp import web

    from bot.runtime import Runtime
    from bot.server.allocator import return_large_blocks
    from bot.server.app import SHARED, Engines, runtime_app
    from bot.server.executor import install
    from bot.server.guard import check_bind
    from bot.voice.prepared import FIXED_PHRASES
    from config import load_settings
    from models import (
        ModelError,
        load_end_of_turn_detector,
        load_end_of_turn_words,
        load_stt,
        load_tts,
        load_vad,
    )

    server: dict[str, Any] = {}
    if args.host:
        server["host"] = args.host
    if args.port is not None:
        server["port"] = args.port
    if args.lan:
        server["lan"] = True
    settings = load_settings(server=server) if server else load_settings()
    check_bind(settings)  # before loading anything: a refused bind should fail fast
    addresses: list[str] = []
    context: ssl.SSLContext | None = None
    if settings.server.lan:  # the certificate too: a bad one of the user's is an error now
        from bot.server import tls

        addresses = tls.lan_addresses()
        context = tls.server_context(settings, tls.identity(settings, addresses))
    return_large_blocks()  # before the engines allocate: see bot.server.allocator

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if not args.verbose:
        for noisy in (
            "aioice",
            "aiortc",
            "aiohttp.access",
            "faster_whisper",
            "sentence_transformers",
        ):
            logging.getLogger(noisy).setLevel(logging.WARNING)

    t0 = time.perf_counter()
    print("loading speech recognition, speech synthesis and voice activity detection…")
    engines = Engines(stt=load_stt(settings), tts=load_tts(settings), vad=load_vad(settings))
    if settings.vad.turn_detection == "semantic":
        try:
            engines.end_of_turn = load_end_of_turn_detector(settings)
        except ModelError as exc:
            # Still a working assistant: turns end on the fixed silence window instead.
            print(f"warning: {exc}\nturns end after {settings.vad.silence_ms} ms of silence")
    if engines.end_of_turn is not None and settings.vad.turn_words:
        try:
            engines.words = load_end_of_turn_words(settings)
        except (ModelError, ImportError) as exc:
            # The audio and the word rules still decide; only the words' model is missing.
            print(f"warning: {exc}\nturns are judged from the audio and the word rules only")
    runtime = Runtime(settings)
    print("loading the language model…")
    llm = runtime.llm  # loaded now, so the first turn does not pay for it
    print("loading the embedding model…")
    if runtime.embedder is None:  # loaded now too: recall and search_memory need it
        print("no embedding model: recall is off and search_memory is lexical only")
    else:
        runtime.intents.warm()  # the state path's classifier, ready before the first turn
    # The place table for "what time is it in Dallas" (two seconds to read) and the calendar's
    # recurrences (seconds for a large one): read before the first turn, never during one.
    warm_lookups(runtime)
    print(f"engines ready in {time.perf_counter() - t0:.1f}s (model: {llm.label})")

    app = runtime_app(settings, engines, runtime)

    head: list[asyncio.Task[Any]] = []

    async def keep_head(_: web.Application) -> None:
        # The head every session shares, evaluated once while nobody talks yet; a user who
        # speaks first takes the model (`Runtime.head_stop`) and a session's warm-up goes on.
        if settings.context.warm_up:
            task = asyncio.create_task(runtime.keep_head(runtime.head_stop))
            head.append(task)
            app[SHARED].head_warming = lambda: not task.done()
        voice = app[SHARED].voice
        if voice is not None:  # the phrases said often, synthesized before anyone asks
            voice.prepare(FIXED_PHRASES, kind="fixed")

    async def close_runtime(_: web.Application) -> None:
        runtime.head_stop.set()
        for task in head:
            with contextlib.suppress(Exception):
                await task
        await runtime.close()

    async def start_pool(_: web.Application) -> None:
        install(
            asyncio.get_running_loop()
        )  # a thread count that does not grow: bot.server.executor

    app.on_startup.append(start_pool)
    app.on_startup.append(keep_head)
    app.on_cleanup.append(close_runtime)
    if context is not None:
        return _serve_https(app, settings, addresses, context, runtime.close)
    host, port = settings.server.host, settings.server.port
    shown = "localhost" if host in ("127.0.0.1", "::1") else host
    url = f"http://{shown}:{port}/"
    if settings.server.token:
        url += f"?token={settings.server.token}"
    print(f"Annie is listening on {url}  (Ctrl+C to stop)")
    try:
        web.run_app(app, host=host, port=port, print=None, handle_signals=True)
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        asyncio.run(runtime.close())
        return 2
    return 0


def _serve_https(
    app: web.Application,
    settings: Settings,
    addresses: list[str],
    context: ssl.SSLContext,
    close: Callable[[], Coroutine[Any, Any, None]],
) -> int:
    """Loopback and `addresses`, one HTTPS site each on one port, until Ctrl+C."""
    from aiohttp import web

    from bot.server.lan import start_sites

    host, port = settings.server.host, settings.server.port

    async def main() -> None:
        # Ctrl+C or SIGTERM ends the wait, so the app closes its connections while aiortc's
        # own tasks still run: cancelled all at once from outside (how asyncio.run ends), an
        # open peer connection's close would wait for its cancelled transports forever.
        # A second Ctrl+C, with the handlers removed, stops it outright.
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM)

        def stopping() -> None:
            stop.set()
            for sig in signals:
                loop.remove_signal_handler(sig)

        for sig in signals:
            with contextlib.suppress(NotImplementedError):  # no such handlers on Windows
                loop.add_signal_handler(sig, stopping)
        runner = web.AppRunner(app, handle_signals=False)
        await runner.setup()
        try:
            sites, skipped = await start_sites(runner, [host, *addresses], port, context)
            _print_https(settings, sites[0].port, [s.name for s in sites[1:]], skipped)
            await stop.wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    except (web.GracefulExit, KeyboardInterrupt):
        pass
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        asyncio.run(close())
        return 2
    return 0


def _print_https(settings: Settings, port: int, lan: list[str], skipped: list[str]) -> None:
    from bot.server import certs, tls

    token = settings.server.token
    own = f"https://localhost:{port}/" + (f"?token={token}" if token else "")
    print(f"Annie is listening on {own}  (this machine; Ctrl+C to stop)")
    for why in skipped:
        print(f"warning: not listening on {why}")
    if not lan:
        print("no network address found on this machine: HTTPS on loopback only")
        return
    names = [f"https://{n}:{port}/" for n in tls.machine_names() if n.endswith(".local")]
    print("  and on the home network: " + ", ".join(lan + names))
    pem = tls.authority_pem(settings)
    if pem is None:
        print(f"  HTTPS with your own certificate ({settings.server.tls_cert})")
    else:
        print(f"  HTTPS with Annie's own authority, SHA-256 {certs.fingerprint(pem)}")
        print(f"  trust it once per device: {lan[0]}trust explains how")
    print("  a device on the network needs pairing (or the token) before it can talk")
