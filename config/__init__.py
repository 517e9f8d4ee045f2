"""Annie's configuration: the defaults (documented in default.toml), then $ANNIE_HOME/config.toml,
then ANNIE_* variables."""

from config.settings import ConfigError, Settings, annie_home, load_settings

__all__ = ["ConfigError", "Settings", "annie_home", "load_settings"]
