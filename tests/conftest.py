"""Shared fixtures: every test gets its own ANNIE_HOME and may get a real SQLite store in it;
real models load once per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from config import Settings, load_settings
from memory.store import Store
from models import LLM, STT, TTS, VAD, Embedder, Tokenizer
from testkit.llama_server import LlamaCppServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Web search defaults to a metasearch library that goes to the internet: here its proxy is a
# closed local port, so a test that searches without a local engine fails instead of leaving.
os.environ.setdefault("DDGS_PROXY", "http://127.0.0.1:9")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files of long benches first, the file with the most of them first of all.

    `./start.sh test` hands a file at a time to each of two workers, in this order
    (`--no-loadscope-reorder`): the reliability benches' file, ten minutes of the run, started
    last would be its tail with the other worker idle. A file's own tests keep their order.
    """
    slow: dict[Path, int] = {}
    for item in items:
        if item.get_closest_marker("slow"):
            slow[item.path] = slow.get(item.path, 0) + 1
    items.sort(key=lambda item: -slow.get(item.path, 0))


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


@pytest.fixture(scope="session")
def qwen35_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight qwen35 (Qwen3.5 hybrid) GGUF from testkit, written once."""
    from testkit.qwen35 import write_qwen35_gguf

    return write_qwen35_gguf(tmp_path_factory.mktemp("qwen35") / "qwen35-tiny.gguf")


@pytest.fixture(scope="session")
def qwen35_settings(qwen35_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings whose configured LLM is the generated qwen35 model (a path in config)."""
    home = tmp_path_factory.mktemp("qwen35-home")
    return load_settings(
        environ={"ANNIE_HOME": str(home), "HF_HUB_OFFLINE": "1"},
        models={"llm_path": str(qwen35_path)},
    )


@pytest.fixture(scope="session")
def qwen35_llm(qwen35_settings: Settings) -> LLM:
    from models import load_llm

    # The generated tokenizer spends about one token per character, so the real system
    # prompt needs a larger window than on SmolLM2; the tiny model's KV cache is cheap.
    return load_llm(qwen35_settings, n_ctx=16384)


@pytest.fixture(scope="session")
def served_smollm2(model_settings: Settings) -> Iterator[LlamaCppServer]:
    """llama-cpp-python's server on the shipped SmolLM2, in a child process."""
    from models import resolve

    with LlamaCppServer(resolve("llm", model_settings).path, n_ctx=4096) as server:
        yield server


@pytest.fixture(scope="session")
def served_qwen35(qwen35_path: Path) -> Iterator[LlamaCppServer]:
    """llama-cpp-python's server on the generated Qwen3.5 model."""
    with LlamaCppServer(qwen35_path, n_ctx=16384) as server:
        yield server


def served_settings(server: LlamaCppServer, home: Path, window: int, **models: object) -> Settings:
    """Settings whose LLM is `server`, with its GGUF named for the template and vocabulary."""
    return load_settings(
        environ={"ANNIE_HOME": str(home), "HF_HUB_OFFLINE": "1"},
        models={
            "llm_backend": "server",
            "llm_url": server.url,
            "llm_path": str(server.model),
            # A stalled engine fails the turn, never hangs a test; the bound is for a hang,
            # not for speed: beside a CPU-bound load one prefill on the engine's one thread
            # took over a minute, and the 20 s this was failed turns that were only slow.
            "llm_timeout_s": 300.0,
            **models,
        },
        context={"window": window},
    )


@pytest.fixture(scope="session", params=["smollm2", "qwen35"])
def served_llm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> LLM:
    """The chat model through a serving engine, once per family (as `any_llm` in process)."""
    from models import load_llm

    server: LlamaCppServer = request.getfixturevalue(f"served_{request.param}")
    home = tmp_path_factory.mktemp(f"served-{request.param}")
    return load_llm(served_settings(server, home, server.n_ctx))


@pytest.fixture(params=["smollm2", "qwen35"])
def any_llm(request: pytest.FixtureRequest) -> LLM:
    """The runtime's model, once per family: SmolLM2 (plain transformer, lenient template)
    and the generated Qwen3.5 (hybrid, strict template, XML tool calls)."""
    name = "llm" if request.param == "smollm2" else "qwen35_llm"
    model: LLM = request.getfixturevalue(name)
    return model


@pytest.fixture
def settings(annie_home: Path) -> Settings:
    return load_settings()


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    with Store.open(settings) as s:
        yield s


@pytest.fixture
def store_e(settings: Settings, embedder: Embedder) -> Iterator[Store]:
    """A store that embeds notes with the real all-MiniLM-L6-v2 model."""
    with Store.open(settings, embedder=embedder) as s:
        yield s
