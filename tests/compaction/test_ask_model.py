"""The bench's question path on the real small model: one answer and one recall flag per fact."""

from __future__ import annotations

from pathlib import Path

from bot.bench.compaction import ask_facts
from compaction.sim import Simulator
from compaction.trace import generate
from config import Settings
from memory.store import Store
from models import LLM
from models.fakes import ScriptedLLM


async def test_each_planted_fact_gets_the_models_answer(
    llm: LLM, settings: Settings, summarizer: ScriptedLLM, tmp_path: Path
) -> None:
    store = Store(tmp_path / "annie.db")
    sim = Simulator(settings, llm, store, system_prompt="You are Annie.", llm=summarizer)
    records, planted = generate(24, seed=5, result_words=(40, 80))
    result = await sim.run(records)
    facts = planted[-3:]
    answers = await ask_facts(llm, result.conv, facts, max_tokens=12)
    store.close()
    assert [a["turn"] for a in answers] == [f.turn for f in facts]
    assert all(f.question and f.expect for f in facts)
    for fact, a in zip(facts, answers, strict=True):
        assert isinstance(a["answer"], str) and a["answer"], f"no answer to {fact.question!r}"
        assert a["recalled"] is fact.recalled(a["answer"])
    assert not facts[0].recalled("I do not know.")
