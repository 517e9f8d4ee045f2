"""KV-cache accounting: how many prompt tokens an edit forces the model to evaluate again.

llama.cpp keeps the longest token prefix that the new prompt shares with the tokens already
evaluated, and evaluates everything after it. So an edit at token position p costs the tokens
from p to the end of the new prompt, and appending costs only what is appended. The naive
baseline, a runtime with no prefix reuse, pays for the whole prompt after every edit.
Prompts are compared as sequences of segments (one per rendered message, with a key that
changes whenever its rendered text changes and its exact token count), which gives the same
answer as comparing token ids because chat templates put special tokens at message
boundaries, and costs nothing per turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    """One rendered piece of the prompt: a stable key and its exact token count."""

    key: str
    tokens: int


def common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """Length of the longest shared prefix of two sequences (token ids or segment keys)."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def shared_tokens(before: Sequence[Segment], after: Sequence[Segment]) -> int:
    """Tokens of `after` that a cache holding `before` already has."""
    n = common_prefix([s.key for s in before], [s.key for s in after])
    return sum(s.tokens for s in after[:n])


def reprefill_tokens(before: Sequence[Segment], after: Sequence[Segment]) -> int:
    """Tokens to evaluate for `after` when the cache holds `before`: from the first edit on."""
    return sum(s.tokens for s in after) - shared_tokens(before, after)


def edit_position(before: Sequence[Segment], after: Sequence[Segment]) -> int:
    """Token position of the first difference, the `p` of 'an edit at p costs p..end'."""
    return shared_tokens(before, after)


@dataclass
class CacheModel:
    """A model of one llama.cpp slot: what it holds and what each call evaluates.

    `call` records a model call on a prompt; `prefill` records an idle-time evaluation.
    Both return the tokens newly evaluated, next to what a runtime without prefix reuse would
    have evaluated (the whole prompt).
    """

    held: tuple[Segment, ...] = ()
    evaluated: int = 0
    naive: int = 0
    reused: int = 0

    def evaluate(self, prompt: Sequence[Segment]) -> int:
        new = reprefill_tokens(self.held, prompt)
        total = sum(s.tokens for s in prompt)
        self.evaluated += new
        self.naive += total
        self.reused += total - new
        self.held = tuple(prompt)
        return new

    def would_evaluate(self, prompt: Sequence[Segment]) -> int:
        return reprefill_tokens(self.held, prompt)
