"""`doctor`'s check of a chat model on a serving engine (`models.llm_backend = "server"`).

The same shape as the in-process check (a load, a short real run, timed), plus what only a
server can get wrong: whether it answers at all, which engine and model it is, its context
length against Annie's window, whether a local vocabulary counts as the server does, how many
requests it runs at once against `server.max_sessions`, and whether it reports what it reused
from its cache. There is no memory estimate: the weights and cache live on the server.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from config.settings import Settings
from models.base import CallStats, ModelError
from models.served_api import ServerError, ServerInfo, client_args, probe

FIX = (
    'Fix: start the server (README: "Serving engines"), correct models.llm_url, or set '
    'models.llm_backend = "local"'
)


def _probe(settings: Settings) -> ServerInfo:
    """What the server says about itself, read the way `ServedLLM` reads it."""
    cfg = settings.models
    with httpx.Client(**client_args(cfg.llm_url, cfg.llm_key, cfg.llm_timeout_s)) as http:
        return probe(http, cfg.llm_model)


def check_server(settings: Settings) -> dict[str, Any]:
    """The served LLM's entry of the report; never raises."""
    url = settings.models.llm_url.rstrip("/")
    entry: dict[str, Any] = {"backend": "server", "url": url, "path": None, "ok": False}
    if not url:
        entry["error"] = (
            'models.llm_backend is "server" but models.llm_url is empty. Fix: set it to the '
            "engine's address, e.g. http://127.0.0.1:8080"
        )
        return entry
    t0 = time.perf_counter()
    try:
        info = _probe(settings)
    except httpx.HTTPError as exc:
        entry["error"] = (
            f"cannot reach the model server at {url} ({type(exc).__name__}: {exc}). {FIX}"
        )
        return entry
    except ServerError as exc:
        entry["error"] = (
            f"the model server at {url} answered, but {exc}. Fix: check models.llm_url and "
            "models.llm_model against what the server runs"
        )
        return entry
    window = settings.context.window
    entry.update(
        engine=info.kind,
        model=info.model,
        context={"server": info.n_ctx, "window": window},
    )
    if info.n_ctx is not None and info.n_ctx < window:
        entry["error"] = (
            f"the server's context is {info.n_ctx:,} tokens, less than Annie's window of "
            f"{window:,}. Fix: start it with a larger context (llama-server -c, vLLM "
            "--max-model-len, llama_cpp.server --n_ctx), or lower context.window"
        )
        return entry
    try:
        entry.update(_load_and_run(settings, t0))
        entry["ok"] = True
    except Exception as exc:  # the report must cover every role, whatever breaks
        entry["error"] = f"{type(exc).__name__}: {exc}"
    return entry


def _load_and_run(settings: Settings, t0: float) -> dict[str, Any]:
    """Load the served model (template, vocabulary), compare tokenizers, run a short call."""
    from bot.server.shared import engine_slots, session_limit
    from models.served import AGREEMENT_SAMPLE, ServedLLM
    from models.tokenizer import local_vocabulary

    local = local_vocabulary(settings)  # never downloads
    llm = ServedLLM(settings, local=local)
    try:
        load_ms = (time.perf_counter() - t0) * 1000
        served = llm.server_tokenize(AGREEMENT_SAMPLE)
        tokenizer: dict[str, Any] = {"sample_tokens": len(served), "local": None, "agrees": None}
        if local is not None:
            tokenizer.update(local=local.name, agrees=local.tokenize(AGREEMENT_SAMPLE) == served)
        tokenizer["counts_with"] = "local vocabulary" if llm.counts_locally else "server tokenizer"
        prompt = llm.render([{"role": "user", "content": "Say hello in three words."}])

        async def go() -> tuple[str, CallStats]:
            text = "".join([p async for p in llm.stream(prompt, max_tokens=8)])
            # Read inside the task: a served model's figures are per task (sessions run at once).
            return text, llm.last_stats

        t1 = time.perf_counter()
        text, stats = asyncio.run(go())
        if not text and not stats.generated_tokens:
            raise ModelError(f"the model server at {llm.url} generated nothing")
        return {
            "load_ms": round(load_ms),
            "smoke_ms": round((time.perf_counter() - t1) * 1000),
            "window": llm.n_ctx,
            "template": llm.template.name,
            "tokenizer": tokenizer,
            "sessions": {
                "engine_slots": engine_slots(llm),
                "max_sessions": settings.server.max_sessions,
                "allowed": session_limit(settings, llm),
            },
            # Whether the engine says what it reused from its cache for a call (the smoke
            # call is one); without, /context shows reused and evaluated as unknown.
            "cache_figures": stats.cache_reported,
            "prompt_tokens": stats.prompt_tokens,
            "generated_tokens": stats.generated_tokens,
            "sample": text.strip()[:60],
        }
    finally:
        llm.close()


def print_server(entry: dict[str, Any]) -> None:
    """The served LLM's lines of the text report (the caller printed the heading)."""
    print(f"  server: {entry['url']}")
    if "engine" not in entry:
        return
    print(f"  engine: {entry['engine']}, model {entry['model']!r}")
    ctx = entry["context"]
    if ctx["server"] is None:
        print(
            f"  context: not reported by {entry['engine']}; Annie's window {ctx['window']:,} "
            "(a prompt past the server's context fails with its error)"
        )
    else:
        print(
            f"  context: {ctx['server']:,} tokens on the server; Annie's window {ctx['window']:,}"
        )
    if "load_ms" not in entry:
        return
    print(f"  load:   {entry['load_ms']} ms; smoke test {entry['smoke_ms']} ms")
    print(f"  template: {entry['template']}")
    tok = entry["tokenizer"]
    if tok["local"] is None:
        agreement = "no local GGUF: server tokenizer used"
    elif tok["agrees"]:
        agreement = f"{tok['local']} agrees with the server; counted locally"
    else:
        agreement = (
            f"{tok['local']} DISAGREES with the server; server tokenizer used (if the template "
            "also comes from that GGUF, point models.llm_path at the served model's GGUF)"
        )
    print(f"  tokenizer: {agreement} (sample of {tok['sample_tokens']} tokens)")
    s = entry["sessions"]
    slots = (
        f"the engine runs {s['engine_slots']} requests at once"
        if s["engine_slots"]
        else "the engine does not say how many requests it runs at once"
    )
    print(f"  sessions: {slots}; server.max_sessions {s['max_sessions']}: {s['allowed']} allowed")
    print(
        "  cache:  "
        + (
            "the engine reports reused and evaluated prompt tokens per call"
            if entry["cache_figures"]
            else "the engine reports no cache figures: reused/evaluated are unknown (shown as ?)"
        )
    )
    print(
        f"  prompt_tokens: {entry['prompt_tokens']}, generated_tokens: "
        f"{entry['generated_tokens']}, sample: {entry['sample']}"
    )
