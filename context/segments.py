"""How a chat template splits into per-message segments the ledger can count and cache.

Each message is rendered once, as the newest message after a small probe context, and the
text it adds is its segment. Templates that group a run of tool results into one user turn
(Qwen's) are handled by a join: the previous result gives back its end-of-turn text and the
next one carries it. A probe conversation with every message shape checks, once per model,
that the segments add up to the template's rendering, token for token; where they do not,
the ledger falls back to chain counting.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from context.codec import PROBE_CONVERSATION, PROBE_TOOLS, Codec
from models.chat_template import common_prefix_len

# Each message is rendered after this context: a system message (so no default one is
# inserted) and a user message (so templates that treat turns after the last user query
# specially, like Qwen's, render the message as they would in a real conversation).
PROBE = [{"role": "system", "content": "."}, {"role": "user", "content": "."}]
_PROBE_RESULT = {"role": "tool", "content": ".", "tool_call_id": "p", "name": "probe"}
_CACHE_LIMIT = 100_000


class Segments:
    """Per-message renders over one codec (a model's tokenizer plus its template)."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self._base = codec.render(PROBE, None, False)
        self.generation_prompt = codec.render(PROBE, None, True)[len(self._base) :]
        self._joins: dict[str, tuple[str, str]] = {}

    def segment(self, message: dict[str, Any]) -> str:
        """The text `message` adds when it is the newest message."""
        full = self.codec.render([*PROBE, message], None, False)
        return full[len(self._base) :]

    def joined(self, message: dict[str, Any]) -> tuple[str, str]:
        """A tool result rendered right after another: (closing text the previous one gives
        back, its own text). For templates that do not group results the first is empty and
        the plain segment applies."""
        key = json.dumps(message, sort_keys=True, ensure_ascii=False)
        hit = self._joins.get(key)
        if hit is None:
            before = self.codec.render([*PROBE, _PROBE_RESULT], None, False)
            after = self.codec.render([*PROBE, _PROBE_RESULT, message], None, False)
            shared = common_prefix_len(before, after)
            hit = (before[shared:], after[shared:])
            if len(self._joins) > _CACHE_LIMIT:
                self._joins.clear()
            self._joins[key] = hit
        return hit

    def separable(self, count: Callable[[str], int]) -> bool:
        """Does the template render each message on its own, with additive token counts?"""
        tools, sample = PROBE_TOOLS, PROBE_CONVERSATION
        try:
            whole = self.codec.render(sample, tools, True)
            head = self.codec.render(sample[:1], tools, False)
            parts = [head]
            for prev, message in itertools.pairwise(sample):
                seg = self.segment(message)
                if message["role"] == "tool" and prev["role"] == "tool":
                    retract, joined = self.joined(message)
                    if retract and parts[-1].endswith(retract):
                        parts[-1], seg = parts[-1][: -len(retract)], joined
                parts.append(seg)
        except Exception:
            return False
        parts.append(self.generation_prompt)
        if whole != "".join(parts):
            return False
        return len(self.codec.tokenize(whole)) == sum(count(p) for p in parts)
