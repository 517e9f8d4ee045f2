"""The settings the planner needs, read the way `config.load_settings` layers them, stdlib only.

The planner runs before pydantic is installed, so it reads `config/default.toml` (which a test
keeps identical to the pydantic defaults) and lays `$ANNIE_HOME/config.toml` and `ANNIE_*`
variables (nested keys joined by `__`) over it. It also records which keys the user set:
explicit configuration always wins over what the card table would choose. Validation stays
with `config.load_settings`, which the runtime runs on the same layers.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TOML = ROOT / "config" / "default.toml"
PREFIX = "ANNIE_"


@dataclass(frozen=True)
class Layered:
    """The merged settings tree and the dotted keys the user set (file or environment)."""

    values: dict[str, Any]
    explicit: frozenset[str]
    home: Path

    def get(self, dotted: str) -> Any:
        node: Any = self.values
        for part in dotted.split("."):
            node = node[part]
        return node

    def default(self, dotted: str) -> Any:
        node: Any = _read(DEFAULT_TOML)
        for part in dotted.split("."):
            node = node[part]
        return node


def _read(path: Path) -> dict[str, Any]:
    with path.open("rb") as fh:
        return tomllib.load(fh)


def _leaves(tree: Mapping[str, Any], prefix: str = "") -> set[str]:
    out: set[str] = set()
    for key, value in tree.items():
        if isinstance(value, dict):
            out |= _leaves(value, f"{prefix}{key}.")
        else:
            out.add(f"{prefix}{key}")
    return out


def merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` laid on `base`, section by section (the config files and `ANNIE_*` layers)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_list(text: str) -> list[Any]:
    """A list from an environment string: JSON or TOML (`["cu126", "cu130"]`), or words
    separated by commas or spaces (`cu126,cu130`, `cu126`); an empty string is an empty list."""
    text = text.strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            try:
                value = tomllib.loads(f"v = {text}")["v"]
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"not a list: {text!r} ({exc})") from exc
        if not isinstance(value, list):
            raise ValueError(f"not a list: {text!r}")
        return value
    return [w for w in text.replace(",", " ").split() if w]


def _coerce(text: str, like: Any) -> Any:
    """An environment string as the type of the default it overrides."""
    if isinstance(like, list):
        return parse_list(text)
    if isinstance(like, bool):
        return text.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(like, int):
        return int(text)
    if isinstance(like, float):
        return float(text)
    return text


def annie_home(environ: Mapping[str, str] | None = None) -> Path:
    """`$ANNIE_HOME`, or `~/.local/share/annie`."""
    raw = (os.environ if environ is None else environ).get("ANNIE_HOME", "")
    return Path(raw).expanduser() if raw else Path.home() / ".local" / "share" / "annie"


def load(environ: Mapping[str, str] | None = None) -> Layered:
    env = os.environ if environ is None else environ
    defaults = _read(DEFAULT_TOML)
    home = annie_home(env)
    merged = defaults
    explicit: set[str] = set()
    user_file = home / "config.toml"
    if user_file.is_file():
        user = _read(user_file)
        merged = merge(merged, user)
        explicit |= _leaves(user)
    for name, text in env.items():
        if not name.startswith(PREFIX) or name == "ANNIE_HOME":
            continue
        parts = name[len(PREFIX) :].lower().split("__")
        node: Any = merged
        try:
            for part in parts[:-1]:
                node = node[part]
            like = node.get(parts[-1], "")
        except (KeyError, TypeError, AttributeError):
            continue  # config.load_settings names the unknown key; the plan need not
        try:
            value = _coerce(text, like)
        except ValueError as exc:
            raise ValueError(f"environment variable {name}: {exc}") from exc
        layer: dict[str, Any] = {parts[-1]: value}
        for part in reversed(parts[:-1]):
            layer = {part: layer}
        merged = merge(merged, layer)
        explicit.add(".".join(parts))
    if merged.get("home"):
        home = Path(str(merged["home"])).expanduser()
    return Layered(merged, frozenset(explicit), home)
