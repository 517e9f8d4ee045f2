"""`python -m bot bench reliability`: the real server under kills, load, drops and hostile input.

Every part runs `python -m bot serve` in a child process over a temporary ANNIE_HOME (the
shipped CPU models, a 4,096-token window) and talks to it only from outside: real WebRTC
clients (`testkit.peer.VoiceClient`) speaking questions recorded once with the Piper voice or
typing them, raw sockets for what no browser sends, the database file, and /proc. The parts:
kill (SIGKILL at random moments, `bench.reliability_kill`), soak and concurrency
(`reliability_load`), disconnect (`reliability_disconnect`) and hostile input
(`reliability_hostile`, `reliability_media`). One table at the end; `--json` for the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

HELP = "kill -9, soak, concurrency, disconnects and hostile input against the real server"
PARTS = ("kill", "soak", "concurrency", "disconnect", "hostile")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kills", type=int, default=100, help="kill -9 rounds (default 100)")
    parser.add_argument("--minutes", type=float, default=30.0, help="soak length (default 30)")
    parser.add_argument(
        "--sessions", type=int, default=0, help="server.max_sessions (default: config)"
    )
    parser.add_argument(
        "--silence", type=float, default=600.0, help="seconds of silence sent (default 600)"
    )
    parser.add_argument(
        "--slow", type=float, default=30.0, help="seconds a slow body may dribble (default 30)"
    )
    parser.add_argument(
        "--half-open", type=int, default=200, help="half-open connections (default 200)"
    )
    parser.add_argument("--flood", type=int, default=300, help="texts sent at once (default 300)")
    parser.add_argument("--seed", type=int, default=13, help="random moments are repeatable")
    parser.add_argument(
        "--only", default=",".join(PARTS), help="comma-separated: " + ",".join(PARTS)
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        print(f"error: unknown part {', '.join(unknown)}; choose from {', '.join(PARTS)}")
        return 2
    with tempfile.TemporaryDirectory(prefix="annie-bench-reliability-") as home:
        results = asyncio.run(measure(Path(home), args, parts))
    print(json.dumps(results, indent=2, default=str) if args.json else table(results))
    return 0


async def measure(home: Path, args: argparse.Namespace, parts: list[str]) -> dict[str, Any]:
    """Run the chosen parts; kills, soak and the rest each get their own server process."""
    from testkit.reliability import ServerProcess, Speech

    speech = Speech(home / "speech")
    env = {"ANNIE_SERVER__MAX_SESSIONS": str(args.sessions)} if args.sessions else {}
    out: dict[str, Any] = {}
    t0 = time.monotonic()
    if "kill" in parts:
        from bench.reliability_kill import run_kills

        await _part(out, "kill", run_kills(home / "kill", args.kills, speech, seed=args.seed))
    if "soak" in parts:
        from bench.reliability_load import run_soak

        with ServerProcess(home / "soak", env=env) as server:
            out["start_s"] = round(server.start(), 1)
            await _part(out, "soak", run_soak(server, speech, args.minutes))
    if {"concurrency", "disconnect", "hostile"} & set(parts):
        with ServerProcess(home / "live", env=env) as server:
            out.setdefault("start_s", round(server.start(), 1))
            await _live_parts(server, speech, args, parts, out)
    out["seconds"] = round(time.monotonic() - t0)
    return out


async def _part(out: dict[str, Any], name: str, work: Awaitable[Any]) -> None:
    """One part's figures, or the error that stopped it (the other parts still run)."""
    try:
        out[name] = await work
    except Exception as exc:
        out.setdefault("errors", {})[name] = f"{type(exc).__name__}: {exc}"[:500]


async def _live_parts(
    server: Any, speech: Any, args: argparse.Namespace, parts: list[str], out: dict[str, Any]
) -> None:
    if "concurrency" in parts:
        from bench.reliability_load import run_concurrency

        await _part(out, "concurrency", run_concurrency(server, speech))
    if "disconnect" in parts:
        from bench.reliability_disconnect import run_disconnects

        await _part(out, "disconnect", run_disconnects(server))
    if "hostile" in parts:
        await _part(out, "hostile", _hostile(server, speech, args))


async def _hostile(server: Any, speech: Any, args: argparse.Namespace) -> dict[str, Any]:
    from bench import reliability_hostile as net
    from bench import reliability_media as media

    cases = await net.http_cases(server, args.slow, args.half_open)
    cases += await net.sdp_cases(server)
    cases += await net.channel_cases(server, args.flood)
    cases += await media.audio_cases(server, speech, args.silence)
    cases += await media.storage_cases(server)  # last: it restarts the server
    return net.counts(cases)


def _row(name: str, value: Any, target: str = "", met: bool | None = None) -> str:
    mark = {True: "yes", False: "NO", None: ""}[met]
    return f"  {name:<44}{value!s:>22}  {target:<18}{mark}"


def table(r: dict[str, Any]) -> str:
    lines = [
        f"reliability bench ({r['seconds']} s; a server start with every engine: "
        f"{r.get('start_s', '-')} s)"
    ]
    lines.append(f"  {'figure':<44}{'measured':>22}  {'target':<18}met")
    if "kill" in r:
        k = r["kill"]
        lines.append("kill -9")
        reached = ", ".join(f"{m} {v['reached']}/{v['kills']}" for m, v in k["by_moment"].items())
        lines.append(_row("kills (moment reached / kills)", k["kills"]) + f"  {reached}")
        lines.append(
            _row(
                "integrity_check failures",
                len(k["integrity_failures"]),
                "0",
                not k["integrity_failures"],
            )
        )
        lines.append(
            _row(
                f"completed turns lost (of {k['completed_turns']})",
                k["turns_lost"],
                "0",
                k["turns_lost"] == 0,
            )
        )
        lines.append(_row("events half written", k["half_written"], "0", k["half_written"] == 0))
        lost = k["episodes_lost"]
        lines.append(_row("words said without their episode", lost, "0", lost == 0))
        brief = f"{k['briefing_carried']}/{k['briefing_checked']}"
        lines.append(
            _row(
                "briefing carries the last completed turn",
                brief,
                "all",
                k["briefing_carried"] == k["briefing_checked"],
            )
        )
        lines.append(_row("restart s p50 / p95", f"{k['restart_s_p50']} / {k['restart_s_p95']}"))
        lines.append(_row("seconds per kill (all of it)", k["per_kill_s"]))
    if "soak" in r:
        lines += _soak_rows(r["soak"])
    if "concurrency" in r:
        lines += _concurrency_rows(r["concurrency"])
    if "disconnect" in r:
        lines.append("disconnects (tier-3 row s after the close; CPU settled s; session gone)")
        for case, d in r["disconnect"].items():
            ok = d["tier3_s"] is not None and d["tier3_s"] <= 1.0
            value = f"{d['tier3_s']} / {d['cpu_settled_s']} / {d['session_gone']}"
            note = "" if d["reached"] else "  (moment not reached)"
            lines.append(_row(f"mid-{case}", value, "≤ 1 s / - / True", ok) + note)
    for part, error in r.get("errors", {}).items():
        lines.append(f"{part}: did not finish: {error}")
    if "hostile" in r:
        lines.append("hostile input (handled / total)")
        for group, g in r["hostile"].items():
            lines.append(
                _row(group, f"{g['handled']}/{g['total']}", "all", g["handled"] == g["total"])
            )
            for f in g["failed"]:
                lines.append(f"      not handled: {f['name']}: sent {f['sent']}; got {f['got']}")
    return "\n".join(lines)


def _no_growth(label: str, pair: list[Any]) -> str:
    """A start → end row whose target is no growth."""
    return _row(label, " → ".join(map(str, pair)), "no growth", pair[1] <= pair[0])


def _heap_rows(pair: list[dict[str, float] | None]) -> list[str]:
    """The C heap's part of the growth: kept data, and freed memory the allocator holds."""
    start, end = pair
    if not start or not end:
        return []
    return [
        _row(f"  C heap {k.replace('_', ' ')} MB", f"{start[k]} → {end[k]}")
        for k in ("allocated", "free_held")
    ]


def _soak_rows(s: dict[str, Any]) -> list[str]:
    from bench.reliability_load import no_drift

    first, last = s["latency_first"], s["latency_last"]
    growth = s["rss_growth_less_cache_mb"]
    return [
        f"soak ({s['minutes']} min: {s['turns']} spoken turns, {s['failed']} failed, "
        f"{s['barge_ins']} barge-ins ({s['barge_misses']} missed), {s['reconnects']} reconnects)",
        _row(
            "RSS MB after warm-up → end (peak)",
            f"{s['rss_mb_start']} → {s['rss_mb_end']} ({s['rss_mb_peak']})",
        ),
        _row("saved model states MB (bounded)", " → ".join(map(str, s["cache_mb"]))),
        _row("RSS growth less saved states MB", growth, "< 50", growth < 50),
        *_heap_rows(s["heap_mb"]),
        _no_growth("open fds start → end", s["fds"]),
        _no_growth("threads start → end", s["threads"]),
        _row(
            "sessions after the last client left",
            s["sessions_after"],
            "0",
            s["sessions_after"] == 0,
        ),
        _no_growth("asyncio tasks start → end", s["tasks"]),
        _row(
            "peer connections start → end",
            " → ".join(map(str, s["peers"])),
            "0 at the end",
            s["peers"][1] == 0,
        ),
        _row(
            "voice-to-voice ms p50/p95, first", f"{first['p50']} / {first['p95']} (n={first['n']})"
        ),
        _row("voice-to-voice ms p50/p95, last", f"{last['p50']} / {last['p95']} (n={last['n']})"),
        *[
            _row(
                f"  {path} path p50 first → last",
                f"{w['first']['p50']} → {w['last']['p50']} (n={w['first']['n']}, {w['last']['n']})",
                "no drift",
                no_drift(w["first"], w["last"]),
            )
            for path, w in s["latency_by_path"].items()
        ],
    ]


def _concurrency_rows(c: dict[str, Any]) -> list[str]:
    rows = [f"concurrency ({c['max_sessions']} sessions at once)"]
    rows.append(_row("single session voice-to-voice ms", c["single_ms"]))
    for s in c["sessions"]:
        rows.append(
            _row(f"{s['id']}: {s['question'][:30]}", s["latency_ms"]) + f"  heard {s['heard']!r}"
        )
    rows.append(
        _row("cross-talk (transcripts, answers, store)", c["cross_talk"], "0", c["cross_talk"] == 0)
    )
    refused = c["refused"]
    rows.append(
        _row(
            "one more client",
            "503" if refused["refused"] else "not refused",
            "503 + message",
            refused["refused"],
        )
    )
    return rows
