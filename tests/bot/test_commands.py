"""The front ends on the session loop: the terminal chat and `ask`'s model path."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.cli import main
from bot.commands.ask import Asker
from bot.commands.chat import chat
from config import load_settings
from memory.store import Store
from models.base import LLM, Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import make_runtime


async def test_chat_streams_and_prints_context_and_manifest(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(tokenizer, ["Hello! Nice to meet you."])
    runtime = make_runtime(llm, tmp_path)
    inp = io.StringIO("/context\nhi Annie\n\n/manifest\nwhat time is it?\n/context\n/quit\n")
    out = io.StringIO()
    assert await chat(inp=inp, out=out, runtime=runtime) == 0
    text = out.getvalue()
    assert "annie> Hello! Nice to meet you." in text
    assert "fixed overhead:" in text and "seed 003: 3,425" in text
    assert "system_prompt" in text and "tool_schemas" in text
    assert "compaction events: none yet" in text
    assert "request: 'hi Annie'" in text and "load_tool_group(group='web')" in text
    assert "[state path," in text
    assert "model calls (prompt / reused from cache / newly evaluated / generated):" in text
    assert runtime.sessions == []  # closed on the way out


def test_ask_answers_non_state_questions_through_the_model(llm: LLM, tmp_path: Path) -> None:
    settings = load_settings(
        environ={"ANNIE_HOME": str(tmp_path)}, context={"window": 4096, "reserve_output": 48}
    )
    asker = Asker(settings, llm=llm)
    try:
        answer = asker.ask("Say hello to my friend Sam.")
        assert answer.path == "model" and answer.answer.strip()
        assert answer.latency_ms > 0
        state = asker.ask("What time is it?")
        assert state.path == "state"
    finally:
        asker.close()
    reopened = Store(tmp_path / "annie.db")
    kinds = [e.kind for e in reopened.events.find(kinds=["user", "assistant", "manifest"])]
    assert {"user", "assistant", "manifest"} <= set(kinds)
    reopened.close()


def test_chat_with_a_damaged_database_names_the_file(
    annie_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = annie_home / "annie.db"
    db.write_bytes(b"garbage, not sqlite " * 500)
    assert main(["chat"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(db) in err and "Move it aside" in err
    assert db.read_bytes() == b"garbage, not sqlite " * 500


def test_bench_runs_the_benchmark_package_with_the_argv_it_is_given(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # Not sys.argv: a benchmark's options come from the argv handed to the command line. The
    # benchmarks stand above the runtime, so they run as `python -m bench` in a new process.
    assert main(["bench", "context", "--help"]) == 0
    assert "--turns" in capfd.readouterr().out
    assert main(["bench", "nonsense"]) == 2
    assert "invalid choice: 'nonsense'" in capfd.readouterr().err
