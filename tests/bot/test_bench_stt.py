"""`bench stt` in a tiny configuration: its JSON report's shape, and figures that are real."""

from __future__ import annotations

import json

import pytest

from bench.__main__ import main


def test_a_tiny_stt_bench_reports_every_option_side_by_side(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["stt", "--clips", "2", "--noise-clips", "1", "--damaged", "--json"]
    assert main([*argv, "--options", "window_10,threads_1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["clips"] == 2 and out["noise_clips"] == 1 and out["damaged_clips"] == 3
    assert 1.0 <= out["seconds_min"] <= out["seconds_max"] <= 6.0
    assert out["words"] > 0 and out["device"] == "cpu"
    assert list(out["options"]) == ["default", "window_10", "threads_1"]
    for name, f in out["options"].items():
        assert 0 < f["ms_p50"] <= f["ms_p95"], name
        assert f["ratio_p50"] > 0 and f["noise_ms_p50"] > 0, name
        assert 0.0 <= f["wer"] < 0.5, name
        assert 0 <= f["exact"] <= 2 and 0 <= f["same_words_as_default"] <= 2, name
        assert f["noise_phantom"] == 0, name
        assert f["damaged"]["clips"] == 3 and 0.0 <= f["damaged"]["wer"] < 1.0, name
    default = out["options"]["default"]
    assert default["ratio_p50"] == 1.0 and default["same_words_as_default"] == 2
    assert out["options"]["window_10"]["decoding"]["window_s"] == 10.0
    assert out["options"]["threads_1"]["cpu_threads"] == 1
    stages = out["stages"]
    assert "all" in stages and set(stages) <= {"all", "short", "long"}
    steps = {"features_ms", "encoder_30s_ms", "encoder_10s_ms", "decoder_ms", "transcribe_ms"}
    for bucket, found in stages.items():
        assert set(found) == {"clips", *steps}, bucket
        assert all(found[step] > 0 for step in steps), bucket
    assert stages["all"]["clips"] == 1
    # The 30 s window costs the encoder more than a 10 s one: the reason the setting exists.
    assert stages["all"]["encoder_30s_ms"] > stages["all"]["encoder_10s_ms"]


def test_an_unknown_option_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="window_7"):
        main(["stt", "--clips", "1", "--noise-clips", "0", "--options", "window_7"])
