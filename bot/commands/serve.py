"""`python -m bot serve`: load the engines once and serve the voice page (what ./start.sh runs)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import time
from typing import Any

HELP = "serve the voice page and its WebRTC endpoint (default http://127.0.0.1:8765)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="address to listen on (default: server.host, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (default: server.port, 8765)")
    parser.add_argument("--verbose", "-v", action="store_true", help="log WebRTC details too")


def run(args: argparse.Namespace) -> int:
    from aiohttp import web

    from bot.runtime import Runtime
    from bot.server.allocator import return_large_blocks
    from bot.server.app import STATE, Engines, runtime_app
    from bot.server.executor import install
    from bot.server.guard import check_bind
    from bot.voice.prepared import FIXED_PHRASES
    from config import load_settings
    from models import ModelError, load_stt, load_tts, load_turn_detector, load_vad

    server: dict[str, Any] = {}
    if args.host:
        server["host"] = args.host
    if args.port is not None:
        server["port"] = args.port
    settings = load_settings(server=server) if server else load_settings()
    check_bind(settings)  # before loading anything: a refused bind should fail fast
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
            engines.turn = load_turn_detector(settings)
        except ModelError as exc:
            # Still a working assistant: turns end on the fixed silence window instead.
            print(f"warning: {exc}\nturns end after {settings.vad.silence_ms} ms of silence")
    runtime = Runtime(settings)
    print("loading the language model…")
    llm = runtime.llm  # loaded now, so the first turn does not pay for it
    print("loading the embedding model…")
    if runtime.embedder is None:  # loaded now too: recall and search_memory need it
        print("no embedding model: recall is off and search_memory is lexical only")
    else:
        runtime.intents.warm()  # the state path's classifier, ready before the first turn
    print(f"engines ready in {time.perf_counter() - t0:.1f}s (model: {llm.label})")

    app = runtime_app(settings, engines, runtime)

    head: list[asyncio.Task[Any]] = []

    async def keep_head(_: web.Application) -> None:
        # The head every session shares, evaluated once while nobody talks yet; a user who
        # speaks first takes the model (`Runtime.head_stop`) and a session's warm-up goes on.
        if settings.context.warm_up:
            task = asyncio.create_task(runtime.keep_head(runtime.head_stop))
            head.append(task)
            app[STATE].head_warming = lambda: not task.done()
        voice = app[STATE].voice
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
