"""Typed settings for every tunable, read in layers with unknown keys rejected by name.

The defaults are the values written in the models below, and only there. The shipped
`config/default.toml` documents them, key by key with the reason for each, as a template for
a user's own file; a test keeps it identical to these models, so it is never read at load.
Layers over the defaults: `$ANNIE_HOME/config.toml`, then `ANNIE_*` environment variables
(nested keys joined by `__`). Each layer is checked against the schema before it is merged,
so a typo is an error naming the key and where it came from instead of a silently ignored
setting.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from provision.settings import annie_home, merge, parse_list

# Documents the defaults (see the module docstring); never read when loading settings.
DEFAULT_TOML = Path(__file__).with_name("default.toml")
ENV_PREFIX = "ANNIE_"


class ConfigError(ValueError):
    """A configuration problem, with the key and the file (or variable) it came from."""


def _env_list(value: Any) -> Any:
    """A list setting given as a string (an environment override) read as a list."""
    if not isinstance(value, str):
        return value
    try:
        return parse_list(value)
    except RecursionError:  # JSON's parser recurses per bracket; pydantic reports ValueError
        raise ValueError(f"not a list: brackets nested too deeply in {value[:40]!r}...") from None


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ServerSettings(_Section):
    host: str = "127.0.0.1"
    port: int = 8765
    token: str = ""
    max_sessions: int = 2
    # Seconds an answered offer has to connect (ICE and DTLS) before it is closed and its
    # session slot freed; aiortc's own checks would hold it for about a minute.
    connect_timeout_s: float = Field(default=15.0, gt=0)
    max_body_bytes: int = 65536
    allowed_hosts: list[str] = []
    # Serve the home network too (`serve --lan`): loopback and every LAN address, over HTTPS.
    lan: bool = False
    # A certificate and key of the user's own (PEM files) instead of the ones Annie makes.
    tls_cert: str = ""
    tls_key: str = ""


class ModelSettings(_Section):
    device: str = "auto"
    llm_backend: Literal["local", "server"] = "local"
    llm_url: str = ""
    llm_key: str = ""
    llm_model: str = ""
    llm_template: str = ""
    llm_timeout_s: float = 60.0
    llm_path: str = ""
    llm_repo: str = "unsloth/Qwen3.5-9B-GGUF"
    llm_file: str = "Qwen3.5-9B-Q4_K_M.gguf"
    llm_gpu_layers: int = -1
    llm_threads: int = 0
    llm_temperature: float = 0.7
    llm_top_p: float = 0.8
    llm_top_k: int = 20
    llm_seed: int = 0
    # How many saved model states (llama.cpp's, at turn boundaries) to keep in host memory;
    # not compaction's checkpoints, whatever the key's name.
    llm_checkpoints: int = 4
    stt_path: str = ""
    stt_model: str = "small.en"
    stt_beam_size: int = 1
    stt_prompt: str = "Vocabulary: Annie, tasks, pending, reminders, notes, context window."
    # Seconds of audio the speech encoder reads; below 30, utterances that fit are encoded in
    # a shorter window: faster on a CPU, but some words change (`bench stt`).
    stt_window_s: float = Field(default=30.0, gt=0.0, le=30.0)
    tts_path: str = ""
    vad_path: str = ""
    turn_path: str = ""
    embed_path: str = ""
    allow_download: bool = True
    hub_url: str = "https://huggingface.co"
    llm_sha256: str = ""


class BudgetSettings(_Section):
    policy: int = 4000
    tools: int = 3000
    state: int = 2000
    history_tail: int = 6000
    evidence: int = 8000
    briefing: int = 750
    tool_result: int = 2000


class ContextSettings(_Section):
    window: int = 32768
    reserve_output: int = 1024
    max_tool_rounds: int = 4
    warm_up: bool = True
    system_prompt_file: str = "system_prompt.md"
    evidence_hits: int = 8
    evidence_min_similarity: float = 0.35
    # The most tokens one turn's recall may add to the evidence lane at a 32k window, scaled
    # with the window as the lanes' budgets are (`turn_evidence`, `context.admission`).
    evidence_turn_tokens: int = 800
    # Lanes are held to their budgets (trimmed within themselves, idle tool groups unloaded,
    # a long raw history folded in idle time) once the prompt passes this many tokens.
    hold_lanes_above: int = 8192
    # A tool group loaded mid-session and not called for this many turns is unloaded.
    unload_tool_groups_after: int = 6
    budgets: BudgetSettings = BudgetSettings()

    @property
    def output_reserve_tokens(self) -> int:
        """The tokens actually kept for the answer: the configured `reserve_output`, but at
        most an eighth of the window. Everything that sizes a prompt or an answer uses this.

        At small windows a fixed 1,024 would cap the prompt below the tier-2 threshold, so
        tier 2 could only ever run forced.
        """
        return max(1, min(self.reserve_output, self.window // 8))

    def turn_evidence(self) -> int:
        """What one turn's recall may add to the evidence lane at this window: the 32k figure
        (`evidence_turn_tokens`) scaled by window / 32768, as the lanes' budgets are."""
        return max(1, int(self.evidence_turn_tokens * min(1.0, self.window / 32768)))

    def budget(self, lane: str) -> int:
        """A lane's budget at this window: the 32k figure scaled by window / 32768."""
        base: int = getattr(self.budgets, lane)
        return max(1, int(base * min(1.0, self.window / 32768)))


class CompactionSettings(_Section):
    tier1_threshold: float = 0.65
    tier2_threshold: float = 0.80
    tier1_target: float = 0.45
    tier2_target: float = 0.40
    keep_recent_tool_results: int = 2
    summary_max_tokens: int = 384
    turn_summary_s: float = 6.0
    tier3_summary_s: float = 10.0


class VadSettings(_Section):
    threshold: float = 0.5
    turn_detection: Literal["semantic", "silence"] = "semantic"
    turn_short_silence_ms: int = 200
    turn_threshold: float = 0.5
    turn_recheck_ms: int = 100
    turn_recheck_until_ms: int = 500
    turn_recheck_threshold: float = 0.9
    turn_max_silence_ms: int = 1500
    # The words' own end-of-turn signal beside Smart Turn (`bot.voice.end_of_turn`): words
    # whose chance of ending is under `turn_words_hold` hold the turn open up to
    # turn_max_silence_ms, whatever the audio says; at or over `turn_words_done`, an audio
    # verdict over `turn_agree_threshold` ends the turn (the two agree).
    turn_words: bool = True
    turn_words_hold: float = Field(default=0.05, ge=0.0, le=1.0)
    turn_words_done: float = Field(default=0.3, ge=0.0, le=1.0)
    turn_agree_threshold: float = Field(default=0.2, ge=0.0, le=1.0)
    silence_ms: int = 500
    min_speech_ms: int = 250
    pre_roll_ms: int = 200
    barge_in_guard_ms: int = 300
    barge_in_min_speech_ms: int = 224
    barge_in_pause_ms: int = 32
    barge_in_resume_ms: int = 250
    barge_in_echo_db: float = 2.0
    partial_transcript_ms: int = 1000


class ToolSettings(_Section):
    search_backend: Literal["auto", "ddgs", "searxng"] = "auto"
    web_search_url: str = ""
    search_engines: str = "auto"
    fetch_max_bytes: int = 2_000_000
    fetch_max_chars: int = 20_000
    fetch_timeout_s: float = 10.0
    fetch_allow_private: bool = False
    approval_ttl_s: int = 300
    web_approval: Literal["ask", "session", "never_ask"] = "ask"
    timeout_s: float = 30.0


class SpeechSettings(_Section):
    spoken_words: int = Field(default=60, ge=1)
    spoken_sentences: int = Field(default=3, ge=0)
    written_words: int = Field(default=400, ge=1)


class CalendarSettings(_Section):
    # .ics files, or folders of them, that memory/calendar.py reads; read locally, never fetched.
    files: list[str] = []
    # An .ics (or webcal://) URL the user's calendar app publishes. Off ("") by default: set, it
    # is fetched in the background every `refresh_minutes` (bot/calendar_feed.py), the one
    # request Annie makes without a yes each time, through the pinned, capped client and the
    # egress check. `url_allow_private`: the calendar server is on the home network.
    url: str = ""
    refresh_minutes: int = Field(default=30, ge=1)
    url_timeout_s: float = Field(default=20.0, gt=0)
    url_max_bytes: int = Field(default=10_000_000, ge=1024)
    url_allow_private: bool = False

    @field_validator("files", mode="before")
    @classmethod
    def _list_from_env(cls, value: Any) -> Any:
        """An environment override is a string: `~/cal.ics`, `a.ics,b.ics` or `["a.ics"]`."""
        return _env_list(value)


class GpuTier(_Section):
    """One row of the card table: at least this much free VRAM gets this model and window."""

    min_free_gib: float
    size: str
    quant: str
    repo: str
    file: str
    file_bytes: int
    window: int


class GpuSettings(_Section):
    llama_wheel_index: str = "https://abetlen.github.io/llama-cpp-python/whl"
    llama_wheel_variants: list[str] = []
    llama_wheel_min_version: str = "0.3.36"
    torch_index: str = "https://download.pytorch.org/whl"
    torch_variants: list[str] = []
    torch_version: str = "2.13.0"
    torch_cuda: bool = False
    pypi_index: str = "https://pypi.org/simple"
    nvcc_dirs: list[str] = ["/usr/local/cuda/bin", "/usr/local/cuda-*/bin", "/opt/cuda/bin"]
    probe_timeout_s: float = 3.0
    compute_base_mib: int = 512
    whisper_mib: int = 768
    headroom_mib: int = 512
    host_reserve_gib: float = 4.0
    min_window: int = 8192
    tiers: list[GpuTier] = [
        GpuTier(
            min_free_gib=14.0,
            size="9B",
            quant="Q8_0",
            repo="unsloth/Qwen3.5-9B-GGUF",
            file="Qwen3.5-9B-Q8_0.gguf",
            file_bytes=9_527_502_048,
            window=32768,
        ),
        GpuTier(
            min_free_gib=9.5,
            size="9B",
            quant="Q4_K_M",
            repo="unsloth/Qwen3.5-9B-GGUF",
            file="Qwen3.5-9B-Q4_K_M.gguf",
            file_bytes=5_680_522_464,
            window=32768,
        ),
        GpuTier(
            min_free_gib=7.0,
            size="4B",
            quant="Q4_K_M",
            repo="unsloth/Qwen3.5-4B-GGUF",
            file="Qwen3.5-4B-Q4_K_M.gguf",
            file_bytes=2_740_937_888,
            window=32768,
        ),
        GpuTier(
            min_free_gib=4.5,
            size="4B",
            quant="Q4_K_M",
            repo="unsloth/Qwen3.5-4B-GGUF",
            file="Qwen3.5-4B-Q4_K_M.gguf",
            file_bytes=2_740_937_888,
            window=16384,
        ),
    ]

    @field_validator("llama_wheel_variants", "torch_variants", "nvcc_dirs", mode="before")
    @classmethod
    def _list_from_env(cls, value: Any) -> Any:
        """An environment override is a string: `cu126`, `cu126,cu130` or `["cu126"]`."""
        return _env_list(value)


class Settings(BaseSettings):
    """All of Annie's settings. Build it with `load_settings()`, not directly."""

    model_config = SettingsConfigDict(extra="forbid", validate_assignment=True)

    home: str = ""
    server: ServerSettings = ServerSettings()
    models: ModelSettings = ModelSettings()
    context: ContextSettings = ContextSettings()
    compaction: CompactionSettings = CompactionSettings()
    vad: VadSettings = VadSettings()
    tools: ToolSettings = ToolSettings()
    speech: SpeechSettings = SpeechSettings()
    calendar: CalendarSettings = CalendarSettings()
    gpu: GpuSettings = GpuSettings()

    @property
    def home_path(self) -> Path:
        return Path(self.home).expanduser() if self.home else annie_home()

    @property
    def db_path(self) -> Path:
        return self.home_path / "annie.db"

    @property
    def models_dir(self) -> Path:
        return self.home_path / "models"

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: Any, init_settings: Any, *sources: Any, **named: Any
    ) -> tuple[Any, ...]:
        # Layering is done by load_settings(), which checks each layer by name first;
        # only the merged init values reach pydantic.
        return (init_settings,)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    # tomllib decodes the whole file first and parses nested arrays by recursion.
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nested too deeply") from exc


def _check_keys(
    data: dict[str, Any], model: type[BaseModel], origin: str, prefix: str = ""
) -> None:
    for key, value in data.items():
        field = model.model_fields.get(key)
        dotted = f"{prefix}{key}"
        if field is None:
            known = ", ".join(sorted(model.model_fields))
            raise ConfigError(f"unknown config key '{dotted}' in {origin} (known here: {known})")
        sub = field.annotation
        if isinstance(value, dict):
            if not (isinstance(sub, type) and issubclass(sub, BaseModel)):
                raise ConfigError(f"config key '{dotted}' in {origin} is a value, not a section")
            _check_keys(value, sub, origin, dotted + ".")


def _env_layer(environ: dict[str, str]) -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name == "ANNIE_HOME":
            continue
        parts = name[len(ENV_PREFIX) :].lower().split("__")
        node = layer
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(
                    f"environment variable {name} sets a key inside '{part}', which another "
                    f"ANNIE_ variable sets as a value; keep one of them"
                )
        node[parts[-1]] = value
        try:
            _check_keys(_nested(parts, value), Settings, f"environment variable {name}")
        except ConfigError as exc:
            raise ConfigError(f"unknown config key in environment variable {name}") from exc
    return layer


def _nested(parts: list[str], value: str) -> dict[str, Any]:
    out: dict[str, Any] = {parts[-1]: value}
    for part in reversed(parts[:-1]):
        out = {part: out}
    return out


def load_settings(environ: dict[str, str] | None = None, **overrides: Any) -> Settings:
    """The defaults, then $ANNIE_HOME/config.toml, then ANNIE_* variables, then overrides."""
    env = dict(os.environ if environ is None else environ)
    merged: dict[str, Any] = {}
    home = Path(env["ANNIE_HOME"]).expanduser() if env.get("ANNIE_HOME") else None
    user_file = (home or annie_home()) / "config.toml"
    if user_file.is_file():
        user = _read_toml(user_file)
        _check_keys(user, Settings, str(user_file))
        merged = merge(merged, user)
    merged = merge(merged, _env_layer(env))
    if home is not None:
        merged["home"] = str(home)
    merged = merge(merged, overrides)
    try:
        return Settings(**merged)
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from exc
