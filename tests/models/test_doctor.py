"""`python -m bot doctor --json` reports every role with its file and a real smoke test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.commands.doctor import check_role
from config import load_settings

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


def test_doctor_names_a_missing_model_without_crashing(tmp_path: Path) -> None:
    missing = tmp_path / "gone.gguf"
    entry = check_role("llm", load_settings(models={"llm_path": str(missing)}))
    assert entry["ok"] is False
    assert entry["path"] is None
    assert str(missing) in entry["error"]
