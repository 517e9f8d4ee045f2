"""Shared fixtures: every test gets its own ANNIE_HOME; real models load once per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

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
