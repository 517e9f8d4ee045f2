"""Settings layers: shipped defaults, then $ANNIE_HOME/config.toml, then ANNIE_* variables."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from config import ConfigError, Settings, load_settings
from config.settings import DEFAULT_TOML


def _flat(tree: dict[str, Any], prefix: str = "") -> dict[str, tuple[str, Any]]:
    """Every leaf as dotted key -> (type name, value), so 10 and 10.0 differ."""
    out: dict[str, tuple[str, Any]] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = (type(value).__name__, value)
    return out


def test_default_toml_documents_exactly_the_defaults() -> None:
    documented = _flat(tomllib.loads(DEFAULT_TOML.read_text()))
    defaults = _flat(Settings().model_dump())
    assert sorted(set(defaults) - set(documented)) == [], "defaults missing from default.toml"
    assert sorted(set(documented) - set(defaults)) == [], "default.toml keys with no setting"
    differ = {k: (documented[k], defaults[k]) for k in defaults if documented[k] != defaults[k]}
    assert differ == {}


def test_loaded_defaults_are_the_models_defaults(annie_home: Path) -> None:
    settings = load_settings()
    assert settings.model_dump(exclude={"home"}) == Settings().model_dump(exclude={"home"})
    assert settings.context.window == 32768
    assert settings.models.stt_prompt.startswith("Vocabulary: Annie")
    assert settings.home_path == annie_home
    assert settings.models_dir == annie_home / "models"


def test_output_reserve_is_the_configured_reserve_capped_at_an_eighth_of_the_window() -> None:
    roomy = load_settings(context={"window": 32768, "reserve_output": 1024}).context
    assert (roomy.reserve_output, roomy.output_reserve_tokens) == (1024, 1024)
    small = load_settings(context={"window": 4096, "reserve_output": 1024}).context
    assert (small.reserve_output, small.output_reserve_tokens) == (1024, 512)


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
