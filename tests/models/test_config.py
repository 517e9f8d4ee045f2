"""Settings layers: shipped defaults, then $ANNIE_HOME/config.toml, then ANNIE_* variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import ConfigError, load_settings


def test_defaults_come_from_default_toml(annie_home: Path) -> None:
    settings = load_settings()
    assert settings.context.window == 32768
    assert settings.compaction.tier1_threshold == 0.65
    assert settings.compaction.tier2_threshold == 0.80
    assert settings.home_path == annie_home
    assert settings.models_dir == annie_home / "models"


def test_home_config_overrides_defaults(annie_home: Path) -> None:
    (annie_home / "config.toml").write_text("[context]\nwindow = 4096\n")
    settings = load_settings()
    assert settings.context.window == 4096
    # Budgets scale with the window.
    assert settings.context.budget("history_tail") == 6000 * 4096 // 32768


def test_environment_overrides_home_config(
    annie_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (annie_home / "config.toml").write_text("[server]\nport = 9000\n")
    monkeypatch.setenv("ANNIE_SERVER__PORT", "9100")
    assert load_settings().server.port == 9100


def test_unknown_key_in_home_config_names_key_and_file(annie_home: Path) -> None:
    path = annie_home / "config.toml"
    path.write_text("[models]\nllm_pth = 'x.gguf'\n")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "models.llm_pth" in str(err.value)
    assert str(path) in str(err.value)


def test_unknown_environment_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANNIE_CONTEXT__WINDOWS", "4096")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "ANNIE_CONTEXT__WINDOWS" in str(err.value)


def test_bad_value_is_an_error() -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(context={"window": "large"})
    assert "window" in str(err.value)
