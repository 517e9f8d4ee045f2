"""What every chat model here shares: its template and tool-call parsing; and what the
in-process ones share on top: one worker thread, a FIFO queue, stats and cache size.

The llama.cpp adapter, the scripted model and the served model differ only in how tokens are
produced; the prompt they see and the calls they parse come from `TemplatedLLM`. The two
in-process engines also share `ThreadedLLM`: calls queue on one lock and run on one thread.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from models.base import LLM, CallStats, ParsedOutput, ToolDialect
from models.chat_template import ChatTemplate
from models.llm_cache import PromptCache
from models.streaming import LoopLocks, Push, call_in_thread, stream_from_thread
from models.toolcalls import parse_output


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
        """Worker thread: bring the cache up to `prompt` and checkpoint it, generating nothing;
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

        def worker(flag: threading.Event, push: Push) -> None:
            self._generate(prompt, max_tokens, stops, grammar, flag, push)

        return stream_from_thread(self._executor, self._locks.get(), worker, cancel)

    async def prefill(
        self, prompt: str, stop: threading.Event | None = None, *, pin: bool = False
    ) -> CallStats:
        def run() -> CallStats:
            t0 = time.perf_counter()
            stats = CallStats()
            self._stats = stats
            if stop is not None and stop.is_set():  # stopped while it waited for the engine
                stats.cancelled = True
                return stats
            self._evaluate(prompt, stats, stop)
            if pin and not stats.cancelled:
                self._cache.pin(self._cache.text)
            stats.total_s = time.perf_counter() - t0
            return stats

        result: CallStats = await call_in_thread(self._executor, self._locks.get(), run)
        return result

    @property
    def last_stats(self) -> CallStats:
        return self._stats

    @property
    def cached_tokens(self) -> int:
        """Tokens the model holds now (prompt plus generated)."""
        return len(self._cache.tokens)
