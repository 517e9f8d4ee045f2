"""The resolver picks a file per role, says why, and names a missing or corrupt file."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import load_settings
from models import ModelError, resolve
from models.resolver import ROLES


def test_every_role_resolves_to_a_packaged_model_by_default() -> None:
    settings = load_settings(models={"device": "cpu"})
    for role in ROLES:
        got = resolve(role, settings)
        assert got.path.exists(), role
        assert got.size_bytes > 0
        assert "package" in got.reason


def test_missing_configured_file_is_named_with_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "model.gguf"
    settings = load_settings(models={"llm_path": str(missing)})
    with pytest.raises(ModelError) as err:
        resolve("llm", settings)
    message = str(err.value)
    assert str(missing) in message
    assert "models.llm_path" in message


def test_corrupt_gguf_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a model at all")
    settings = load_settings(models={"llm_path": str(bad)})
    with pytest.raises(ModelError) as err:
        resolve("llm", settings)
    assert str(bad) in str(err.value)
    assert "GGUF" in str(err.value)


def test_a_gguf_in_annie_home_wins_over_the_package(annie_home: Path) -> None:
    packaged = resolve("llm", load_settings(models={"device": "cpu"}))
    target = annie_home / "models" / "llm" / "mine.gguf"
    target.parent.mkdir(parents=True)
    target.symlink_to(packaged.path)
    got = resolve("llm", load_settings(models={"device": "cpu"}))
    assert got.path == target
    assert str(annie_home / "models") in got.reason


def test_a_corrupt_gguf_in_annie_home_is_named_with_the_fix(annie_home: Path) -> None:
    bad = annie_home / "models" / "llm" / "mine.gguf"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not a model at all")
    with pytest.raises(ModelError) as err:
        resolve("llm", load_settings(models={"device": "cpu"}))
    message = str(err.value)
    assert str(bad) in message and "GGUF" in message
    assert str(annie_home / "models") in message and "move it away" in message


def test_configured_path_wins_and_says_so() -> None:
    packaged = resolve("tts", load_settings())
    got = resolve("tts", load_settings(models={"tts_path": str(packaged.path)}))
    assert got.path == packaged.path
    assert got.reason == "models.tts_path in config"


def test_voice_without_its_config_is_named(tmp_path: Path) -> None:
    voice = tmp_path / "voice.onnx"
    voice.write_bytes(b"\x08\x01")
    with pytest.raises(ModelError) as err:
        resolve("tts", load_settings(models={"tts_path": str(voice)}))
    assert f"{voice}.json" in str(err.value)


def test_unknown_role_is_rejected() -> None:
    with pytest.raises(ModelError, match="unknown model role 'music'"):
        resolve("music", load_settings())
