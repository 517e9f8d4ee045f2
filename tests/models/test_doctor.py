"""`python -m bot doctor --json` reports every role with its file and a real smoke test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.commands.doctor import (
    _print_gpu,
    _print_memory,
    calendar_check,
    check_role,
    gpu_proof,
    llm_memory,
)
from config import load_settings
from models.footprint import estimate, read_hparams

ROOT = Path(__file__).resolve().parents[2]


def test_doctor_json_covers_every_role(annie_home: Path) -> None:
    env = {**os.environ, "ANNIE_HOME": str(annie_home), "ANNIE_CONTEXT__WINDOW": "2048"}
    done = subprocess.run(
        [sys.executable, "-m", "bot", "doctor", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["device"] in ("cpu", "cuda")
    assert data["versions"]["llama-cpp-python"] != "not installed"
    for role in ("llm", "stt", "tts", "vad", "embed"):
        entry = data[role]
        assert entry["ok"] is True, entry
        assert Path(entry["path"]).exists()
        assert entry["size"] > 0
        assert entry["reason"]
        assert entry["smoke_ms"] >= 0
    assert data["llm"]["window"] == 2048
    assert data["tts"]["sample_rate"] == 22050
    assert data["stt"]["sample_rate"] == 16000
    assert data["embed"]["dim"] == 384
    assert "annie" in data["stt"]["heard"].lower()
    memory = data["llm"]["memory"]
    expected = estimate(read_hparams(data["llm"]["path"]), 2048, checkpoints=4)
    assert memory["window"] == 2048
    assert memory["architecture"] == expected.architecture
    assert memory["hybrid"] is expected.hybrid
    assert memory["dialect"] in ("json", "xml")
    assert memory["kv_cache_bytes"] == expected.kv_bytes > 0
    assert memory["recurrent_state_bytes"] == expected.recurrent_bytes
    assert memory["checkpoint_half_bytes"] < memory["checkpoint_bytes"]
    assert memory["checkpoints"] == 4
    assert memory["checkpoints_bytes"] == 4 * memory["checkpoint_bytes"]
    assert memory["budget"]["kv"] == memory["kv_cache_bytes"]
    assert memory["budget"]["weights"] == entry_size(data["llm"])


def entry_size(entry: dict[str, object]) -> int:
    return Path(str(entry["path"])).stat().st_size


def test_doctor_reports_a_hybrid_model(qwen35_path: Path) -> None:
    settings = load_settings(
        models={"llm_path": str(qwen35_path), "llm_checkpoints": 2}, context={"window": 1024}
    )
    entry = check_role("llm", settings)
    assert entry["ok"] is True, entry
    memory = entry["memory"]
    assert memory["architecture"] == "qwen35"
    assert memory["hybrid"] is True
    assert (memory["attention_layers"], memory["recurrent_layers"]) == (1, 3)
    assert memory["dialect"] == "xml"
    assert memory["recurrent_state_bytes"] > 0
    assert memory["checkpoints_bytes"] == 2 * memory["checkpoint_bytes"]


def test_doctor_shows_the_budget_line_by_line(
    qwen35_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = load_settings(
        models={"llm_path": str(qwen35_path), "llm_checkpoints": 2, "device": "cpu"},
        context={"window": 1024},
    )
    memory = llm_memory(qwen35_path, settings)
    budget = memory["budget"]
    # The same arithmetic as the plan: weights from the file, KV and state from the header.
    assert budget["place"] == "host"  # on the CPU everything lives in host memory
    assert budget["weights"] == qwen35_path.stat().st_size
    assert budget["kv"] == memory["kv_cache_bytes"] > 0
    assert budget["recurrent"] == memory["recurrent_state_bytes"] > 0
    assert budget["checkpoints_bytes"] == memory["checkpoints_bytes"]
    assert budget["whisper"] == settings.gpu.whisper_mib * 2**20
    assert budget["compute"] > settings.gpu.compute_base_mib * 2**20
    assert budget["on_card"] == sum(
        budget[k] for k in ("weights", "kv", "recurrent", "compute", "whisper", "headroom")
    )
    assert budget["free"] is not None and budget["free"] > 0
    _print_memory(memory)
    text = capsys.readouterr().out
    lines = ("weights", "KV cache", "recurrent state", "compute buffers", "Whisper", "checkpoints")
    for name in lines:
        assert f"          {name}" in text, text
    assert "total in host memory" in text and " free: " in text


def test_doctor_names_a_missing_model_without_crashing(tmp_path: Path) -> None:
    missing = tmp_path / "gone.gguf"
    entry = check_role("llm", load_settings(models={"llm_path": str(missing)}))
    assert entry["ok"] is False
    assert entry["path"] is None
    assert str(missing) in entry["error"]


def test_doctor_proves_the_card_only_on_cuda_and_names_a_cpu_build(
    qwen35_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gpu_proof(load_settings(models={"device": "cpu"}), "cpu") == {"checked": False}
    settings = load_settings(models={"device": "cuda", "llm_path": str(qwen35_path)})
    proof = gpu_proof(settings, "cuda")
    # This machine's llama-cpp-python has no CUDA backend: said, with what to do, before the
    # model is loaded a second time.
    assert proof["checked"] is True and proof["ok"] is False
    assert proof["build"] == "cpu" and proof["offloaded"] is None
    assert proof["why"].startswith("this llama-cpp-python has no CUDA backend (a CPU build)")
    assert "pip uninstall -y llama-cpp-python" in proof["why"]
    _print_gpu({**proof, "stt_why": "no CUDA device. Fix: ..."}, {"runs_on": "cpu"})
    text = capsys.readouterr().out
    assert "[FAIL] gpu" in text
    assert "llama.cpp:   on the CPU: this llama-cpp-python has no CUDA backend" in text
    assert "CTranslate2: Whisper on the CPU: no CUDA device" in text
    _print_gpu(
        {"checked": True, "ok": True, "offloaded": 33, "layers": 33, "device": "CUDA0 (x)"},
        {"runs_on": "cuda"},
    )
    text = capsys.readouterr().out
    assert "33/33 layers on CUDA0 (x)" in text and "Whisper on CUDA" in text


def test_doctor_warns_of_a_calendar_it_cannot_read(tmp_path: Path) -> None:
    environ = {"ANNIE_HOME": str(tmp_path)}
    assert calendar_check(load_settings(environ=environ)) == {"ok": True, "configured": False}
    good = tmp_path / "home.ics"
    good.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:a@t\r\n"
        "SUMMARY:dentist\r\nDTSTART:20261208T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    ok = calendar_check(load_settings(environ=environ | {"ANNIE_CALENDAR__FILES": str(good)}))
    assert ok == {"ok": True, "configured": True, "summary": "1 file, 1 event"}
    bad = tmp_path / "broken.ics"
    bad.write_text("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\n")
    warned = calendar_check(load_settings(environ=environ | {"ANNIE_CALENDAR__FILES": str(bad)}))
    assert not warned["ok"] and str(bad) in warned["error"]
