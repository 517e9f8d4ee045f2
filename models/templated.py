"""What every chat model here shares: its template, tool-call parsing, stats and cache size.

The llama.cpp adapter and the scripted model differ only in how tokens are produced; the
prompt they see, the calls they parse and the figures they report come from this one base.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any

from models.base import LLM, CallStats, ParsedOutput
from models.chat_template import ChatTemplate
from models.llm_cache import PromptCache
from models.streaming import LoopLocks
from models.toolcalls import parse_output


class TemplatedLLM(LLM):
    """An LLM that renders with a `ChatTemplate` and plans reuse with a `PromptCache`."""

    template: ChatTemplate
    _cache: PromptCache

    def _init_shared(self) -> None:
        self._locks = LoopLocks()
        self._stats = CallStats()
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
    def last_stats(self) -> CallStats:
        return self._stats

    @property
    def cached_tokens(self) -> int:
        """Tokens the model holds now (prompt plus generated)."""
        return len(self._cache.tokens)
