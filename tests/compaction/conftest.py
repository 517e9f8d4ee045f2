"""Fixtures for the compaction tests: a 4,096-token window and a fast scripted summarizer."""

from __future__ import annotations

import pytest

from compaction.sim import scripted_summary
from config import Settings, load_settings
from models import Tokenizer
from models.fakes import ScriptedLLM

WINDOW = 4096
# At a 4k window the 32k default of 1,024 reserved output tokens would be a quarter of it and
# put the prompt limit (75%) below the tier-2 threshold; 512 keeps the limit at 87.5%.
RESERVE = 512


@pytest.fixture
def settings() -> Settings:
    return load_settings(context={"window": WINDOW, "reserve_output": RESERVE})


@pytest.fixture
def summarizer(tokenizer: Tokenizer) -> ScriptedLLM:
    """Real tokenizer and template, scripted text: the summary path at test speed."""
    return ScriptedLLM(tokenizer, scripted_summary, n_ctx=40_000)
