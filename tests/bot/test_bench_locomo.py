"""The LoCoMo bench on a small conversation in LoCoMo's own layout: its report and its errors."""

from __future__ import annotations

import argparse
import json
import zipfile
from pathlib import Path

import pytest

from bench.__main__ import main
from bench.locomo import INNER, add_arguments, evidence_ids, token_f1
from config import load_settings

FIXTURE = Path(__file__).parents[1] / "fixtures" / "locomo" / "mini.json"


def _zip(tmp_path: Path, name: str = "mini.json", inner: str = INNER) -> Path:
    path = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.write(FIXTURE, inner + name)
    return path


def test_a_small_conversation_reports_the_lane_by_category_beside_plain_cosine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["locomo", str(_zip(tmp_path)), "--json"]) == 0
    f = json.loads(capsys.readouterr().out)
    assert f["conversations"] == ["mini"]
    mini = f["per_conversation"]["mini"]
    assert mini["turns"] == 21 and mini["sessions"] == 3 and mini["questions"] == 12
    # The day after the last session with turns (session 4 has a date and no turns).
    assert mini["asked_at"].startswith("2024-04-03T12:00")
    cats = f["categories"]
    assert set(cats) == {"1", "2", "3", "4", "5"}
    assert [cats[n]["name"] for n in "12345"] == [
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
    ]
    assert [cats[n]["questions"] for n in "12345"] == [3, 3, 0, 4, 2]
    assert f["answerable"]["questions"] == 10 and f["answerable"]["unscored"] == 0
    # "What kind of dog did Tom adopt?" and the other plain questions find their turn.
    assert cats["4"]["lane_any"] >= 0.75 and cats["4"]["baseline_top3_any"] >= 0.75
    for c in [*cats.values(), f["answerable"]]:
        assert 0.0 <= c["lane_all"] <= c["lane_any"] <= c["top10_any"] <= 1.0
        assert c["baseline_top3_all"] <= c["baseline_top3_any"] <= c["baseline_top10_any"]
        assert c["sure_without_evidence"] <= c["sure"] + 1e-9
    # Adversarial questions are counted apart: their sureness is false certainty.
    assert cats["5"]["false_certainty"] == cats["5"]["sure"]
    assert "false_certainty" not in f["answerable"]
    assert f["lane"] == load_settings().context.evidence_hits
    assert f["top"] == 10 and f["answers"] is False
    assert 0 < f["lane_tokens_mean"] <= f["lane_tokens_p95"] + 1
    assert isinstance(f["tokens_exact"], bool) and f["tokenizer"]
    assert 0 < f["recall_ms_p50"] <= f["recall_ms_p95"]
    assert f["import_s"] >= 0 and f["ask_s"] > 0


def test_a_bad_path_or_a_zip_without_locomo_is_an_error_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["locomo", str(tmp_path / "missing.zip")]) == 2
    assert "missing.zip: no such file" in capsys.readouterr().out
    not_zip = tmp_path / "not.zip"
    not_zip.write_text("hello", encoding="utf-8")
    assert main(["locomo", str(not_zip)]) == 2
    assert "not a zip file" in capsys.readouterr().out
    other = tmp_path / "other"
    other.mkdir()
    assert main(["locomo", str(_zip(other, inner="elsewhere/")), "--json"]) == 2
    assert f"no {INNER}N.json inside" in capsys.readouterr().out
    assert main(["locomo", str(_zip(tmp_path)), "--conversations", "26,mini"]) == 2
    assert "no conversation 26 (it holds mini)" in capsys.readouterr().out


def test_options_evidence_and_f1_read_as_locomo_writes_them(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([str(tmp_path), "--conversations", "26,30", "--answers", "--json"])
    assert args.answers and args.json and args.conversations == "26,30"
    assert evidence_ids(["D8:6; D9:17", "D:11:26", "D", "D1:3"]) == {
        "D8:6",
        "D9:17",
        "D11:26",
        "D1:3",
    }
    assert token_f1("A beagle.", "a beagle") == 1.0
    assert token_f1("not mentioned", "2 March 2024") == 0.0
    assert token_f1("on 2 March", "2 March 2024") == pytest.approx(2 / 3)
