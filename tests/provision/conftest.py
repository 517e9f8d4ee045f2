"""The local index server the plan and install tests point the planner and pip at."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.provision.index_server import IndexServer
from tests.provision.standins import build_libraries


@pytest.fixture(scope="session")
def standin_libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    assert shutil.which("cc"), "no C compiler: ./start.sh test installs gcc (Debian)"
    return build_libraries(tmp_path_factory.mktemp("standin-libs"))


@pytest.fixture(scope="session")
def indexes(standin_libs: dict[str, bytes]) -> Iterator[IndexServer]:
    server = IndexServer(standin_libs).start()
    yield server
    server.stop()


@pytest.fixture()
def index_url(indexes: IndexServer) -> str:
    return indexes.url


@pytest.fixture()
def copied() -> Path:
    """The folder of copied index pages."""
    return Path(__file__).resolve().parent / "indexes"
