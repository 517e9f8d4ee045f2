"""`bench server` at a tiny size: the in-process SmolLM2 beside llama-cpp-python's server on the
same GGUF (the session's server, not a second one), through real sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.server import _print, bench
from testkit.llama_server import LlamaCppServer
from tests.bot.conftest import SHORT_PROMPT, small_registry

# The serving bench's short form: both engines side by side; the full run only.
pytestmark = pytest.mark.slow


async def test_both_engines_side_by_side(
    served_smollm2: LlamaCppServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = await bench(
        model=served_smollm2.model,
        home=tmp_path,
        url=served_smollm2.url,
        turns=2,
        counts=(2, 1),
        window=4096,
        reserve=16,
        # A short head keeps the cold prefill of each engine small on a 2-core box.
        runtime_options={"system_prompt": SHORT_PROMPT, "registry": small_registry()},
    )
    assert report["sessions"] == [1, 2]
    local, server = report["engines"]
    assert (local["engine"], local["kind"]) == ("local", "in process")
    assert (server["engine"], server["kind"]) == ("server", "llama-cpp-python")
    for engine in (local, server):
        assert [p["sessions"] for p in engine["phases"]] == [1, 2]
        for phase in engine["phases"]:
            # Every turn went to the model (none answered from state), none failed.
            assert phase["turns"] == phase["model_turns"] == 2 * phase["sessions"]
            assert phase["failed_turns"] == 0 and phase["turns_per_min"] > 0
        assert engine["first_token_ms_p50"] > 0
        assert engine["prompt_per_turn_mean"] > 0
    # The in-process engine says what it evaluated; it reuses the conversation so far.
    evaluated = local["evaluated_per_turn"]
    assert len(evaluated) == 2 and all(isinstance(n, int) and n > 0 for n in evaluated)
    assert 0 < local["cached_fraction"] < 1
    # llama-cpp-python's server reports no cache figures: unknown, never a guess.
    assert server["evaluated_per_turn"] is None and server["cached_fraction"] is None
    assert any("llama-cpp-python" in note for note in report["notes"])

    _print(report)
    out = capsys.readouterr().out
    assert "server: llama-cpp-python" in out and "unknown" in out
    assert "turns/min, 2 sessions" in out
