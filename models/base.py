"""Engine-neutral interfaces and data types for every model role.

The rest of Annie talks to these, never to llama.cpp, faster-whisper, Piper or ONNX directly.
Fakes for timing tests subclass the same bases and live in the package (`models/fakes.py`).
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

Pcm = npt.NDArray[np.float32]
"""Mono float32 samples in [-1, 1]."""

ToolDialect = Literal["json", "xml"]
"""How a model writes tool calls: Qwen3's JSON object or Qwen3.5's `<function=...>` XML."""


class ModelError(RuntimeError):
    """A model could not be found, loaded or run; the message names the file and the fix."""


class ModelUnavailable(ModelError):
    """The model's server is down, too slow, or failing: nothing is wrong with the turn, which
    can be asked again as it is. `spoken` is what the voice says instead of an answer."""

    spoken = (
        "I can't reach my language model right now. I've kept what you said; "
        "please ask again in a moment."
    )


@dataclass(frozen=True)
class Resolved:
    """Which file a role will use, and why the resolver chose it."""

    role: str
    path: Path
    reason: str
    size_bytes: int = 0


@dataclass
class CallStats:
    """What one LLM call cost: prompt tokens reused from cache versus newly evaluated."""

    prompt_tokens: int = 0
    reused_tokens: int = 0
    evaluated_tokens: int = 0
    generated_tokens: int = 0
    prefill_s: float = 0.0
    first_token_s: float = 0.0
    total_s: float = 0.0
    cancelled: bool = False
    full_reprefill: bool = False
    # How the cache reached the prompt ("extend", "cut", "restore", "scratch"; "" if unknown),
    # and how long the call waited for the model behind other calls.
    plan: str = ""
    queued_s: float = 0.0
    # False when the engine did not say what it reused (a server that reports no cache
    # figures): reused and evaluated are then unknown, not zero.
    cache_reported: bool = True


@dataclass(frozen=True)
class ToolCall:
    """A typed call parsed from model output."""

    name: str
    arguments: dict[str, Any]
    id: str = ""
    # True when the values are the raw text of XML `<parameter>` blocks: only the tool's
    # schema can say whether "2026" is a number or a string (`models.toolcalls.coerce_arguments`).
    raw_args: bool = False


@dataclass(frozen=True)
class ToolCallError:
    """Model output that looked like a tool call but could not be parsed; recoverable."""

    raw: str
    reason: str


@dataclass
class ParsedOutput:
    """Model output split into the visible text and the tool calls it made."""

    text: str
    calls: list[ToolCall] = field(default_factory=list)
    errors: list[ToolCallError] = field(default_factory=list)


class LLM(ABC):
    """A chat model with an exact tokenizer, its own template and incremental evaluation."""

    n_ctx: int
    path: Path
    backend: str = "local"

    # What an engine can do, declared here so that callers never ask which engine it is.
    @property
    def parallel(self) -> bool:
        """Whether conversations run side by side on this engine (a serving engine with
        slots); in process, one call runs at a time and every session waits its turn."""
        return False

    @property
    def max_parallel(self) -> int | None:
        """Calls the engine runs at once; None when it does not say. In-process: one."""
        return 1

    @property
    def kind(self) -> str:
        """Where the model runs, as a status line says it ("in process", "llama.cpp")."""
        return "in process"

    def close(self) -> None:
        """Let go of what the engine holds (threads, memory, connections); nothing by default."""
        return None

    @property
    def label(self) -> str:
        """The model as a person would name it in a status line."""
        return self.path.name

    @property
    def cache_bytes(self) -> int:
        """Memory held in saved model states (at most `models.llm_checkpoints` of them); an
        engine in another process holds its own, and reports 0 here."""
        return 0

    @abstractmethod
    def tokenize(self, text: str) -> list[int]:
        """Exact token ids for rendered prompt text (special tokens parsed)."""

    def count(self, text: str) -> int:
        return len(self.tokenize(text))

    @abstractmethod
    def detokenize(self, tokens: Sequence[int]) -> str: ...

    @abstractmethod
    def render(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> str:
        """The prompt text exactly as the model sees it, from the model's own chat template."""

    @abstractmethod
    def stream(
        self,
        prompt: str,
        *,
        max_tokens: int = 512,
        stop: Sequence[str] = (),
        grammar: str | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AsyncIterator[str]:
        """Stream text pieces for `prompt`; stops within one token once `cancel` is set."""

    @abstractmethod
    async def prefill(
        self,
        prompt: str,
        stop: threading.Event | None = None,
        *,
        pin: bool = False,
        saved_in: Path | None = None,
    ) -> CallStats:
        """Evaluate `prompt` into the cache without generating (warm-up, idle-time re-prefill).
        Setting `stop` ends it early at a batch boundary, keeping what was evaluated
        (`CallStats.cancelled`); the next call goes on from there. `pin`: keep the state at
        `prompt`'s end until another is pinned, whatever the conversations do meanwhile (the
        head every session shares); a prompt that starts with it restores it. `saved_in`
        (with `pin`): a folder where the state is kept across runs; one saved there for this
        model and prompt is read back instead of evaluating (`CallStats.plan` "disk")."""

    @property
    @abstractmethod
    def last_stats(self) -> CallStats: ...

    @abstractmethod
    def parse(self, text: str) -> ParsedOutput:
        """Split output into text and tool calls (both Qwen dialects)."""

    @property
    def tool_dialect(self) -> ToolDialect:
        """The dialect this model's template writes tool calls in (forced calls, examples)."""
        return "json"


@dataclass(frozen=True)
class Segment:
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Transcript:
    text: str
    segments: list[Segment]
    duration_s: float
    elapsed_s: float


class STT(ABC):
    sample_rate: int = 16000

    @abstractmethod
    async def transcribe(self, pcm: Pcm) -> Transcript:
        """16 kHz mono float32 in, text and segments out."""


@dataclass(frozen=True)
class AudioChunk:
    pcm: Pcm
    sample_rate: int
    text: str


class TTS(ABC):
    sample_rate: int

    @abstractmethod
    def synthesize_iter(self, text: str) -> Iterator[AudioChunk]:
        """Blocking: yields one chunk per sentence as it is synthesized."""

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        """Sentence-by-sentence chunks, synthesized in a worker thread."""
        it = iter(self.synthesize_iter(text))
        sentinel = object()
        while True:
            chunk = await asyncio.to_thread(next, it, sentinel)
            if chunk is sentinel:
                return
            assert isinstance(chunk, AudioChunk)
            yield chunk


class VADStream(ABC):
    """Per-stream state: feed 512-sample (32 ms) frames at 16 kHz, get speech probabilities."""

    frame_samples: int = 512

    @abstractmethod
    def probability(self, frame: Pcm) -> float: ...

    @abstractmethod
    def reset(self) -> None: ...


class VAD(ABC):
    @abstractmethod
    def new_stream(self) -> VADStream: ...


class Embedder(ABC):
    dim: int

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit-normalized embeddings, one row per text."""


class Tokenizer(ABC):
    """Counts tokens for prompt text.

    `exact` is True when the counts come from the model's own vocabulary (a `vocab_only`
    GGUF load); False for the tiktoken estimator used when no model tokenizer is available.
    `chat_template`, `bos_token` and `eos_token` come from the same GGUF, so a renderer built
    from a tokenizer produces the same prompt text as the loaded model.
    """

    exact: bool
    name: str
    chat_template: str | None = None
    bos_token: str = ""
    eos_token: str = ""

    @abstractmethod
    def tokenize(self, text: str) -> list[int]:
        """Token ids for `text`, special tokens parsed, no BOS added."""

    def count(self, text: str) -> int:
        return len(self.tokenize(text))

    @abstractmethod
    def detokenize(self, tokens: Sequence[int]) -> str: ...
