"""What every chat model here shares: its template and tool-call parsing; and what the
in-process ones share on top: one worker thread, a FIFO queue, stats and cache size.

The llama.cpp adapter, the scripted model and the served model differ only in how tokens are
produced; the prompt they see and the calls they parse come from `TemplatedLLM`. The two
in-process engines also share `ThreadedLLM`: calls queue on one lock and run on one thread.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from models.base import LLM, CallStats, ParsedOutput, ToolDialect
from models.chat_template import ChatTemplate
from models.llm_cache import PromptCache, SavedState
from models.streaming import LoopLocks, Push, call_in_thread, stream_from_thread
from models.toolcalls import parse_output

log = logging.getLogger(__name__)


def log_call(kind: str, stats: CallStats) -> None:
    """One line per model call: where its time went (waiting, reaching the prompt, answering),
    so a slow first token can be told apart as a queue, a re-evaluation or a long answer."""
    log.info(
        "%s: waited %.2f s; %s: %d reused, %d evaluated in %.2f s; first piece %.2f s; "
        "%d generated; %.2f s%s",
        kind,
        stats.queued_s,
        stats.plan or "no plan",
        stats.reused_tokens,
        stats.evaluated_tokens,
        stats.prefill_s,
        stats.first_token_s,
        stats.generated_tokens,
        stats.total_s,
        " (cancelled)" if stats.cancelled else "",
    )


class TemplatedLLM(LLM):
    """An LLM that renders with its own `ChatTemplate` and parses calls in its dialect."""

    template: ChatTemplate

    def _init_template(self) -> None:
        self._ids = (f"call_{n}" for n in itertools.count(1))
        self._ids_lock = threading.Lock()

    def render(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> str:
        return self.template.render(messages, tools, add_generation_prompt)

    def parse(self, text: str) -> ParsedOutput:
        with self._ids_lock:
            return parse_output(text, self._ids)

    @property
    def tool_dialect(self) -> ToolDialect:
        return self.template.dialect


class ThreadedLLM(TemplatedLLM):
    """An in-process model: one worker thread, calls served first come first served, and
    reuse planned with a `PromptCache`."""

    _cache: PromptCache
    _executor: ThreadPoolExecutor

    def _init_shared(self) -> None:
        self._init_template()
        self._locks = LoopLocks()
        self._stats = CallStats()

    @abstractmethod
    def _generate(
        self,
        prompt: str,
        max_tokens: int,
        stops: Sequence[str],
        grammar: str | None,
        flag: threading.Event,
        push: Push,
    ) -> None:
        """Worker thread: evaluate `prompt`, then push text pieces until done or `flag` is set."""

    @abstractmethod
    def _evaluate(self, prompt: str, stats: CallStats, stop: threading.Event | None) -> None:
        """Worker thread: bring the cache up to `prompt` and save its state, generating nothing;
        `stop` ends it early, keeping what was evaluated."""

    def stream(
        self,
        prompt: str,
        *,
        max_tokens: int = 512,
        stop: Sequence[str] = (),
        grammar: str | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AsyncIterator[str]:
        stops = tuple(stop)
        called = time.perf_counter()

        def worker(flag: threading.Event, push: Push) -> None:
            queued = time.perf_counter() - called
            try:
                self._generate(prompt, max_tokens, stops, grammar, flag, push)
            finally:
                self._stats.queued_s = queued
                log_call("generate", self._stats)

        return stream_from_thread(self._executor, self._locks.get(), worker, cancel)

    async def prefill(
        self,
        prompt: str,
        stop: threading.Event | None = None,
        *,
        pin: bool = False,
        saved_in: Path | None = None,
    ) -> CallStats:
        called = time.perf_counter()

        def run() -> CallStats:
            t0 = time.perf_counter()
            stats = CallStats(queued_s=t0 - called)
            self._stats = stats
            if pin:  # kept by the first evaluation to pass its end, this one or a turn's
                self._cache.head = prompt
            if stop is not None and stop.is_set():  # stopped while it waited for the engine
                stats.cancelled = True
                return stats
            pinned = self._cache.pinned
            if pin and pinned is not None and pinned.text == prompt:
                # Kept already: a turn that evaluated through it kept it on the way.
                stats.plan = "kept"
                stats.prompt_tokens = stats.reused_tokens = len(pinned.tokens)
            elif not (
                pin and saved_in is not None and self._restore_saved(saved_in, prompt, stats)
            ):
                self._evaluate(prompt, stats, stop)
                if pin and not stats.cancelled:
                    self._cache.pin(self._cache.text)
            stats.total_s = time.perf_counter() - t0
            log_call("prefill", stats)
            return stats

        result: CallStats = await call_in_thread(self._executor, self._locks.get(), run)
        pinned = self._cache.pinned
        evaluated = result.plan not in ("", "disk") and not result.cancelled
        if pin and saved_in is not None and evaluated and pinned and pinned.text == prompt:
            # Off the model's thread: a turn that comes meanwhile need not wait for a disk.
            await asyncio.to_thread(self._write_saved, saved_in, pinned)
        return result

    def _restore_saved(self, directory: Path, prompt: str, stats: CallStats) -> bool:
        """Worker thread: bring the model to `prompt` from a state saved on disk by an
        earlier run, pinned; False if there is none (or the engine cannot save states)."""
        return False

    def _write_saved(self, directory: Path, saved: SavedState) -> None:
        """Save a pinned state for the next run (engines that can)."""

    @property
    def last_stats(self) -> CallStats:
        return self._stats

    @property
    def cached_tokens(self) -> int:
        """Tokens the model holds now (prompt plus generated)."""
        return len(self._cache.tokens)
