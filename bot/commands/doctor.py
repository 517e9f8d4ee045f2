"""`python -m bot doctor [--json]`: versions, device, every model resolved, and a smoke test.

For each role it shows the file, its size, why it was chosen, and the result of a short real
run of the engine (about a second each), timed; for the LLM also what it costs in memory at
the configured window (KV cache, recurrent state, turn checkpoints; `models.footprint`), read
from the GGUF header. With `models.llm_backend = "server"` the LLM's entry checks the serving
engine instead (`doctor_server`): reachable, model, context, tokenizer, slots, cache figures.
What the server exposes where, and its HTTPS certificate, is `doctor_network`.
The exit status is 0 only when every role works, so the command doubles as a health check
after an install.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from bot.commands.doctor_network import exposure, print_exposure
from config import load_settings
from config.settings import Settings
from models import ROLES, ModelError, detect_device, resolve, served
from models.footprint import ModelShape, format_bytes

HELP = "check versions, the device and every model, with a short real run of each engine"

PACKAGES = [
    "annie",
    "llama-cpp-python",
    "faster-whisper",
    "ctranslate2",
    "piper-tts",
    "onnxruntime",
    "sentence-transformers",
    "torch",
    "numpy",
    "aiortc",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _smoke_llm(settings: Settings) -> dict[str, Any]:
    from models import load_llm

    t0 = time.perf_counter()
    llm = load_llm(settings)
    load_ms = (time.perf_counter() - t0) * 1000
    prompt = llm.render([{"role": "user", "content": "Say hello in three words."}])

    async def go() -> str:
        return "".join([p async for p in llm.stream(prompt, max_tokens=8)])

    t1 = time.perf_counter()
    text = asyncio.run(go())
    stats = llm.last_stats
    return {
        "load_ms": round(load_ms),
        "smoke_ms": round((time.perf_counter() - t1) * 1000),
        "window": llm.n_ctx,
        "prompt_tokens": stats.prompt_tokens,
        "generated_tokens": stats.generated_tokens,
        "sample": text.strip()[:60],
    }


def _speech(settings: Settings) -> tuple[np.ndarray, int]:
    from models import load_tts

    tts = load_tts(settings)
    chunks = list(tts.synthesize_iter("Hello, this is Annie."))
    return np.concatenate([c.pcm for c in chunks]), tts.sample_rate


def _smoke_tts(settings: Settings) -> dict[str, Any]:
    from models import load_tts

    t0 = time.perf_counter()
    tts = load_tts(settings)
    load_ms = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    chunks = list(tts.synthesize_iter("Hello, this is Annie."))
    pcm = np.concatenate([c.pcm for c in chunks])
    return {
        "load_ms": round(load_ms),
        "smoke_ms": round((time.perf_counter() - t1) * 1000),
        "sample_rate": tts.sample_rate,
        "audio_s": round(len(pcm) / tts.sample_rate, 2),
    }


def _smoke_stt(settings: Settings) -> dict[str, Any]:
    from models import load_stt
    from models.pcm import resample

    t0 = time.perf_counter()
    stt = load_stt(settings)
    load_ms = (time.perf_counter() - t0) * 1000
    try:
        pcm, rate = _speech(settings)
        audio = resample(pcm, rate, 16000)
    except ModelError:
        audio = np.zeros(16000, dtype=np.float32)
    t1 = time.perf_counter()
    transcript = asyncio.run(stt.transcribe(audio))
    return {
        "load_ms": round(load_ms),
        "smoke_ms": round((time.perf_counter() - t1) * 1000),
        "sample_rate": stt.sample_rate,
        "heard": transcript.text[:60],
        "runs_on": getattr(stt, "device", "cpu"),
        "cpu_because": getattr(stt, "cpu_because", None),
    }


def _smoke_vad(settings: Settings) -> dict[str, Any]:
    from models import load_vad

    t0 = time.perf_counter()
    vad = load_vad(settings)
    load_ms = (time.perf_counter() - t0) * 1000
    stream = vad.new_stream()
    frame = stream.frame_samples
    silence = np.zeros(frame, dtype=np.float32)
    t1 = time.perf_counter()
    probs = [stream.probability(silence) for _ in range(16000 // frame)]
    return {
        "load_ms": round(load_ms),
        "smoke_ms": round((time.perf_counter() - t1) * 1000),
        "sample_rate": 16000,
        "silence_max_prob": round(max(probs), 3),
    }


def _smoke_embed(settings: Settings) -> dict[str, Any]:
    from models import load_embedder

    t0 = time.perf_counter()
    embedder = load_embedder(settings)
    load_ms = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    vectors = embedder.embed(["Remind me to call the dentist.", "Buy milk on the way home."])
    return {
        "load_ms": round(load_ms),
        "smoke_ms": round((time.perf_counter() - t1) * 1000),
        "dim": int(vectors.shape[1]),
    }


def llm_memory(path: Path, settings: Settings) -> dict[str, Any]:
    """What the model costs at the configured window: KV cache, recurrent state, checkpoints.

    Read from the GGUF header (no weights loaded); see `models.footprint` for the formulas.
    """
    from models.footprint import estimate, read_hparams

    shape = read_hparams(path)
    fp = estimate(shape, settings.context.window, checkpoints=settings.models.llm_checkpoints)
    return {
        "architecture": fp.architecture,
        "hybrid": fp.hybrid,
        "attention_layers": fp.attention_layers,
        "recurrent_layers": fp.recurrent_layers,
        "dialect": fp.dialect,
        "window": fp.n_ctx,
        "kv_cache_bytes": fp.kv_bytes,
        "recurrent_state_bytes": fp.recurrent_bytes,
        "checkpoint_bytes": fp.checkpoint_bytes,
        "checkpoint_half_bytes": fp.checkpoint_half_bytes,
        "checkpoints": fp.checkpoints,
        "checkpoints_bytes": fp.checkpoints_bytes,
        "budget": llm_budget(shape, path.stat().st_size, settings),
    }


def llm_budget(shape: ModelShape, weights: int, settings: Settings) -> dict[str, Any]:
    """The memory budget line by line, as `./start.sh plan` computes it (`provision.budget`).

    On CUDA the lines are set against the card's free memory now (before the model loads);
    on the CPU everything lives in host memory, so they are set against what is available.
    """
    from provision.budget import GIB, MIB, Estimates, vram_budget
    from provision.machine import mem_available, probe_gpus

    host = mem_available()
    place = "host"
    free = host
    if detect_device(settings) == "cuda":
        cards = probe_gpus().cards
        place = "card"
        free = max(c.free_mib for c in cards) * MIB if cards else None
    gpu = settings.gpu
    est = Estimates(
        compute_base=gpu.compute_base_mib * MIB,
        whisper=gpu.whisper_mib * MIB,
        headroom=gpu.headroom_mib * MIB,
        host_reserve=int(gpu.host_reserve_gib * GIB),
    )
    window, kept = settings.context.window, settings.models.llm_checkpoints
    budget = vram_budget(shape, weights, window, kept, free, host, est)
    return {"place": place, **budget.as_dict()}


SMOKE: dict[str, Callable[[Settings], dict[str, Any]]] = {
    "llm": _smoke_llm,
    "stt": _smoke_stt,
    "tts": _smoke_tts,
    "vad": _smoke_vad,
    "embed": _smoke_embed,
}


def check_role(role: str, settings: Settings) -> dict[str, Any]:
    """Resolve one role and run its smoke test; never raises."""
    if role == "llm" and served(settings):
        from bot.commands.doctor_server import check_server

        # Nothing to resolve (resolving could download a GGUF) and no memory to estimate here.
        return check_server(settings)
    entry: dict[str, Any] = {"path": None, "ok": False}
    try:
        resolved = resolve(role, settings)
    except ModelError as exc:
        entry["error"] = str(exc)
        return entry
    entry.update(path=str(resolved.path), reason=resolved.reason, size=resolved.size_bytes)
    if role == "llm":
        try:
            entry["memory"] = llm_memory(resolved.path, settings)
        except Exception as exc:  # an unreadable header still gets its smoke test
            entry["memory"] = {"error": f"{type(exc).__name__}: {exc}"}
    try:
        entry.update(SMOKE[role](settings))
        entry["ok"] = True
    except Exception as exc:  # the report must cover every role, whatever breaks
        entry["error"] = f"{type(exc).__name__}: {exc}"
    return entry


def gpu_proof(settings: Settings, device: str) -> dict[str, Any]:
    """On CUDA, load the chat model as the runtime does and read where llama.cpp put its
    layers (before the smoke tests, so nothing else holds the card). Off CUDA: not checked."""
    if device != "cuda" or served(settings):
        return {"checked": False}
    from models.cuda_libs import prove_llama

    try:
        proof = prove_llama(resolve("llm", settings).path, settings.models.llm_gpu_layers)
    except ModelError as exc:
        return {"checked": True, "ok": False, "why": str(exc)}
    why = ""
    if proof["build"] != "cuda":
        why = "this llama-cpp-python has no CUDA backend (a CPU build)"
    elif proof["missing"]:
        why = f"{', '.join(proof['missing'])} not found (NVIDIA's pip wheels provide them)"
    elif proof["error"]:
        why = proof["error"]
    elif not proof["offloaded"]:
        why = "llama.cpp put no layers on the card (models.llm_gpu_layers, or card memory)"
    if why:
        why += ". Fix: ./start.sh plan shows the CUDA route; `.venv/bin/pip uninstall -y "
        why += "llama-cpp-python` and ./start.sh again installs it (docs/gpu.md)"
    return {"checked": True, "ok": not why, "why": why, **proof}


def report(settings: Settings) -> dict[str, Any]:
    device = detect_device(settings)
    out: dict[str, Any] = {
        "versions": versions(),
        "device": device,
        "home": str(settings.home_path),
        "gpu": gpu_proof(settings, device),
        "network": exposure(settings),
    }
    for role in ROLES:
        out[role] = check_role(role, settings)
    out["calendar"] = calendar_check(settings)
    stt = out["stt"]
    if out["gpu"]["checked"] and stt.get("runs_on") != "cuda":
        out["gpu"]["ok"] = False
        out["gpu"]["stt_why"] = (stt.get("cpu_because") or stt.get("error") or "not on CUDA") + (
            ". Fix: pip install nvidia-cublas-cu12 (./start.sh does on a card)"
        )
    return out


def calendar_check(settings: Settings) -> dict[str, Any]:
    """The user's calendar files, parsed: a warning, not a failure, when one cannot be read
    (the rest of the schedule still answers, and says it cannot read the calendar)."""
    from memory.calendar import CalendarError, from_settings

    calendar = from_settings(settings)
    if calendar is None:
        return {"ok": True, "configured": False}
    out: dict[str, Any] = {"ok": True, "configured": True}
    if settings.calendar.url.strip():
        # The URL is fetched now, as the server would, so its answer is what doctor reports.
        out["url"] = _fetch_feed(settings)
        if not out["url"]["ok"]:
            out["ok"] = False
    try:
        out["summary"] = calendar.check()
    except CalendarError as exc:
        out.update(ok=False, error=str(exc))
    return out


def _fetch_feed(settings: Settings) -> dict[str, Any]:
    import asyncio

    from bot.calendar_feed import CalendarFeed
    from memory.store import Store

    with Store.open(settings) as store:
        status = asyncio.run(CalendarFeed(settings, store).refresh())
    return {"ok": status.ok, "detail": status.detail}


def _print_calendar(entry: dict[str, Any]) -> None:
    if not entry["configured"]:
        print("\n[ok  ] calendar\n  none set ([calendar] files or url in config.toml)")
        return
    print(f"\n[{'ok  ' if entry['ok'] else 'warn'}] calendar")
    if "url" in entry:
        print(f"  URL: {entry['url']['detail']}")
    print(f"  {entry.get('summary') or entry.get('error')}")


def _print_gpu(gpu: dict[str, Any], stt: dict[str, Any]) -> None:
    if not gpu["checked"]:
        return
    print(f"\n[{'ok  ' if gpu['ok'] else 'FAIL'}] gpu")
    if gpu.get("offloaded"):
        print(f"  llama.cpp:   {gpu['offloaded']}/{gpu['layers']} layers on {gpu['device']}")
    if gpu.get("why"):
        print(f"  llama.cpp:   on the CPU: {gpu['why']}")
    if stt.get("runs_on") == "cuda":
        print("  CTranslate2: Whisper on CUDA")
    if gpu.get("stt_why"):
        print(f"  CTranslate2: Whisper on the CPU: {gpu['stt_why']}")


def print_text(data: dict[str, Any]) -> None:
    print("Annie doctor")
    print("  versions: " + ", ".join(f"{k} {v}" for k, v in data["versions"].items()))
    print(f"  device:   {data['device'].upper()}")
    print(f"  home:     {data['home']}")
    for role in ROLES:
        entry = data[role]
        mark = "ok  " if entry["ok"] else "FAIL"
        print(f"\n[{mark}] {role}")
        if entry.get("backend") == "server":
            from bot.commands.doctor_server import print_server

            print_server(entry)
            if entry.get("error"):
                print(f"  error:  {entry['error']}")
            continue
        if entry.get("path"):
            print(f"  file:   {entry['path']} ({format_bytes(int(entry.get('size', 0)))})")
            print(f"  chosen: {entry.get('reason', '')}")
        detail = {
            k: v
            for k, v in entry.items()
            if k not in ("path", "ok", "reason", "size", "error", "load_ms", "smoke_ms", "memory")
        }
        if "load_ms" in entry:
            print(f"  load:   {entry['load_ms']} ms; smoke test {entry['smoke_ms']} ms")
        if detail:
            print("  " + ", ".join(f"{k}: {v}" for k, v in detail.items()))
        if "memory" in entry:
            _print_memory(entry["memory"])
        if entry.get("error"):
            print(f"  error:  {entry['error']}")
    _print_gpu(data["gpu"], data["stt"])
    _print_calendar(data["calendar"])
    print(f"\n[{'ok  ' if data['network']['ok'] else 'FAIL'}] network")
    print_exposure(data["network"])


def _print_memory(mem: dict[str, Any]) -> None:
    if "error" in mem:
        print(f"  memory: could not read the model header: {mem['error']}")
        return
    kind = (
        f"hybrid: {mem['attention_layers']} attention + {mem['recurrent_layers']} recurrent layers"
        if mem["hybrid"]
        else f"{mem['attention_layers'] or mem['recurrent_layers']} layers, not hybrid"
    )
    print(f"  model:  {mem['architecture']} ({kind}), tool calls in {mem['dialect']}")
    recurrent = mem["recurrent_state_bytes"]
    print(
        f"  memory: KV cache {format_bytes(mem['kv_cache_bytes'])} at {mem['window']} tokens, "
        + (f"recurrent state {format_bytes(recurrent)}" if recurrent else "no recurrent state")
    )
    print(
        "          one turn checkpoint up to "
        f"{format_bytes(mem['checkpoint_bytes'])} (window full; "
        f"{format_bytes(mem['checkpoint_half_bytes'])} at half); {mem['checkpoints']} kept: "
        f"{format_bytes(mem['checkpoints_bytes'])} of host memory"
    )
    if "budget" in mem:
        from provision.budget import Budget, budget_lines

        place = "on the card" if mem["budget"]["place"] == "card" else "in host memory"
        print(f"  budget ({place}):")
        for line in budget_lines(Budget.from_dict(mem["budget"]), place):
            print(f"          {line}")


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    data = report(settings)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print_text(data)
    gpu_ok = data["gpu"].get("ok", True)
    ok = gpu_ok and data["network"]["ok"] and all(data[role]["ok"] for role in ROLES)
    return 0 if ok else 1
