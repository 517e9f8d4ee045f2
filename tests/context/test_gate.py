"""The evaluation gate: a lived session exported and replayed, the token report read back from
the event log, and the committed baseline held (first-call tokens, protected facts, routing).

Everything runs for real: the shipped tools on a real SQLite file, the scripted model on the
real template and tokenizer, the real embedder and the state path's classifier.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import gate, scorecard
from bench.token_log import read_calls, report
from bot.commands.export import ExportError, session_trace
from bot.turn.replay import read_trace
from config import load_settings
from context.intents import IntentIndex
from memory.store import Store
from models import Embedder, Tokenizer
from testkit.gate_session import TURNS, scripted_session

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


async def test_a_lived_session_exports_as_a_trace_that_replays(
    tokenizer: Tokenizer, embedder: Embedder, annie_home: Path
) -> None:
    settings = load_settings(context={"window": 4096})
    store = Store(settings.db_path)
    sid = await scripted_session(settings, store, tokenizer, embedder)
    trace = session_trace(store, sid)

    # The user's words in order; the state path's answer stands as a reply; each call has its
    # result right after it under a renumbered id; the closed session ends with a disconnect.
    assert trace[0] == {"type": "session", "window": 4096}
    assert [r["text"] for r in trace if r["type"] == "user"] == [t for t, _ in TURNS]
    pending = next(i for i, r in enumerate(trace) if r.get("text") == "Is anything pending on me?")
    assert trace[pending + 1]["type"] == "assistant"
    assert "Renew the car insurance by Friday" in trace[pending + 1]["text"]
    calls = [c for r in trace for c in r.get("tool_calls") or []]
    assert [(c["id"], c["name"]) for c in calls] == [
        ("c1", "create_task"),
        ("c2", "save_note"),
        ("c3", "list_tasks"),
    ]
    results = [r for r in trace if r["type"] == "tool_result"]
    assert [r["id"] for r in results] == ["c1", "c2", "c3"]
    assert "Renew the car insurance by Friday" in results[2]["content"]
    assert trace[-1] == {"type": "disconnect"}

    # The token report reads the same session back from the log: one first call per model
    # turn (the state path's turn has none), every lane, what each turn evaluated.
    rep = report(read_calls(store, [sid]))
    assert rep["turns"] == len([t for t, replies in TURNS if replies])
    assert rep["overflows"] == 0
    assert rep["first_call"]["p50"] > rep["by_lane"]["policy"]["p50"] > 0
    assert rep["evaluated_per_turn"]["turns_reported"] == rep["turns"]
    assert rep["evaluated_per_turn"]["p50"] < rep["first_call"]["p50"]  # the prefix is reused
    store.close()

    # The command line: the same trace on stdout, which `replay` plays; unknown ids are an
    # error that says how to find the right one.
    out = _cli("export", sid)
    assert out.returncode == 0, out.stderr[-2000:]
    assert [json.loads(line) for line in out.stdout.splitlines()] == trace
    path = annie_home / "trace.jsonl"
    path.write_text(out.stdout, encoding="utf-8")
    assert len(read_trace(path)) == len(trace)
    played = _cli("replay", str(path), "--no-model", "--json")
    assert played.returncode == 0, played.stderr[-2000:]
    assert json.loads(played.stdout)["summary"]["turns"] == len(TURNS)
    missing = _cli("export", "sess-99")
    assert missing.returncode == 2 and "export --list" in missing.stderr
    listed = _cli("export", "--list")
    assert listed.returncode == 0 and listed.stdout.startswith(sid)
    tokens = _cli("bench", "tokens", "--json")  # the latest session of $ANNIE_HOME
    assert tokens.returncode == 0, tokens.stderr[-2000:]
    assert json.loads(tokens.stdout)["first_call"] == rep["first_call"]


def test_export_refuses_what_it_cannot_export(tmp_path: Path) -> None:
    store = Store(tmp_path / "annie.db")
    empty = store.sessions.start()
    for bad, said in (("sess-7", "no session sess-7"), ("bogus", "not a session id")):
        try:
            session_trace(store, bad)
        except ExportError as exc:
            assert said in str(exc) and "export --list" in str(exc)
        else:
            raise AssertionError(f"{bad} was exported")
    try:
        session_trace(store, empty)
    except ExportError as exc:
        assert "no user turns" in str(exc)
    else:
        raise AssertionError("an empty session was exported")
    store.close()


def test_the_check_names_each_regression_with_before_and_after() -> None:
    before = json.loads(gate.BASELINE.read_text(encoding="utf-8"))
    assert gate.check(before, before) == []
    after = copy.deepcopy(before)
    errands = after["traces"]["errands"]
    p95 = before["traces"]["errands"]["first_call_p95"]
    errands["first_call_p95"] = int(p95 * 1.12)
    lost = errands["protected"].pop(0)
    after["routing"]["recall"] = 0.9
    failures = gate.check(before, after)
    assert len(failures) == 3, failures
    assert f"{p95:,} -> {int(p95 * 1.12):,}" in failures[0]
    assert lost in failures[1]
    assert "-> 0.9" in failures[2]
    # Within 10% passes.
    errands["first_call_p95"] = int(p95 * 1.09)
    errands["protected"].insert(0, lost)
    after["routing"]["recall"] = before["routing"]["recall"]
    assert gate.check(before, after) == []


def _hold(after: dict[str, Any]) -> None:
    before = json.loads(gate.BASELINE.read_text(encoding="utf-8"))
    failures = gate.check(before, after)
    assert failures == [], "\n".join([gate.table(before, after), *failures])
    for name, figures in after["traces"].items():
        assert figures["lost"] == [] and figures["overflows"] == 0, name
        assert figures["protected"], name


def test_releases_hold_the_committed_baseline(
    tokenizer: Tokenizer, embedder: Embedder, index: IntentIndex
) -> None:
    """The seed-003 and exported traces, and the held-out routing, against the baseline. To
    change a budget, write a new baseline in the same commit
    (`python -m bot bench tokens --write-baseline tests/fixtures/gate/baseline.json`) and put
    the before and after it prints in the commit message."""
    _hold(gate.measure(tokenizer, embedder, index, names=("seed003", "exported")))


@pytest.mark.slow
def test_the_long_errands_trace_holds_the_committed_baseline(
    tokenizer: Tokenizer, embedder: Embedder
) -> None:
    """The errands trace (150 turns, compacting at 8k) against the same baseline."""
    _hold(gate.measure(tokenizer, embedder, None, names=("errands",)))


def test_the_scorecard_puts_each_competency_on_one_line() -> None:
    baseline = json.loads(gate.BASELINE.read_text(encoding="utf-8"))
    tokens = {"by_lane": {"tools": {"p50": 1423, "p95": 1500}},
              "omissions": {"reasons": [["tool group 'web' not loaded", 9]]}}  # fmt: skip
    card = {
        "tokenizer": baseline["tokenizer"],
        "routing": baseline["routing"],
        "traces": baseline["traces"],
        "long_session": {
            "turns": 150,
            "window": 8192,
            "compactions": 5,
            "approval": 5,
            "task": 4,
            "corrections": [4, 4],
            "facts": [19, 20],
            "goal": True,
            "overflows": 0,
            "tokens": tokens,
        },
        "recall": None,
    }
    lines = scorecard.lines(card)
    names = [line.split()[0] for line in lines[1:]]
    assert names[:6] == ["status", "corrections", "approvals", "long", "tool", "retrieval"]
    assert names[6:] == ["tokens"] * len(baseline["traces"])
    assert "open task in context after 4/5 compactions" in lines[4]
    assert "Recall@k not measured" in lines[6]
    card["recall"] = {"recall_at_1": 0.8, "recall_at_5": 0.96, "false_certainty": 0.005,
                      "sure": 0.55, "notes": 400, "questions": 40}  # fmt: skip
    assert "false certainty 0.5%, sure of 55.0% (400 notes" in scorecard.lines(card)[6]
    assert all("python -m bot bench" in line for line in lines[1:] if "not measured" not in line)
