"""`bench egress` on a small store: the figures it prints are there, and the check it times
lets every clean request through and holds back every leaking one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.egress import measure

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_times_clean_and_leaking_requests() -> None:
    figures = measure(items=200, requests=60)
    assert figures["items"] == 200
    assert (figures["clean"]["refused"], figures["clean"]["requests"]) == (0, 60)
    assert (figures["leaking"]["refused"], figures["leaking"]["requests"]) == (60, 60)
    for row in ("clean", "leaking", "plain_scan"):
        assert 0 < figures[row]["p50_ms"] <= figures[row]["p99_ms"]


def test_the_command_prints_the_table() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot", "bench", "egress", "--items", "100", "--requests", "20"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "egress check, 100 private items" in done.stdout
    assert "refused 0/20" in done.stdout and "refused 20/20" in done.stdout
    assert "egress refused" not in done.stderr  # refusals are not printed while being timed
