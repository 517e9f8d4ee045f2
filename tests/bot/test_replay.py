"""`replay` plays seed 003's session through the real turn: a Session on a Runtime."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.commands.replay import replay_file
from bot.tools.registry import ToolRegistry
from bot.turn.replay import TraceError, TracePlayer, read_trace
from compaction.hooks import no_compaction
from config import load_settings
from context.ledger import Ledger
from memory.store import Store
from models.base import Tokenizer

FIXTURE = Path(__file__).resolve().parents[2] / "bot" / "fixtures" / "seed003_session.jsonl"


def test_the_fixture_has_seed_003s_ten_turns_and_result_sizes(tokenizer: Tokenizer) -> None:
    records = read_trace(FIXTURE)
    assert records[0] == {"type": "session", "window": 16384}
    assert sum(r["type"] == "user" for r in records) == 10
    sizes = [tokenizer.count(r["content"]) for r in records if r["type"] == "tool_result"]
    # Three web searches of about 1.5-1.8k tokens, the emotional arc, the saved note.
    assert all(1400 <= n <= 1800 for n in sizes[:3]), sizes
    assert 400 <= sizes[3] <= 700 and sizes[4] < 20


async def test_replay_rows_match_the_ledger_and_never_overflow(tokenizer: Tokenizer) -> None:
    settings = load_settings(context={"window": 16384})
    store = Store()
    player = TracePlayer(
        read_trace(FIXTURE),
        settings,
        tokenizer=tokenizer,
        store=store,
        registry=ToolRegistry([]),
        system_prompt="You are Annie.",
        hooks_factory=no_compaction,
    )
    result = await player.run()
    assert [r.turn for r in result.turns] == list(range(1, 11))
    used = [r.used for r in result.turns]
    assert used == sorted(used)  # nothing compacts without hooks
    assert result.summary()["overflows"] == 0
    ledger = Ledger(tokenizer, window=16384)
    assert used[-1] == ledger.usage(result.conv).total
    assert result.final_prompt == ledger.codec.render(result.conv.messages(), None, True)
    # The searches are the bloat: they dominate what the turns added.
    assert (
        result.turns[-1].by_component["tool_results"]
        > result.turns[-1].by_component["conversation"]
    )
    events = store.events.find(result.session.id)
    assert sum(e.kind == "tool_result" for e in events) == 5
    # Each recorded result came back from the recorded tool, in the recorded order.
    recorded = [r["content"] for r in read_trace(FIXTURE) if r["type"] == "tool_result"]
    assert [e.content for e in events if e.kind == "tool_result"] == recorded
    # The turns are live turns: the Work Index snapshot was admitted, as it is live.
    assert result.turns[-1].by_component["state"] > 0
    # Every recorded turn went to the model, each call through the scripted model's cache.
    assert [r.tools for r in result.turns if r.tools] == [
        ["web_search"],
        ["web_search"],
        ["web_search"],
        ["search_memory"],
        ["save_note"],
    ]
    rounds = [c for t in result.turns for c in t.calls if c.label.startswith("round")]
    assert len(rounds) == 15 and all(c.reused_tokens > 0 for c in rounds[1:])
    store.close()


def test_cli_json_has_exactly_the_documented_shape(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dump = tmp_path / "prompt.txt"
    code = main(["replay", str(FIXTURE), "--json", "--no-model", "--dump-context", str(dump)])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"window", "turns", "summary"}
    assert out["window"] == 16384
    assert set(out["turns"][0]) == {"turn", "used", "fraction", "by_component", "events"}
    assert set(out["summary"]) == {
        "turns", "peak_used", "peak_fraction", "overflows", "tier1", "tier2", "tier3",
    }  # fmt: skip
    assert out["summary"]["turns"] == 10 and out["summary"]["overflows"] == 0
    text = dump.read_text(encoding="utf-8")
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")
    assert "What's the time?" in text


def test_cli_table_and_window_override(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(FIXTURE), "--no-model", "--window", "32768"]) == 0
    out = capsys.readouterr().out
    assert "window 32,768 tokens" in out and "seed 003: 3,425" in out
    assert out.count("\n") >= 13


def test_a_bad_trace_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "text": "hi"}\n{"type": "nonsense"}\n', encoding="utf-8")
    with pytest.raises(TraceError, match=r"bad\.jsonl:2"):
        read_trace(bad)
    assert main(["replay", str(bad), "--no-model"]) == 2
    assert "bad.jsonl:2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"type": "user"}', '"text" is missing'),
        ('{"type": "user", "text": 7}', '"text" must be a string'),
        ('{"type": "session", "window": "big"}', '"window" must be a positive whole number'),
        ('{"type": "assistant", "tool_calls": {"name": "x"}}', '"tool_calls" must be a list'),
        ('{"type": "assistant", "tool_calls": [{"id": "c1"}]}', 'needs a "name" string'),
        ('{"type": "assistant", "tool_calls": [{"name": "x", "arguments": 3}]}', "an object"),
        ('{"type": "tool_result", "id": "c1"}', '"content" is missing'),
    ],
)
def test_a_bad_trace_field_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, problem: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "text": "hi"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(TraceError, match=r"bad\.jsonl:2") as err:
        read_trace(bad)
    assert problem in str(err.value)
    assert main(["replay", str(bad), "--no-model"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_an_unwritable_dump_path_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "context.txt"
    args = [str(FIXTURE), "--no-model", "--dump-context", str(target)]
    assert main(["replay", *args]) == 2
    assert str(target.parent) in capsys.readouterr().err


async def test_replay_file_uses_the_trace_window_unless_overridden() -> None:
    result, settings = await replay_file(FIXTURE, no_model=True, window=8192)
    assert result.window == 8192 and settings.context.window == 8192
    assert all(r.used + settings.context.output_reserve_tokens <= 8192 for r in result.turns)
