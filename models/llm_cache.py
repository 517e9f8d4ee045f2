"""Bookkeeping for incremental evaluation: what the model holds, and what a prompt needs.

The cache is text-first. It keeps the evaluated token list together with the exact text those
tokens spell (the prompt plus the generated pieces, as generated). A new prompt that extends
that text only needs its suffix tokenized and evaluated. Anything else (an edit in the middle,
as compaction makes) keeps the most it can of what the model holds or has saved: an
attention-only model cuts its KV cache (or a restored saved state) back to the last message
start before the edit; a hybrid (recurrent) model cannot cut its state back, so it restores
the longest saved state whose text is a prefix of the prompt, or starts from scratch.
The same planner serves the llama.cpp adapter and the scripted fake, so both report reuse the
same way.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from models.base import ModelError


@dataclass
class SavedState:
    """A saved model state at a turn boundary; `state` is whatever the engine restores."""

    text: str
    tokens: list[int]
    state: Any = None
    boundaries: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Plan:
    """How to bring the model to a prompt: keep or restore a prefix, then evaluate the rest."""

    kind: Literal["extend", "cut", "restore", "scratch"]
    keep_tokens: list[int]
    keep_text: str
    new_tokens: list[int]
    new_text: str
    saved: SavedState | None = None
    # (text length, token count) within the new text where a message starts: cut points.
    pieces: list[tuple[int, int]] = field(default_factory=list)
    # (text length, token count) within the new text where the shared head ends, when this
    # evaluation passes it before the head is kept: the engine pauses there to pin it.
    station: tuple[int, int] | None = None

    @property
    def prompt_tokens(self) -> int:
        return len(self.keep_tokens) + len(self.new_tokens)


@dataclass
class PromptCache:
    """The evaluated tokens and their text, plus a small LRU of saved states."""

    tokenize: Callable[[str], list[int]]
    capacity: int = 4
    bos: list[int] = field(default_factory=list)
    # False for recurrent and hybrid models: their state cannot be cut back, only restored.
    can_cut: bool = False
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    # The text each message starts with (ChatML: `<|im_start|>`). A special token is never
    # merged with its neighbours, so tokenizing message by message gives the same tokens and
    # marks where each message starts: the cut points after compaction edits one message.
    mark: str = ""
    # (text length, token count) after each evaluated piece: the places where the text and
    # the tokens align, so a cut there leaves tokens that spell exactly the kept text.
    boundaries: list[tuple[int, int]] = field(default_factory=list)
    _mark_checked: bool = False
    saved_states: OrderedDict[str, SavedState] = field(default_factory=OrderedDict)
    # The head every session shares (system prompt and tool schemas), kept outside the LRU:
    # a session that starts restores it and evaluates only its own briefing.
    pinned: SavedState | None = None
    # The shared head's text, once a call has asked to keep it (`prefill(pin=True)`). A
    # warm-up of it that the user keeps cutting short never finishes, while every turn
    # evaluates through it anyway; the turn then keeps it on the way (`Plan.station`).
    head: str = ""

    def plan(self, prompt: str, n_ctx: int) -> Plan:
        """Choose the cheapest way to reach `prompt`: extend, cut back, restore, or start over."""
        if not prompt:
            raise ModelError("empty prompt: render at least one message")
        # The engine keeps the logits of the last evaluated token (restored states carry
        # them too), so an empty suffix can be sampled from directly.
        if self.tokens and prompt.startswith(self.text):
            suffix = prompt[len(self.text) :]
            return self._fits(self._plan("extend", self.tokens, self.text, suffix), n_ctx)
        # Each candidate keeps (text length, tokens) of what it holds; a cut needs a non-empty
        # suffix, since the engine has no logits for a cut point.
        held = _cut_point(prompt, self.text, self.boundaries) if self.can_cut else None
        best: tuple[int, int, SavedState | None] | None = None
        if held is not None and held[1] > len(self.bos):
            best = (*held, None)
        for saved in self.held():
            if prompt.startswith(saved.text):
                point: tuple[int, int] | None = (len(saved.text), len(saved.tokens))
            elif self.can_cut:
                point = _cut_point(prompt, saved.text, saved.boundaries)
            else:
                continue
            if point is not None and point[1] > max(len(self.bos), best[1] if best else 0):
                best = (*point, saved)
        if best is None:
            return self._fits(self._plan("scratch", [], "", prompt), n_ctx)
        n_text, n_tokens, source = best
        suffix = prompt[n_text:]
        if source is None:
            keep = self.tokens[:n_tokens]
            return self._fits(self._plan("cut", keep, prompt[:n_text], suffix), n_ctx)
        if source is not self.pinned:
            self.saved_states.move_to_end(source.text)
        keep = source.tokens[:n_tokens]
        return self._fits(self._plan("restore", keep, prompt[:n_text], suffix, source), n_ctx)

    def _plan(
        self,
        kind: Literal["extend", "cut", "restore", "scratch"],
        keep: list[int],
        keep_text: str,
        suffix: str,
        saved: SavedState | None = None,
    ) -> Plan:
        split = self._head_end(keep_text, suffix)
        if split is None:
            tokens, pieces = self._tok(suffix)
            station = None
        else:
            # Tokenized apart at the head's end, as a prompt that restores the kept head is.
            tokens, pieces = self._tok(suffix[:split])
            station = (split, len(tokens))
            rest, rest_pieces = self._tok(suffix[split:])
            pieces += [station] + [(split + t, len(tokens) + n) for t, n in rest_pieces]
            tokens += rest
        if kind == "scratch" and self.bos:
            tokens = self.bos + tokens
            pieces = [(t, n + len(self.bos)) for t, n in pieces]
            if station is not None:
                station = (station[0], station[1] + len(self.bos))
        return Plan(kind, keep, keep_text, tokens, suffix, saved, pieces, station)

    def _head_end(self, keep_text: str, suffix: str) -> int | None:
        """Where in `suffix` the shared head ends, if it is to be kept and ends in there."""
        head = self.head
        if not head or (self.pinned is not None and self.pinned.text == head):
            return None
        split = len(head) - len(keep_text)
        if not 0 < split < len(suffix) or keep_text + suffix[:split] != head:
            return None
        return split

    def _tok(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """The text's tokens, and where each message after the first starts in both."""
        if not text:
            return [], []
        starts = self._message_starts(text)
        if not starts:
            return self.tokenize(text), []
        tokens: list[int] = []
        pieces: list[tuple[int, int]] = []
        for a, b in zip([0, *starts], [*starts, len(text)], strict=True):
            tokens += self.tokenize(text[a:b])
            if b < len(text):
                pieces.append((b, len(tokens)))
        if not self._mark_checked:
            # Once per model: if splitting at the mark ever changed the tokens, stop splitting.
            self._mark_checked = True
            if tokens != self.tokenize(text):
                self.mark = ""
                return self.tokenize(text), []
        return tokens, pieces

    def _message_starts(self, text: str) -> list[int]:
        if not self.mark:
            return []
        starts, i = [], text.find(self.mark, 1)
        while i > 0:
            starts.append(i)
            i = text.find(self.mark, i + 1)
        return starts

    @staticmethod
    def _fits(plan: Plan, n_ctx: int) -> Plan:
        if plan.prompt_tokens >= n_ctx:
            raise ModelError(
                f"prompt of {plan.prompt_tokens} tokens does not fit the model's window of "
                f"{n_ctx} tokens; the context assembler must trim it first"
            )
        return plan

    def start(self, plan: Plan) -> None:
        """The engine now holds `plan.keep_tokens` (kept, cut back or restored)."""
        if plan.kind == "cut":
            kept = (len(plan.keep_text), len(plan.keep_tokens))
            self.boundaries = self.boundaries[: bisect_right(self.boundaries, kept)]
        elif plan.kind == "restore" and plan.saved is not None:
            kept = (len(plan.keep_text), len(plan.keep_tokens))
            aligned = plan.saved.boundaries
            self.boundaries = aligned[: bisect_right(aligned, kept)]
        elif plan.kind == "scratch":
            self.boundaries = []
        self.tokens = list(plan.keep_tokens)
        self.text = plan.keep_text

    def evaluated(
        self, tokens: list[int], text: str, pieces: list[tuple[int, int]] | None = None
    ) -> None:
        """The engine evaluated `tokens`, which spell `text` (message starts at `pieces`)."""
        if tokens:
            base_text, base_tokens = len(self.text), len(self.tokens)
            for t, n in pieces or []:
                if n < len(tokens):
                    self.boundaries.append((base_text + t, base_tokens + n))
            self.tokens.extend(tokens)
            self.text += text
            # A token that ends inside a character spells no text yet: not a place to cut.
            if text:
                self.boundaries.append((len(self.text), len(self.tokens)))

    def clear(self) -> None:
        self.tokens = []
        self.text = ""
        self.boundaries = []

    def has_saved(self, text: str) -> bool:
        return text in self.saved_states or (self.pinned is not None and self.pinned.text == text)

    def held(self) -> list[SavedState]:
        """Every saved state: the pinned head first, then the LRU's."""
        pinned = [self.pinned] if self.pinned is not None else []
        return pinned + list(self.saved_states.values())

    def pin(self, text: str) -> bool:
        """Keep the saved state of `text` until another is pinned (the one before goes back to
        the LRU); False if there is none."""
        if self.pinned is not None and self.pinned.text == text:
            return True
        saved = self.saved_states.pop(text, None)
        if saved is None:
            return False
        self.pin_saved(saved)
        return True

    def pin_saved(self, saved: SavedState) -> None:
        """Keep `saved` (one read back from disk, say) as the pinned state."""
        if self.pinned is not None and self.pinned is not saved:
            self.saved_states[self.pinned.text] = self.pinned
            self._evict()
        self.pinned = saved

    def drop_all(self) -> None:
        self.saved_states.clear()
        self.pinned = None

    def save(self, state: Any) -> SavedState:
        """Remember the current tokens and text with the engine's `state`."""
        saved = SavedState(self.text, list(self.tokens), state, list(self.boundaries))
        self.saved_states[saved.text] = saved
        self.saved_states.move_to_end(saved.text)
        self._evict()
        return saved

    def _evict(self) -> None:
        while len(self.saved_states) > max(0, self.capacity):
            self.saved_states.popitem(last=False)


def _cut_point(prompt: str, text: str, boundaries: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The last aligned point of `text` before `prompt` departs from it, leaving a suffix."""
    lo, hi = 0, min(len(prompt), len(text))
    while lo < hi:  # the longest common prefix, by slices compared in C
        mid = (lo + hi + 1) // 2
        if prompt[:mid] == text[:mid]:
            lo = mid
        else:
            hi = mid - 1
    limit = min(lo, len(prompt) - 1)
    i = bisect_right(boundaries, (limit, 1 << 62)) - 1
    return boundaries[i] if i >= 0 else None


class BatchSizer:
    """How many tokens to evaluate between looks at the stop flag: as many as take about
    `target_s`, from the rate the batches before ran at.

    No fixed batch suits every machine: 256 tokens take a GPU milliseconds and a 2-core CPU
    seconds, and a warm-up stops only between batches, so a user's turn would wait behind one
    for that long. The first batch is small, since the rate is not known yet.
    """

    def __init__(self, target_s: float = 0.15, smallest: int = 16, largest: int = 512) -> None:
        self.target_s = target_s
        self.smallest = smallest
        self.largest = largest
        self.rate = 0.0  # tokens per second, smoothed; 0 until a batch has run

    def size(self, scale: float = 1.0) -> int:
        """Tokens for the next batch; `scale` times the target time (and smallest size)."""
        smallest = min(self.largest, int(self.smallest * scale))
        if self.rate <= 0:
            return min(self.largest, 2 * smallest)
        return max(smallest, min(self.largest, int(self.rate * self.target_s * scale)))

    def take(self, left: int, scale: float = 1.0) -> int:
        """How many of the `left` tokens still to evaluate go in the next batch: `size`, but
        never leaving one token behind to go alone.

        llama.cpp evaluates a one-token batch with its matrix-vector kernels, which round
        differently from the matrix-matrix ones a longer batch takes. A lone token in the
        middle of a prompt gets a slightly different KV entry, and everything after it reads
        that entry: on SmolLM2-135M the last logits moved by up to 1.4 against one batch,
        while every split into pieces of two or more tokens gave the same logits exactly.
        Which split the sizer chooses follows the measured rate, so without this rule the
        same prompt would evaluate differently on a busy machine."""
        take = min(left, self.size(scale))
        if left - take == 1:
            # One fewer leaves two; `smallest` is far above 2, so this batch keeps two too.
            take = take - 1 if take > 2 else left
        return take

    def timed(self, n_tokens: int, started: float) -> None:
        """A batch of `n_tokens` ran from `started` (perf_counter) to now."""
        took = time.perf_counter() - started
        if n_tokens <= 0 or took <= 0:
            return
        rate = n_tokens / took
        self.rate = rate if self.rate <= 0 else 0.5 * self.rate + 0.5 * rate
