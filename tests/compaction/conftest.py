"""Fixtures for the compaction tests: a 4,096-token window with a reserve that fits it."""

from __future__ import annotations

import pytest

from config import Settings, load_settings

WINDOW = 4096
# At a 4k window the 32k default of 1,024 reserved output tokens would be a quarter of it and
# put the prompt limit (75%) below the tier-2 threshold; 512 keeps the limit at 87.5%.
RESERVE = 512


@pytest.fixture
def settings() -> Settings:
    return load_settings(context={"window": WINDOW, "reserve_output": RESERVE})
