"""Bookkeeping for incremental evaluation: what the model holds, and what a prompt needs.

The cache is text-first. It keeps the evaluated token list together with the exact text those
tokens spell (the prompt plus the generated pieces, as generated). A new prompt that extends
that text only needs its suffix tokenized and evaluated. Anything else goes back to the
longest saved checkpoint whose text is a prefix of the prompt, or starts from scratch; the
model's state is never cut back, because a hybrid (recurrent) model cannot do that.
The same planner serves the llama.cpp adapter and the scripted fake, so both report reuse the
same way.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from models.base import ModelError


@dataclass
class Checkpoint:
    """A saved model state at a turn boundary; `state` is whatever the engine restores."""

    text: str
    tokens: list[int]
    state: Any = None


@dataclass
class Plan:
    """How to bring the model to a prompt: keep or restore a prefix, then evaluate the rest."""

    kind: Literal["extend", "restore", "scratch"]
    keep_tokens: list[int]
    keep_text: str
    new_tokens: list[int]
    new_text: str
    checkpoint: Checkpoint | None = None

    @property
    def prompt_tokens(self) -> int:
        return len(self.keep_tokens) + len(self.new_tokens)


@dataclass
class PromptCache:
    """The evaluated tokens and their text, plus a small LRU of checkpoints."""

    tokenize: Callable[[str], list[int]]
    capacity: int = 4
    bos: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    checkpoints: OrderedDict[str, Checkpoint] = field(default_factory=OrderedDict)

    def plan(self, prompt: str, n_ctx: int) -> Plan:
        """Choose the cheapest way to reach `prompt` without cutting any state back."""
        if not prompt:
            raise ModelError("empty prompt: render at least one message")
        # The engine keeps the logits of the last evaluated token (restored states carry
        # them too), so an empty suffix can be sampled from directly.
        if self.tokens and prompt.startswith(self.text):
            suffix = prompt[len(self.text) :]
            plan = Plan("extend", self.tokens, self.text, self._tok(suffix), suffix)
            return self._fits(plan, n_ctx)
        best: Checkpoint | None = None
        for cp in self.checkpoints.values():
            if prompt.startswith(cp.text) and (best is None or len(cp.text) > len(best.text)):
                best = cp
        if best is not None:
            self.checkpoints.move_to_end(best.text)
            suffix = prompt[len(best.text) :]
            plan = Plan("restore", best.tokens, best.text, self._tok(suffix), suffix, best)
            return self._fits(plan, n_ctx)
        return self._fits(Plan("scratch", [], "", self.bos + self._tok(prompt), prompt), n_ctx)

    def _tok(self, text: str) -> list[int]:
        return self.tokenize(text) if text else []

    @staticmethod
    def _fits(plan: Plan, n_ctx: int) -> Plan:
        if plan.prompt_tokens >= n_ctx:
            raise ModelError(
                f"prompt of {plan.prompt_tokens} tokens does not fit the model's window of "
                f"{n_ctx} tokens; the context assembler must trim it first"
            )
        return plan

    def start(self, plan: Plan) -> None:
        """The engine now holds `plan.keep_tokens` (kept or restored)."""
        self.tokens = list(plan.keep_tokens)
        self.text = plan.keep_text

    def evaluated(self, tokens: list[int], text: str) -> None:
        """The engine evaluated `tokens`, which spell `text`."""
        if tokens:
            self.tokens.extend(tokens)
            self.text += text

    def clear(self) -> None:
        self.tokens = []
        self.text = ""

    def has_checkpoint(self, text: str) -> bool:
        return text in self.checkpoints

    def save(self, state: Any) -> Checkpoint:
        """Remember the current tokens and text with the engine's `state`."""
        cp = Checkpoint(self.text, list(self.tokens), state)
        self.checkpoints[cp.text] = cp
        self.checkpoints.move_to_end(cp.text)
        while len(self.checkpoints) > max(0, self.capacity):
            self.checkpoints.popitem(last=False)
        return cp
