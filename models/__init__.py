"""Engine adapters behind small interfaces, and the factories that load them from settings.

Importing this package is cheap: each factory imports its engine only when called, so a
command that needs the embedder does not pay for llama.cpp, Whisper or Piper.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from models.base import (
    LLM,
    STT,
    TTS,
    VAD,
    AudioChunk,
    CallStats,
    Embedder,
    ModelError,
    ModelUnavailable,
    ParsedOutput,
    Resolved,
    Segment,
    Tokenizer,
    ToolCall,
    ToolCallError,
    Transcript,
    VADStream,
)
from models.end_of_turn import EndOfTurnDetector
from models.resolver import ROLES, detect_device, resolve

if TYPE_CHECKING:
    from config import Settings
    from models.end_of_turn_words import EndOfTurnWords

__all__ = [
    "LLM",
    "ROLES",
    "STT",
    "TTS",
    "VAD",
    "AudioChunk",
    "CallStats",
    "Embedder",
    "EndOfTurnDetector",
    "ModelError",
    "ModelUnavailable",
    "ParsedOutput",
    "Resolved",
    "Segment",
    "Tokenizer",
    "ToolCall",
    "ToolCallError",
    "Transcript",
    "VADStream",
    "detect_device",
    "load_embedder",
    "load_end_of_turn_detector",
    "load_end_of_turn_words",
    "load_llm",
    "load_stt",
    "load_tokenizer",
    "load_tts",
    "load_vad",
    "resolve",
    "served",
]


def load_embedder(settings: Settings) -> Embedder:
    """all-MiniLM-L6-v2 (or the configured folder), offline, unit-normalized float32 rows."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from models.embed import SentenceEmbedder

    return SentenceEmbedder(resolve("embed", settings))


def load_llm(settings: Settings, n_ctx: int | None = None) -> LLM:
    """The chat model at `n_ctx` tokens (default: `settings.context.window`): in this process,
    or on the serving engine at `models.llm_url` when `models.llm_backend` is "server"."""
    if settings.models.llm_backend == "server":
        from models.served import ServedLLM
        from models.tokenizer import local_vocabulary

        return ServedLLM(settings, n_ctx=n_ctx, local=local_vocabulary(settings))
    from models.llm import LlamaLLM

    return LlamaLLM(resolve("llm", settings), settings, n_ctx=n_ctx)


def load_tokenizer(settings: Settings) -> Tokenizer:
    """The model's exact tokenizer (a vocab-only load); tiktoken, labelled inexact, if none."""
    from models.tokenizer import load_tokenizer as _load

    return _load(settings)


def load_stt(settings: Settings) -> STT:
    """faster-whisper: int8 on CPU, float16 on CUDA."""
    from models.stt import WhisperSTT

    return WhisperSTT(resolve("stt", settings), settings)


def load_tts(settings: Settings) -> TTS:
    """The Piper voice, sentence by sentence."""
    from models.tts import PiperTTS

    return PiperTTS(resolve("tts", settings))


def load_vad(settings: Settings) -> VAD:
    """Silero VAD on onnxruntime, one state per stream."""
    from models.vad import SileroVAD

    return SileroVAD(resolve("vad", settings))


def load_end_of_turn_words(settings: Settings) -> EndOfTurnWords:
    """The words' end-of-turn model: the shipped SmolLM2-135M on two CPU threads, whatever
    model answers (`models.end_of_turn_words`)."""
    from models.end_of_turn_words import EndOfTurnWords
    from models.resolver import packaged_llm

    return EndOfTurnWords(packaged_llm())


def served(settings: Settings) -> bool:
    """Whether the chat model is reached at a serving engine (`models.llm_backend`) rather
    than loaded in this process."""
    return settings.models.llm_backend == "server"


def load_end_of_turn_detector(settings: Settings) -> EndOfTurnDetector:
    """Smart Turn v3.2 on onnxruntime, one core: `models.turn_path`, else pipecat-ai's copy."""
    from models.end_of_turn import SmartTurnDetector, find_smart_turn

    return SmartTurnDetector(
        find_smart_turn(settings.models.turn_path), threshold=settings.vad.turn_threshold
    )
