"""The chat model on a serving engine (llama.cpp's llama-server, vLLM, llama-cpp-python's
server), reached over HTTP, with Annie's accounting kept exact.

Annie renders every prompt itself with the served model's own template (which one:
`models.served_template`) and sends the raw string to `/v1/completions`, so the prompt stays
append-only and the engine's prefix cache sees the same bytes turn after turn. Counts come
from the model's vocabulary: a local vocabulary-only load when it agrees with the server on a
sample, else the server's tokenizer. Each call's evaluated and cached prompt tokens are the
engine's own figures; an engine that reports none leaves them marked unknown
(`CallStats.cache_reported`), never guessed.

There is no queue here: sessions stream concurrently and the engine schedules them. Cancel
closes the HTTP stream; each of the three engines stops generating when its client goes
(llama-server cancels the slot's task, vLLM aborts the request, llama-cpp-python stops after
the token in flight).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from config import Settings
from models.base import CallStats, ModelError, ModelUnavailable, Tokenizer
from models.served_api import (
    CallFigures,
    ServerError,
    chunk_text,
    client_args,
    completion_body,
    detokenize_request,
    detokenized,
    error_text,
    probe,
    read_figures,
    stream_error,
    tokenize_request,
)
from models.served_template import served_template
from models.templated import TemplatedLLM

# A sample with specials, digits, accents and emoji: vocabularies that differ disagree here.
AGREEMENT_SAMPLE = (
    "<|im_start|>user\nRemind me at 07:45 to call Zoë about the café — order #12345 🙂\n"
    "<|im_end|>\n"
)
_FIX = 'Fix: start the server (README: "Serving engines"), or set models.llm_backend = "local"'


class EngineStalled(ModelUnavailable):
    """The engine sent nothing but keep-alives (or nothing at all) for `llm_timeout_s`."""


class ServedLLM(TemplatedLLM):
    """A chat model behind an OpenAI-style completions endpoint."""

    backend = "server"

    def __init__(
        self, settings: Settings, n_ctx: int | None = None, local: Tokenizer | None = None
    ) -> None:
        cfg = settings.models
        if not cfg.llm_url:
            raise ModelError(
                'models.llm_backend is "server" but models.llm_url is empty. Fix: set it to '
                "the engine's address, e.g. http://127.0.0.1:8080"
            )
        self.settings = settings
        self.url = cfg.llm_url.rstrip("/")
        self.path = Path(self.url)
        self._client_args = client_args(self.url, cfg.llm_key, cfg.llm_timeout_s)
        self._http = httpx.Client(**self._client_args)
        try:
            self.info = probe(self._http, cfg.llm_model)
        except (httpx.HTTPError, ServerError) as exc:
            self._http.close()
            raise ModelError(
                f"the model server at {self.url} cannot be used: {exc}. {_FIX}"
            ) from exc
        window = int(n_ctx or settings.context.window)
        if self.info.n_ctx is not None and self.info.n_ctx < window:
            self._http.close()
            # llama-server divides -c among its -np slots; one session uses one slot.
            per = " per slot" if self.info.kind == "llama.cpp" else ""
            raise ModelError(
                f"the model server at {self.url} serves {self.info.model} with a context of "
                f"{self.info.n_ctx:,} tokens{per}, less than Annie's window of {window:,}. Fix: "
                "start it with a larger context (llama-server -c window x slots, vLLM "
                "--max-model-len, llama_cpp.server --n_ctx), or lower context.window"
            )
        self.n_ctx = window
        # A local vocabulary that tokenizes differently is another model (the packaged
        # fallback, say): neither its counts nor its template may stand in for the server's.
        self._local = local if local is not None and self._agrees(local) else None
        self.template = served_template(self.info, self.url, cfg.llm_template, self._local)
        self._init_template()
        self._counts: OrderedDict[str, list[int]] = OrderedDict()
        self._stats: contextvars.ContextVar[CallStats | None] = contextvars.ContextVar(
            f"served_stats_{id(self)}", default=None
        )

    # -- what the server is --------------------------------------------------------------

    @property
    def parallel(self) -> bool:
        return True

    @property
    def max_parallel(self) -> int | None:
        """Requests the engine runs at once, where it says (llama-server's slots)."""
        return self.info.slots

    @property
    def kind(self) -> str:
        return self.info.kind

    @property
    def label(self) -> str:
        return f"{self.info.model} on {self.info.kind} at {self.url}"

    @property
    def counts_locally(self) -> bool:
        """True when counts come from a local vocabulary that agrees with the server."""
        return self._local is not None

    def _agrees(self, local: Tokenizer) -> bool:
        return local.exact and local.tokenize(AGREEMENT_SAMPLE) == self.server_tokenize(
            AGREEMENT_SAMPLE
        )

    # -- text ----------------------------------------------------------------------------

    def server_tokenize(self, text: str) -> list[int]:
        """The served model's own token ids for `text` (specials parsed, no BOS)."""
        path, body = tokenize_request(self.info, text)
        try:
            resp = self._http.post(path, json=body)
        except httpx.HTTPError as exc:
            raise ModelError(f"the model server at {self.url} did not tokenize: {exc}") from exc
        if resp.status_code >= 400:
            raise ModelError(f"the model server's tokenizer failed: {error_text(resp.text)}")
        tokens = [int(t) for t in resp.json().get("tokens", [])]
        if self.info.kind == "llama-cpp-python":
            tokens = tokens[len(self._bos_prefix()) :]
        return tokens

    def _bos_prefix(self) -> list[int]:
        """What llama-cpp-python's tokenize endpoint puts before any text (its model's BOS)."""
        if not hasattr(self, "_prefix"):
            path, body = tokenize_request(self.info, "")
            self._prefix: list[int] = [
                int(t) for t in self._http.post(path, json=body).json()["tokens"]
            ]
        return self._prefix

    def tokenize(self, text: str) -> list[int]:
        if self._local is not None:
            return self._local.tokenize(text)
        hit = self._counts.get(text)
        if hit is None:
            hit = self.server_tokenize(text)
            self._counts[text] = hit
            if len(self._counts) > 4096:
                self._counts.popitem(last=False)
        else:
            self._counts.move_to_end(text)
        return list(hit)

    def detokenize(self, tokens: Sequence[int]) -> str:
        if self._local is not None:
            return self._local.detokenize(tokens)
        path, body = detokenize_request(self.info, list(tokens))
        return detokenized(self._http.post(path, json=body).json())

    # -- calls ---------------------------------------------------------------------------

    @property
    def last_stats(self) -> CallStats:
        """The figures of the last call made from the calling task (sessions run at once)."""
        return self._stats.get() or CallStats()

    def _sampling(self) -> dict[str, Any]:
        cfg = self.settings.models
        return {
            "temperature": max(0.0, cfg.llm_temperature),
            "top_p": cfg.llm_top_p,
            "top_k": cfg.llm_top_k,
            "seed": cfg.llm_seed,
        }

    async def stream(
        self,
        prompt: str,
        *,
        max_tokens: int = 512,
        stop: Sequence[str] = (),
        grammar: str | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AsyncIterator[str]:
        t0 = time.perf_counter()
        stats = CallStats()
        self._stats.set(stats)
        figures = CallFigures()
        body = completion_body(
            self.info,
            prompt,
            max_tokens=max_tokens,
            stop=[s for s in stop if s],
            grammar=grammar,
            sampling=self._sampling(),
        )
        queue: asyncio.Queue[str | BaseException | None] = asyncio.Queue()
        reader = asyncio.ensure_future(self._read(body, figures, queue))
        retried = False
        stopper = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                waits: set[asyncio.Future[Any]] = {getter}
                if stopper is not None:
                    waits.add(stopper)
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                if stopper is not None and stopper.done():
                    getter.cancel()
                    stats.cancelled = True
                    break
                item = getter.result()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    fresh = not stats.generated_tokens and not retried
                    if isinstance(item, EngineStalled) and fresh:
                        # Nothing was said yet: closing the stalled stream frees the engine's
                        # slot, and one fresh request usually goes through.
                        retried = True
                        reader.cancel()
                        with contextlib.suppress(asyncio.CancelledError, Exception):
                            await reader
                        queue = asyncio.Queue()
                        reader = asyncio.ensure_future(self._read(body, figures, queue))
                        continue
                    raise item
                if not stats.first_token_s:
                    stats.first_token_s = time.perf_counter() - t0
                stats.generated_tokens += 1
                yield item
        finally:
            # Leaving (done, cancelled or abandoned) closes the connection: the engine stops.
            reader.cancel()
            if stopper is not None:
                stopper.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            self._finish(stats, figures, prompt, t0)

    async def _read(
        self,
        body: dict[str, Any],
        figures: CallFigures,
        queue: asyncio.Queue[str | BaseException | None],
    ) -> None:
        try:
            async with (
                httpx.AsyncClient(**self._client_args) as client,
                client.stream("POST", "/v1/completions", json=body) as resp,
            ):
                if resp.status_code >= 400:
                    text = (await resp.aread()).decode("utf-8", "replace")
                    # A 5xx is the engine failing; a 4xx is this request (too long, say).
                    kind = ModelUnavailable if resp.status_code >= 500 else ModelError
                    raise kind(
                        f"the model server answered HTTP {resp.status_code}: {error_text(text)}"
                    )
                limit = self.settings.models.llm_timeout_s
                last_data = time.monotonic()
                async for line in resp.aiter_lines():
                    # Keep-alive pings (": ping") reset the socket's read timeout, so an engine
                    # stuck mid-stream would hold the turn forever: count only data.
                    if not line.startswith("data:"):
                        if time.monotonic() - last_data > limit:
                            raise httpx.ReadTimeout(f"no data for {limit:g} s, only pings")
                        continue
                    last_data = time.monotonic()
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    try:
                        chunk = json.loads(data)
                    except ValueError:
                        continue
                    problem = stream_error(chunk)
                    if problem is not None:
                        raise ModelUnavailable(f"the model server stopped with an error: {problem}")
                    read_figures(chunk, figures)
                    text = chunk_text(chunk)
                    if text:
                        queue.put_nowait(text)
        except ModelError as exc:
            queue.put_nowait(exc)
        except httpx.TimeoutException as exc:
            queue.put_nowait(
                EngineStalled(
                    f"the model server at {self.url} did not answer within "
                    f"{self.settings.models.llm_timeout_s:g} s ({type(exc).__name__}). {_FIX}"
                )
            )
        except httpx.HTTPError as exc:
            queue.put_nowait(
                ModelUnavailable(
                    f"the model server at {self.url} stopped answering "
                    f"({type(exc).__name__}: {exc or 'connection lost'}). {_FIX}"
                )
            )
        finally:
            queue.put_nowait(None)

    def _finish(self, stats: CallStats, figures: CallFigures, prompt: str, t0: float) -> None:
        stats.total_s = time.perf_counter() - t0
        stats.prefill_s = stats.first_token_s
        # The prompt's size is ours to know exactly; the engine's own count, when it sends
        # one, is the same number (a test holds the two equal).
        stats.prompt_tokens = figures.prompt_tokens or self.count(prompt)
        if figures.generated_tokens is not None:
            stats.generated_tokens = figures.generated_tokens
        if figures.cached_tokens is not None and figures.evaluated_tokens is not None:
            stats.reused_tokens = figures.cached_tokens
            stats.evaluated_tokens = figures.evaluated_tokens
            stats.full_reprefill = figures.cached_tokens == 0
        else:
            stats.cache_reported = False

    async def prefill(
        self,
        prompt: str,
        stop: threading.Event | None = None,
        *,
        pin: bool = False,
        saved_in: Path | None = None,
    ) -> CallStats:
        """Have the engine evaluate `prompt` into its prefix cache (one token generated: not
        every engine accepts zero). The engine evaluates it in one request, on its own
        machine's cores, so `stop` only skips a request not yet sent. `pin` is the engine's
        to honour or not: its own prefix cache decides what it keeps, across runs too
        (`saved_in` does not apply)."""
        if stop is not None and stop.is_set():
            stats = CallStats(cancelled=True)
            self._stats.set(stats)
            return stats
        async for _ in self.stream(prompt, max_tokens=1):
            pass
        return self.last_stats

    def close(self) -> None:
        self._http.close()
