"""The figures `bench voice` reports: percentiles per mode, the targets, and the printed table.

Latency targets (issue 12): the state path's voice-to-voice, first turn after connecting
included, p50 at most 0.9 s and p95 at most 1.3 s; the model path's first audible frame p50 at
most 2.0 s; turns ended inside a mid-sentence pause at most 5% with semantic endpointing,
printed beside the fixed window's rate from the same run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.voice_client import CutSample, TurnSample

STATE_P50_MS = 900.0
STATE_P95_MS = 1300.0
MODEL_P50_MS = 2000.0
CUTOFF_RATE = 0.05
# The server's stages, in the order they happen, then its own total and the transport.
STAGES = (
    "endpoint",
    "stt",
    "state",
    "llm_first_token",
    "first_clause",
    "tts_first_chunk",
    "voice_to_voice",
    "transport",
    "transport_in",
    "transport_out",
)


def pct(values: list[float]) -> dict[str, Any] | None:
    if not values:
        return None
    arr = np.asarray(values, dtype=np.float64)
    return {
        "n": int(arr.size),
        "p50": round(float(np.percentile(arr, 50)), 1),
        "p95": round(float(np.percentile(arr, 95)), 1),
        "mean": round(float(arr.mean()), 1),
    }


def summarize_mode(
    samples: list[TurnSample], cuts: list[CutSample], barges: list[float]
) -> dict[str, Any]:
    def client(keep: list[TurnSample]) -> dict[str, Any] | None:
        return pct([s.client_ms for s in keep])

    stages: dict[str, list[float]] = {}
    for s in samples:
        for name, value in s.stages.items():
            stages.setdefault(name, []).append(value)
        stages.setdefault("transport", []).append(s.client_ms - s.server_ms)
    heard = [c for c in cuts if c.finals]
    return {
        "turns": {
            "completed": len(samples),
            "first": client([s for s in samples if s.first]),
            "later": client([s for s in samples if not s.first]),
            "state": client([s for s in samples if s.path == "state"]),
            "model": client([s for s in samples if s.path == "model"]),
            "all": client(samples),
        },
        "stages": {name: pct(stages[name]) for name in STAGES if name in stages},
        # Answers prepared in the user's pause: used (hit), dropped for other words (miss).
        "prepared": {
            "hit": sum(s.prepared == "hit" for s in samples),
            "miss": sum(s.prepared == "miss" for s in samples),
            "none": sum(not s.prepared for s in samples),
        },
        "samples": [
            {
                "first": s.first,
                "path": s.path,
                "client_ms": round(s.client_ms, 1),
                "server_ms": round(s.server_ms, 1),
            }
            for s in samples
        ],
        "cutoffs": {
            "played": len(cuts),
            "heard": len(heard),
            "cut": sum(c.cut for c in cuts),
            "rate": round(sum(c.cut for c in heard) / len(heard), 3) if heard else None,
            "early": sum(c.early for c in cuts),
            "two_finals": sum(c.finals > 1 for c in cuts),
            "missing_rest": sum(c.missing_rest for c in cuts),
            "clips": [vars(c) | {"cut": c.cut} for c in cuts],
        },
        "barge_in_stop_ms": pct(barges),
    }


def _check(value: float | None, limit: float) -> dict[str, Any]:
    return {"value": value, "target": limit, "met": value is not None and value <= limit}


def targets(modes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each target per mode, with the figure it is judged on."""
    out: dict[str, dict[str, Any]] = {}
    for mode, r in modes.items():
        state = r["turns"]["state"] or {}
        model = r["turns"]["model"] or {}
        out[mode] = {
            "state_p50_ms": _check(state.get("p50"), STATE_P50_MS),
            "state_p95_ms": _check(state.get("p95"), STATE_P95_MS),
            "model_p50_ms": _check(model.get("p50"), MODEL_P50_MS),
        }
    if "semantic" in modes:
        out["semantic"]["cutoff_rate"] = _check(
            modes["semantic"]["cutoffs"]["rate"], CUTOFF_RATE
        ) | {"fixed_window_rate": modes.get("silence", {}).get("cutoffs", {}).get("rate")}
    return out


def _row(label: str, cells: list[dict[str, Any] | None]) -> str:
    def one(s: dict[str, Any] | None) -> str:
        return f"{s['p50']:>7.0f}{s['p95']:>7.0f}{s['n']:>4}" if s else f"{'-':>7}{'-':>7}{'':>4}"

    return f"  {label:<30}" + "".join(f"  {one(s)}" for s in cells)


def _mark(check: dict[str, Any]) -> str:
    return "met" if check["met"] else "MISSED"


def print_report(results: dict[str, Any]) -> None:
    modes = results["modes"]
    names = list(modes)
    print("voice bench: the real server in a child process, a WebRTC client measuring")
    for name, r in modes.items():
        print(
            f"  {name}: {r['turns']['completed']} turns ({r['failed']} failed), "
            f"server up in {r['load_s']}s, shared head kept {r.get('head_s', '?')}s later, "
            f"run {r['run_s']}s" + ("" if r["server_alive"] else ", THE SERVER DIED")
        )
    print(f"  {'voice-to-voice at the client':<30}" + "".join(f"  {n:>18}" for n in names))
    print(f"  {'  (ms: p50, p95, n)':<30}" + "".join(f"  {'p50    p95   n':>18}" for _ in names))
    for key, label in [
        ("first", "first turn after connecting"),
        ("later", "later turns"),
        ("state", "state path"),
        ("model", "model path"),
        ("all", "all"),
    ]:
        print(_row(label, [modes[n]["turns"][key] for n in names]))
    print("  server stages (ms)")
    for stage in STAGES:
        label = {
            "transport": "transport (client - server)",
            "transport_in": "  of it: mic → server's speech end",
            "transport_out": "  of it: server's first frame → ear",
        }.get(stage, stage)
        if any(stage in modes[n]["stages"] for n in names):
            print(_row(label, [modes[n]["stages"].get(stage) for n in names]))
    print(_row("barge-in: onset → last frame", [modes[n]["barge_in_stop_ms"] for n in names]))
    cells = [
        "{hit}/{miss}/{none}".format(**modes[n].get("prepared", {"hit": 0, "miss": 0, "none": 0}))
        for n in names
    ]
    print(f"  {'prepared in the pause: hit/miss/none':<30}" + "".join(f"  {c:>18}" for c in cells))
    for sound in ("cough", "clicks", "echo"):
        cells = []
        for n in names:
            stops, trials = modes[n].get("false_stops", {}).get(sound, [0, 0])
            cells.append(f"{stops}/{trials}")
        label = "false stops: " + sound
        print(f"  {label:<30}" + "".join(f"  {c:>18}" for c in cells))
    for name in names:
        c = modes[name]["cutoffs"]
        rate = "-" if c["rate"] is None else f"{100 * c['rate']:.0f}%"
        print(
            f"  cut-offs ({name}): {c['cut']}/{c['heard']} heard ended inside the pause "
            f"({rate}; {c['early']} early, {c['two_finals']} split, {c['missing_rest']} lost "
            f"the rest; {c['played']} played), barge-in misses {modes[name]['barge_misses']}"
        )
    print("targets (benchmarks, not tests):")
    for name, checks in results["targets"].items():
        for key, check in checks.items():
            extra = ""
            if "fixed_window_rate" in check:
                extra = f" (fixed window in this run: {check['fixed_window_rate']})"
            print(
                f"  {name:<9}{key:<14}{check['value']!s:>8} ≤ {check['target']:<7}"
                f"{_mark(check)}{extra}"
            )
