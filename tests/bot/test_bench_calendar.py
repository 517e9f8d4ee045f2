"""`bench calendar` on a small generated calendar: its figures, side by side with the library."""

from __future__ import annotations

import json

import pytest

from bench.__main__ import main


def test_a_small_calendar_reports_each_figure_beside_the_plain_library(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["calendar", "--events", "60", "--json"]) == 0
    f = json.loads(capsys.readouterr().out)
    assert f["events"] == 60 and sum(f["kinds"].values()) == 60
    for name in ("between", "next_of", "next_of_lazy"):
        assert f[name]["calls"] == 200 and 0 < f[name]["p50"] <= f[name]["p99"]
    assert f["library_between"]["calls"] == 20 and f["between"]["instances"] > 0
