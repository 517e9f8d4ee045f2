"""Figures an engine does not report are shown as unknown, never as 0: the chat's /context
table on a real served call (llama-cpp-python's server reports no cache figures) beside a
local call's known ones."""

from __future__ import annotations

from pathlib import Path

from bot.commands.chat import call_line
from context.ledger import Ledger
from models import LLM, load_llm
from models.base import CallStats
from testkit.llama_server import LlamaCppServer
from tests.conftest import served_settings


async def test_a_served_call_without_cache_figures_shows_question_marks(
    served_smollm2: LlamaCppServer, tmp_path: Path
) -> None:
    llm = load_llm(served_settings(served_smollm2, tmp_path, 2048))
    prompt = llm.render([{"role": "user", "content": "Say hello."}])
    async for _ in llm.stream(prompt, max_tokens=4):
        pass
    ledger = Ledger(llm, window=2048)
    rec = ledger.record_call(llm.last_stats, turn=1)
    assert rec.cache_reported is False
    assert rec.prompt_tokens == llm.count(prompt)  # the size is still exact
    line = call_line(rec)
    assert line.split()[3:6] == [f"{rec.prompt_tokens:,}", "?", "?"], line
    assert "full re-prefill" not in line  # unknown reuse is not a known full re-prefill


def test_a_local_call_keeps_its_figures(llm: LLM) -> None:
    stats = CallStats(prompt_tokens=1200, reused_tokens=1000, evaluated_tokens=200)
    rec = Ledger(llm, window=2048).record_call(stats, turn=2)
    assert rec.cache_reported is True
    assert call_line(rec).split()[3:6] == ["1,200", "1,000", "200"]
    cold = CallStats(prompt_tokens=900, evaluated_tokens=900, full_reprefill=True)
    assert call_line(Ledger(llm, window=2048).record_call(cold, turn=3)).endswith("full re-prefill")
