"""What each serving engine's HTTP API looks like, in one place: how to recognise it, what it
reports about its model, how it tokenizes, and where its figures for a call are.

Three engines speak the same `/v1/completions` with a raw prompt string, and differ in the rest:

| | llama.cpp `llama-server` | vLLM | llama-cpp-python's server |
|---|---|---|---|
| recognised by | `GET /props` | `max_model_len` in `GET /v1/models` | `POST /extras/tokenize` |
| context length | `/props` `n_ctx` (per slot) | `max_model_len` | not reported |
| chat template | `/props` `chat_template` | none (a file in config) | none (the local GGUF) |
| tokenize | `POST /tokenize` | `POST /tokenize` | `POST /extras/tokenize` (adds BOS) |
| figures of a call | `timings.prompt_n`, `cache_n` | `usage...cached_tokens` if enabled | none |
| grammar | `grammar` (GBNF) | `structured_outputs.grammar` | `grammar` (GBNF) |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import httpx

EngineKind = Literal["llama.cpp", "vllm", "llama-cpp-python"]


class ServerError(RuntimeError):
    """The server could not be reached or answered with an error; the text says which."""


@dataclass
class ServerInfo:
    """What the server says about itself; None where it does not say."""

    kind: EngineKind
    model: str
    n_ctx: int | None = None
    template: str | None = None
    bos_token: str = ""
    eos_token: str = ""
    slots: int | None = None


def client_args(url: str, key: str, timeout_s: float) -> dict[str, Any]:
    """How every request to the engine is made (the model itself and `doctor` alike)."""
    return {
        "base_url": url.rstrip("/"),
        "headers": {"Authorization": f"Bearer {key}"} if key else {},
        "timeout": httpx.Timeout(timeout_s, connect=5.0),
        # A local engine must not be sent through a proxy from the environment.
        "trust_env": False,
    }


def _json(resp: httpx.Response, what: str) -> Any:
    if resp.status_code >= 400:
        raise ServerError(f"{what} answered HTTP {resp.status_code}: {error_text(resp.text)}")
    try:
        return resp.json()
    except ValueError as exc:
        raise ServerError(
            f"{what} answered something that is not JSON: {resp.text[:200]!r}"
        ) from exc


def error_text(body: str) -> str:
    """The message inside an engine's error body (all three nest it differently)."""
    import json

    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:300]
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data))
        if isinstance(err, dict):
            err = err.get("message", err)
        return str(err)[:300]
    return str(data)[:300]


def probe(client: httpx.Client, model: str) -> ServerInfo:
    """Recognise the engine behind `client` and read what it reports."""
    props = client.get("/props")
    if props.status_code == 200 and "default_generation_settings" in props.text:
        data = props.json()
        settings = data.get("default_generation_settings") or {}
        name = model or str(data.get("model_alias") or data.get("model_path") or "")
        return ServerInfo(
            "llama.cpp",
            name,
            n_ctx=_int(settings.get("n_ctx")),
            template=data.get("chat_template") or None,
            bos_token=str(data.get("bos_token") or ""),
            eos_token=str(data.get("eos_token") or ""),
            slots=_int(data.get("total_slots")),
        )
    listing = _json(client.get("/v1/models"), "GET /v1/models")
    entries = [e for e in listing.get("data", []) if isinstance(e, dict)]
    if not entries:
        raise ServerError("GET /v1/models lists no model")
    chosen = next((e for e in entries if e.get("id") == model), None) if model else entries[0]
    if chosen is None:
        names = ", ".join(str(e.get("id")) for e in entries)
        raise ServerError(f"the server does not serve a model named {model!r} (it has: {names})")
    name = str(chosen.get("id"))
    if "max_model_len" in chosen:
        return ServerInfo("vllm", name, n_ctx=_int(chosen.get("max_model_len")))
    check = client.post("/extras/tokenize", json={"input": "ok", "model": name})
    if check.status_code == 200:
        # It does not say its context length; a prompt past it gets a clear error per call.
        return ServerInfo("llama-cpp-python", name)
    raise ServerError(
        "the server speaks /v1/models but is neither llama.cpp's llama-server, vLLM nor "
        "llama-cpp-python's server, so its tokenizer cannot be reached"
    )


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and value > 0 else None


def tokenize_request(info: ServerInfo, text: str) -> tuple[str, dict[str, Any]]:
    """The endpoint and body that tokenize `text` with special tokens parsed, no BOS added."""
    if info.kind == "llama.cpp":
        return "/tokenize", {"content": text, "add_special": False, "parse_special": True}
    if info.kind == "vllm":
        return "/tokenize", {"model": info.model, "prompt": text, "add_special_tokens": False}
    return "/extras/tokenize", {"model": info.model, "input": text}


def detokenize_request(info: ServerInfo, tokens: list[int]) -> tuple[str, dict[str, Any]]:
    path = "/extras/detokenize" if info.kind == "llama-cpp-python" else "/detokenize"
    return path, {"model": info.model, "tokens": tokens}


def detokenized(body: dict[str, Any]) -> str:
    return str(body.get("content", body.get("prompt", body.get("text", ""))))


def completion_body(
    info: ServerInfo,
    prompt: str,
    *,
    max_tokens: int,
    stop: list[str],
    grammar: str | None,
    sampling: dict[str, Any],
) -> dict[str, Any]:
    """A streaming `/v1/completions` request for a raw prompt string."""
    body: dict[str, Any] = {
        "model": info.model,
        "prompt": prompt,
        "max_tokens": max_tokens,
        "stream": True,
        **sampling,
    }
    if stop:
        body["stop"] = stop
    if info.kind == "vllm":
        # The last chunk then carries usage, with cached tokens where the server counts them.
        body["stream_options"] = {"include_usage": True}
        if grammar:
            body["structured_outputs"] = {"grammar": grammar}
    else:
        if grammar:
            body["grammar"] = grammar
        if info.kind == "llama.cpp":
            body["cache_prompt"] = True
    return body


@dataclass
class CallFigures:
    """What the engine said about one call; None where it said nothing."""

    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    evaluated_tokens: int | None = None
    generated_tokens: int | None = None


def read_figures(chunk: dict[str, Any], figures: CallFigures) -> None:
    """Take the figures from a streamed chunk (the last one carries them, if any does)."""
    timings = chunk.get("timings")
    if isinstance(timings, dict) and "prompt_n" in timings:
        cached = int(timings.get("cache_n", 0))
        evaluated = int(timings["prompt_n"])
        figures.cached_tokens = cached
        figures.evaluated_tokens = evaluated
        figures.prompt_tokens = cached + evaluated
        if "predicted_n" in timings:
            figures.generated_tokens = int(timings["predicted_n"])
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        if "prompt_tokens" in usage:
            figures.prompt_tokens = int(usage["prompt_tokens"])
        if "completion_tokens" in usage:
            figures.generated_tokens = int(usage["completion_tokens"])
        details = usage.get("prompt_tokens_details")
        if (
            figures.cached_tokens is None
            and isinstance(details, dict)
            and details.get("cached_tokens") is not None
        ):
            figures.cached_tokens = int(details["cached_tokens"])
            figures.evaluated_tokens = int(usage.get("prompt_tokens", 0)) - figures.cached_tokens


def chunk_text(chunk: dict[str, Any]) -> str:
    choices = chunk.get("choices") or []
    if choices and isinstance(choices[0], dict):
        return str(choices[0].get("text") or "")
    return ""


def stream_error(chunk: dict[str, Any]) -> str | None:
    """An error the server reports inside the stream (after it has sent HTTP 200)."""
    err = chunk.get("error")
    if err is None:
        return None
    return str(err.get("message", err)) if isinstance(err, dict) else str(err)
