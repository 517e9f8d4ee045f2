"""Shared fixtures for the state path's tests: one classifier, trained once per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from context.intents import IntentIndex
from models import Embedder


@pytest.fixture(scope="session")
def intents_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("intents-cache")


@pytest.fixture(scope="session")
def index(embedder: Embedder, intents_cache: Path) -> IntentIndex:
    built = IntentIndex(lambda: embedder, cache_dir=intents_cache)
    assert built.warm() and built.ready()
    return built
