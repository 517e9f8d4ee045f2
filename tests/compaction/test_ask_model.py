"""The bench's question path on the real small model: one answer and one recall flag per fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.compaction import ask_facts
from config import Settings
from memory.store import Store
from models import LLM, Tokenizer
from testkit.sim import simulate, simulator
from testkit.trace import generate

from .test_long_session import trace_tools

# Every planted fact asked of the real model: the full run only.
pytestmark = pytest.mark.slow


async def test_each_planted_fact_gets_the_models_answer(
    llm: LLM, tokenizer: Tokenizer, settings: Settings, tmp_path: Path
) -> None:
    store = Store(tmp_path / "annie.db")
    records, planted = generate(24, seed=5, result_words=(40, 80))
    sim = simulator(
        records,
        settings,
        tokenizer=tokenizer,
        store=store,
        system_prompt="You are Annie.",
        registry=trace_tools(),
    )
    result = await simulate(sim)
    facts = planted[-3:]
    answers = await ask_facts(llm, result.conv, facts, max_tokens=12)
    store.close()
    assert [a["turn"] for a in answers] == [f.turn for f in facts]
    assert all(f.question and f.expect for f in facts)
    for fact, a in zip(facts, answers, strict=True):
        assert isinstance(a["answer"], str) and a["answer"], f"no answer to {fact.question!r}"
        assert a["recalled"] is fact.recalled(a["answer"])
    assert not facts[0].recalled("I do not know.")
