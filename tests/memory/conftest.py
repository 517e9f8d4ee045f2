"""Fixtures for memory tests: a real SQLite file per test, with or without the real embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from config import Settings, load_settings
from memory.store import Store
from models.base import Embedder


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
