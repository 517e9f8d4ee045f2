"""`bench voice` in the suite, scaled down: the real server in a child process.

One fresh connection in the default (semantic) endpointing mode speaks a status question at
once, then asks the model; three pause fixtures are played. The fixed window's turn ends are
the voice tests', and barge-in is left to the full bench and the voice tests. The figures are
not held to their targets here (the suite shares the CPU); what is checked is that every
figure is there, that the client's voice-to-voice includes the server's, and that the counts
add up.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from bench.voice import MODES, bench
from bench.voice_client import false_alarm_sounds
from bench.voice_report import STAGES

# The voice bench's short form: a server process per run; the full run only.
pytestmark = pytest.mark.slow


async def test_bench_voice_measures_at_the_client(tmp_path: Path) -> None:
    args = argparse.Namespace(
        first=1,
        turns=1,
        cutoffs=2,
        barge_ins=0,
        false_alarms=0,
        listen=0.5,
        window=4096,
        modes="semantic",
    )
    r = await bench(tmp_path, args, ["semantic"])
    assert set(r["modes"]) == {"semantic"} and "semantic" in MODES
    for mode, got in r["modes"].items():
        assert got["server_alive"], got.get("server_log")
        assert got["failed"] == 0, (mode, got)
        turns = got["turns"]
        for key in ("first", "later", "state", "model"):
            assert turns[key] and turns[key]["n"] >= 1, (mode, key, turns)
        missing = [s for s in STAGES if s not in got["stages"] and s != "first_clause"]
        assert missing == [], (mode, got["stages"])
        for sample in got["samples"]:
            # Heard at the client, a turn takes the transport both ways longer than the
            # server's own clock says.
            assert sample["client_ms"] > sample["server_ms"] > 0, (mode, sample)
        cut = got["cutoffs"]
        assert cut["played"] == 2
        assert 0 <= cut["cut"] <= cut["played"], cut
        assert cut["heard"] >= 1, cut
    checks = r["targets"]
    assert set(checks["semantic"]) >= {"state_p50_ms", "state_p95_ms", "model_p50_ms"}
    assert "cutoff_rate" in checks["semantic"]


def test_the_false_alarm_sounds_are_short_and_fixed() -> None:
    sounds = false_alarm_sounds()
    assert set(sounds) == {"cough", "clicks"}
    assert all(s.dtype == np.int16 for s in sounds.values())
    assert len(sounds["cough"]) == int(0.18 * 48000) and len(sounds["clicks"]) == 12000
    again = false_alarm_sounds()
    assert all(np.array_equal(sounds[k], again[k]) for k in sounds)  # seeded: every run alike
