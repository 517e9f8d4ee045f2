"""Shared fixtures: every test gets its own ANNIE_HOME; real models load once per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from config import Settings, load_settings
from models import LLM, STT, TTS, VAD, Embedder, Tokenizer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def annie_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "annie-home"
    home.mkdir()
    monkeypatch.setenv("ANNIE_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("ANNIE_") and name != "ANNIE_HOME":
            monkeypatch.delenv(name)
    yield home


@pytest.fixture(scope="session")
def model_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings for the shared real models, independent of each test's ANNIE_HOME."""
    home = tmp_path_factory.mktemp("models-home")
    return load_settings(environ={"ANNIE_HOME": str(home), "HF_HUB_OFFLINE": "1"})


@pytest.fixture(scope="session")
def embedder(model_settings: Settings) -> Embedder:
    from models import load_embedder

    return load_embedder(model_settings)


@pytest.fixture(scope="session")
def llm(model_settings: Settings) -> LLM:
    from models import load_llm

    return load_llm(model_settings, n_ctx=4096)


@pytest.fixture(scope="session")
def tokenizer(model_settings: Settings) -> Tokenizer:
    from models import load_tokenizer

    return load_tokenizer(model_settings)


@pytest.fixture(scope="session")
def stt(model_settings: Settings) -> STT:
    from models import load_stt

    return load_stt(model_settings)


@pytest.fixture(scope="session")
def tts(model_settings: Settings) -> TTS:
    from models import load_tts

    return load_tts(model_settings)


@pytest.fixture(scope="session")
def vad(model_settings: Settings) -> VAD:
    from models import load_vad

    return load_vad(model_settings)
