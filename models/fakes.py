"""A scripted chat model for timing tests and long simulated sessions.

`ScriptedLLM` plays given replies instead of sampling, but everything else is real: it
renders with the same chat template code as the llama.cpp adapter, counts with a real
tokenizer, plans prefix reuse with the same cache planner, streams through the same worker
thread bridge, honours stop strings and cancellation, and reports `CallStats` the same way.
Every path it stands in for is also tested on the real engine with the small model.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from models.base import CallStats, ModelError, Tokenizer
from models.chat_template import ChatTemplate
from models.llm_cache import PromptCache
from models.streaming import Push, StopMatcher
from models.templated import ThreadedLLM

Script = Sequence[str] | Callable[[str], str]


class ScriptedLLM(ThreadedLLM):
    """Replies from a script: a list played in order, or a function of the prompt."""

    def __init__(
        self,
        tokenizer: Tokenizer,
        replies: Script,
        *,
        n_ctx: int = 4096,
        token_delay_s: float = 0.0,
        prefill_s_per_token: float = 0.0,
        saved_states: int = 4,
        can_cut: bool = True,
        stall_after_tokens: int | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        # A reply stalls after this many tokens until its call is cancelled or `release` is
        # set (at most a minute): a test of what happens mid-generation then waits on an
        # event, not on how fast the machine gets there.
        self.stall_after_tokens = stall_after_tokens
        self.release = threading.Event()
        self.n_ctx = n_ctx
        self.path = Path(f"scripted:{tokenizer.name}")
        self.token_delay_s = token_delay_s
        self.prefill_s_per_token = prefill_s_per_token
        self.template = ChatTemplate(
            tokenizer.chat_template,
            tokenizer.bos_token,
            tokenizer.eos_token,
            name=f"the chat template of {tokenizer.name}",
        )
        self.prompts: list[str] = []
        self._replies = replies if callable(replies) else list(replies)
        self._next = 0
        # `can_cut=False` plays a hybrid model, whose state is only ever restored.
        self._cache = PromptCache(
            tokenizer.tokenize,
            capacity=saved_states,
            can_cut=can_cut,
            mark=self.template.message_mark,
        )
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scripted-llm")
        self._init_shared()

    def tokenize(self, text: str) -> list[int]:
        return self.tokenizer.tokenize(text)

    def detokenize(self, tokens: Sequence[int]) -> str:
        return self.tokenizer.detokenize(tokens)

    def _reply_for(self, prompt: str) -> str:
        if callable(self._replies):
            return self._replies(prompt)
        if self._next >= len(self._replies):
            raise ModelError(f"the script has only {len(self._replies)} replies")
        reply = self._replies[self._next]
        self._next += 1
        return reply

    def _prefill(self, prompt: str, stats: CallStats, flag: threading.Event | None) -> None:
        t0 = time.perf_counter()
        plan = self._cache.plan(prompt, self.n_ctx)
        self._cache.start(plan)
        stats.plan = plan.kind
        stats.prompt_tokens = plan.prompt_tokens
        stats.reused_tokens = len(plan.keep_tokens)
        stats.full_reprefill = not plan.keep_tokens
        if self.prefill_s_per_token and plan.new_tokens:
            # Sleep in slices so a cancel during a long simulated prefill is seen quickly.
            end = time.perf_counter() + self.prefill_s_per_token * len(plan.new_tokens)
            while time.perf_counter() < end and not (flag is not None and flag.is_set()):
                time.sleep(min(0.01, max(0.0, end - time.perf_counter())))
        self._cache.evaluated(plan.new_tokens, plan.new_text, plan.pieces)
        stats.evaluated_tokens = len(plan.new_tokens)
        stats.cancelled = flag is not None and flag.is_set()
        stats.prefill_s = time.perf_counter() - t0

    def _generate(
        self,
        prompt: str,
        max_tokens: int,
        stops: Sequence[str],
        grammar: str | None,
        flag: threading.Event,
        push: Push,
    ) -> None:
        # A script needs no grammar: its replies are the constrained output already.
        t0 = time.perf_counter()
        stats = CallStats()
        self._stats = stats
        try:
            self.prompts.append(prompt)
            self._prefill(prompt, stats, flag)
            if flag.is_set():
                stats.cancelled = True
                return
            tokens = self.tokenize(self._reply_for(prompt))
            matcher = StopMatcher(stops)
            shown = ""
            for i, token in enumerate(tokens[:max_tokens]):
                if self.token_delay_s:
                    time.sleep(self.token_delay_s)
                if i == self.stall_after_tokens and self._stall(flag):
                    stats.cancelled = True
                    break
                decoded = self.detokenize(tokens[: i + 1])
                # Hold back a character split across tokens until it is complete.
                piece = "" if decoded.endswith("\ufffd") else decoded[len(shown) :]
                shown += piece
                stats.generated_tokens += 1
                out = matcher.feed(piece)
                if out:
                    if not stats.first_token_s:
                        stats.first_token_s = time.perf_counter() - t0
                    push(out)
                if stats.generated_tokens == 1 and not self._cache.has_saved(self._cache.text):
                    self._cache.save(None)
                if matcher.hit or flag.is_set():
                    stats.cancelled = flag.is_set() and not matcher.hit
                    break
                self._cache.evaluated([token], piece)
            rest = matcher.flush()
            if rest and not stats.cancelled:
                push(rest)
        finally:
            stats.total_s = time.perf_counter() - t0

    def _stall(self, flag: threading.Event) -> bool:
        """Wait for a cancel or the release; True when the call was cancelled."""
        end = time.monotonic() + 60.0
        while not (flag.is_set() or self.release.is_set()) and time.monotonic() < end:
            flag.wait(0.01)
        return flag.is_set()

    def _evaluate(self, prompt: str, stats: CallStats, stop: threading.Event | None) -> None:
        self._prefill(prompt, stats, stop)
        if not self._cache.has_saved(self._cache.text):
            self._cache.save(None)
