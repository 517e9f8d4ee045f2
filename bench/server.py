"""`python -m bot bench server`: the same conversation on the in-process model and on a serving
engine, side by side in one run.

Each engine plays, through the real `Runtime` and `Session` on a fresh store of its own, a
conversation of model-path turns ("Tell me a short fact about owls.": nothing the state path
answers), first with one session, then with several sessions talking at once, each its own
conversation. It prints first-token p50/p95 (from the user's words to the first streamed text),
prompt tokens the engine evaluated per turn and the fraction it served from its cache, both as
the engine reported them (`CallStats`; "unknown" where it reports none, never a guess), and turns
per minute at each session count. The local engine queues concurrent sessions on its model lock;
a server runs them at once where it has the slots. Without `--url` the server is llama-cpp-python's
(`testkit.llama_server`) on the same GGUF; with it, any running engine (llama-server, vLLM).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bot.runtime import Runtime
from bot.turn.events import TextDelta, TurnDone
from bot.turn.session import Session
from config import Settings, load_settings
from memory.store import Store
from models import LLM, load_llm, resolve
from testkit.llama_server import LlamaCppServer

HELP = (
    "the same conversation on the in-process model and on a serving engine: first token, "
    "evaluated and cached prompt tokens, turns per minute at 1, 2 and 4 sessions"
)

GPU_COMMANDS = """\
With Qwen3.5-9B on a GPU box, start one engine, then point the bench at it (the local column
loads the configured GGUF in this process too; leave it GPU memory, or pass --no-local):

  # llama.cpp: -c is shared by the -np slots, so give it window x slots
  llama-server -m Qwen3.5-9B-Q4_K_M.gguf -ngl 99 -c 131072 -np 4 \\
      --ctx-checkpoints 32 --cache-ram 8192 --port 8080
  python -m bot bench server --url http://127.0.0.1:8080 --window 32768

  # vLLM (add --tensor-parallel-size N across N GPUs)
  vllm serve Qwen/Qwen3.5-9B --max-model-len 32768 --enable-prefix-caching \\
      --mamba-cache-mode align --enable-prompt-tokens-details --port 8000
  python -m bot bench server --url http://127.0.0.1:8000 --window 32768 \\
      --template /path/to/Qwen3.5-9B/tokenizer_config.json
"""

# Model-path requests: no status question among them, so the state path answers none.
SUBJECTS = """owls, volcanoes, honeybees, the Moon, octopuses, glaciers, penguins, lightning,
tomatoes, whales, deserts, bamboo, comets, coral reefs, hummingbirds, rainbows, elephants,
coffee, snowflakes, sunflowers""".replace("\n", " ").split(", ")


def conversation(turns: int, offset: int = 0) -> list[str]:
    """`turns` model-path requests; another `offset` gives another conversation."""
    return [
        f"Tell me a short fact about {SUBJECTS[(offset * 7 + i) % len(SUBJECTS)]}."
        for i in range(turns)
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = GPU_COMMANDS
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--turns", type=int, default=20, help="turns per conversation (20)")
    parser.add_argument("--sessions", default="1,2,4", help="concurrent session counts (1,2,4)")
    parser.add_argument("--window", type=int, default=4096, help="context window (4096)")
    parser.add_argument("--reserve", type=int, default=48, help="answer tokens at most (48)")
    parser.add_argument("--url", default="", help="an engine already running (default: start one)")
    parser.add_argument("--model", type=Path, default=None, help="GGUF (default: configured LLM)")
    parser.add_argument("--template", default="", help="the served model's template, for vLLM")
    parser.add_argument("--no-local", action="store_true", help="skip the in-process engine")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


@dataclass
class Turn:
    """One turn as the user met it, with the engine's figures for its calls."""

    first_token_s: float | None
    seconds: float
    path: str
    failed: bool
    prompt_tokens: int
    evaluated: int | None  # None: the engine did not say (never guessed)
    reused: int | None


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def _play(session: Session, questions: list[str]) -> list[Turn]:
    out = []
    for text in questions:
        turn = session.conv.turn + 1
        t0 = time.perf_counter()
        first: float | None = None
        path, failed = "", False
        async for event in session.handle_text(text):
            if isinstance(event, TextDelta) and first is None:
                first = time.perf_counter() - t0
            elif isinstance(event, TurnDone):
                path, failed = event.path, event.failed
        seconds = time.perf_counter() - t0
        # The turn's own model calls: idle work between turns records under other labels.
        calls = [c for c in session.ledger.calls if c.turn == turn and c.label.startswith("round")]
        known = bool(calls) and all(c.cache_reported for c in calls)
        out.append(
            Turn(
                first_token_s=first,
                seconds=seconds,
                path=path,
                failed=failed,
                prompt_tokens=sum(c.prompt_tokens for c in calls),
                evaluated=sum(c.evaluated_tokens for c in calls) if known else None,
                reused=sum(c.reused_tokens for c in calls) if known else None,
            )
        )
    return out


async def _phase(
    llm: LLM, settings: Settings, db: Path, count: int, turns: int, options: Mapping[str, Any]
) -> dict[str, Any]:
    """`count` sessions, each its own conversation, all talking at once on a fresh store."""
    # A fresh store per phase: an earlier session's checkpoint would enter the briefing and
    # change the prompt head, so every phase starts from the same state.
    runtime = Runtime(settings, llm=llm, store=Store(db), **options)
    sessions = [runtime.open_session(meta={"front_end": "bench"}) for _ in range(count)]
    for session in sessions:
        # What a front end does while the user starts to speak: the fixed head is evaluated
        # before the first turn, outside the timed part.
        session.warm_up()
        await session.wait_idle()
    t0 = time.perf_counter()
    played = await asyncio.gather(
        *(_play(s, conversation(turns, offset=i)) for i, s in enumerate(sessions))
    )
    elapsed = time.perf_counter() - t0
    await runtime.close()
    runtime.store.close()
    every = [t for session_turns in played for t in session_turns]
    firsts = [t.first_token_s * 1000 for t in every if t.first_token_s is not None]
    return {
        "sessions": count,
        "turns": len(every),
        "seconds": elapsed,
        "turns_per_min": len(every) / (elapsed / 60) if elapsed > 0 else 0.0,
        "first_token_ms_p50": _pct(firsts, 50),
        "first_token_ms_p95": _pct(firsts, 95),
        "model_turns": sum(t.path == "model" for t in every),
        "failed_turns": sum(t.failed for t in every),
        "per_turn": [asdict(t) for t in played[0]],
    }


def _tokens(per_turn: list[dict[str, Any]]) -> dict[str, Any]:
    """Prompt, evaluated and cached figures over one conversation; unknown stays unknown."""
    prompt = [t["prompt_tokens"] for t in per_turn]
    known = bool(per_turn) and all(t["evaluated"] is not None for t in per_turn)
    evaluated = [int(t["evaluated"]) for t in per_turn] if known else []
    reused = sum(int(t["reused"]) for t in per_turn) if known else 0
    return {
        "prompt_per_turn_mean": statistics.fmean(prompt) if prompt else 0.0,
        "evaluated_per_turn": evaluated if known else None,
        "evaluated_per_turn_mean": statistics.fmean(evaluated) if known else None,
        "evaluated_per_turn_max": max(evaluated, default=0) if known else None,
        "cached_fraction": reused / max(1, sum(prompt)) if known else None,
    }


async def run_engine(
    name: str,
    llm: LLM,
    settings: Settings,
    home: Path,
    turns: int,
    counts: list[int],
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """Every phase on one engine; token figures come from the first (fewest sessions)."""
    phases = [
        await _phase(llm, settings, home / f"{n}-sessions.db", n, turns, options) for n in counts
    ]
    return {
        "engine": name,
        "kind": llm.kind,
        "label": llm.label,
        "slots": llm.max_parallel or 1,
        "first_token_ms_p50": phases[0]["first_token_ms_p50"],
        "first_token_ms_p95": phases[0]["first_token_ms_p95"],
        **_tokens(phases[0]["per_turn"]),
        "phases": phases,
    }


def engine_settings(
    backend: str,
    home: Path,
    model: Path,
    window: int,
    reserve: int,
    url: str = "",
    template: str = "",
) -> Settings:
    """Settings for one engine: its own home (so nothing is shared), the same model and window."""
    models: dict[str, Any] = {"llm_backend": backend, "llm_path": str(model)}
    if backend == "server":
        models["llm_url"] = url
        if template:
            models["llm_template"] = template
    home.mkdir(parents=True, exist_ok=True)
    return load_settings(
        home=str(home),
        models=models,
        context={"window": window, "reserve_output": reserve},
        # A session's end is not measured here: its checkpoint is written by the rules alone,
        # without the model's polish (up to 10 s per session otherwise).
        compaction={"tier3_summary_s": 0.0},
    )


async def bench(
    *,
    model: Path,
    home: Path,
    url: str = "",
    turns: int = 20,
    counts: tuple[int, ...] = (1, 2, 4),
    window: int = 4096,
    reserve: int = 48,
    template: str = "",
    local: bool = True,
    runtime_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Both engines, one after the other, on the same conversations. Without `url` a
    llama-cpp-python server is started on `model` for the server column. `runtime_options`
    go to each `Runtime` (a shorter system prompt or tool registry for a quick test); the
    default is Annie's own prompt and tools."""
    options = dict(runtime_options or {})
    order = sorted(set(counts))
    engines = []

    async def measure(name: str, settings: Settings) -> None:
        llm = load_llm(settings)
        try:
            engines.append(
                await run_engine(name, llm, settings, home / name, turns, order, options)
            )
        finally:
            _close(llm)

    if local:
        await measure("local", engine_settings("local", home / "local", model, window, reserve))
    # The in-process engine's generation threads (0: llama-cpp-python's default, which the test
    # server also takes), so the two columns compare engines, not thread counts.
    threads = load_settings().models.llm_threads
    server = None if url else LlamaCppServer(model, n_ctx=window, threads=threads).start()
    try:
        endpoint = server.url if server else url
        await measure(
            "server",
            engine_settings("server", home / "server", model, window, reserve, endpoint, template),
        )
    finally:
        if server is not None:
            server.stop()
    return {
        "model": model.name,
        "turns": turns,
        "sessions": order,
        "window": window,
        "answer_tokens_max": min(reserve, window // 8),
        "engines": engines,
        "notes": _notes(engines, order[0]),
    }


def _close(llm: LLM) -> None:
    llm.close()


def _notes(engines: list[dict[str, Any]], fewest: int) -> list[str]:
    notes = [
        f"first token: from the user's words to the first streamed text, with {fewest} at once; "
        "evaluated and cached: the engine's own figures for that run"
    ]
    for e in engines:
        if e["engine"] == "local":
            notes.append("local: one model in this process; concurrent sessions queue on its lock")
        elif e["kind"] == "llama-cpp-python":
            notes.append(
                "llama-cpp-python's server runs one model behind one lock: concurrent requests "
                "wait in turn, and it reports no cache figures (cached and evaluated: unknown)"
            )
        else:
            slots = e["slots"] if e["slots"] is not None else "not reported"
            notes.append(f"{e['kind']}: runs concurrent sessions at once (slots: {slots})")
    return notes


def _fmt(value: Any, spec: str = ",.0f") -> str:
    return "unknown" if value is None else format(value, spec)


def _rows(report: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The table: one label per row, one cell per engine."""
    rows: list[tuple[str, list[str]]] = []
    for label, cells in (
        ("first token p50 / p95 (ms)", ("first_token_ms_p50", "first_token_ms_p95")),
        ("prompt tokens per turn (mean)", ("prompt_per_turn_mean",)),
        ("evaluated per turn mean / max", ("evaluated_per_turn_mean", "evaluated_per_turn_max")),
    ):
        rows.append((label, [" / ".join(_fmt(e[c]) for c in cells) for e in report["engines"]]))
    fraction = [_fmt(e["cached_fraction"], ".1%") for e in report["engines"]]
    rows.append(("cached fraction (engine's)", fraction))
    for i, n in enumerate(report["sessions"]):
        phases = [e["phases"][i] for e in report["engines"]]
        label = f"turns/min, {n} session{'s' if n > 1 else ''}"
        rows.append((label, [f"{p['turns_per_min']:.1f}" for p in phases]))
        if n > 1:
            rows.append(("  first token p50 (ms)", [_fmt(p["first_token_ms_p50"]) for p in phases]))
    counts = []
    for e in report["engines"]:
        model, turns, failed = (sum(p[k] for p in e["phases"]) for k in _COUNTS)
        counts.append(f"{model}/{turns} / {failed}")
    rows.append(("model-path turns / failed", counts))
    return rows


_COUNTS = ("model_turns", "turns", "failed_turns")


def _print(report: dict[str, Any]) -> None:
    print(
        f"server bench: {report['model']}, {report['turns']} turns per conversation, "
        f"window {report['window']:,}, answers <= {report['answer_tokens_max']} tokens"
    )
    engines = report["engines"]
    names = [e["engine"] if e["engine"] == "local" else f"server: {e['kind']}" for e in engines]
    print(f"{'':32}" + "".join(f"{n:>26}" for n in names))
    for label, cells in _rows(report):
        print(f"{label:32}" + "".join(f"{c:>26}" for c in cells))
    for e in engines:
        print(f"  {e['engine']}: {e['label']}")
    print("notes:")
    for note in report["notes"]:
        print(f"  - {note}")


def run(args: argparse.Namespace) -> int:
    counts = tuple(int(n) for n in str(args.sessions).split(",") if n.strip())
    model = args.model or resolve("llm", load_settings()).path
    with tempfile.TemporaryDirectory(prefix="annie-bench-") as tmp:
        report = asyncio.run(
            bench(
                model=Path(model),
                home=Path(tmp),
                url=args.url,
                turns=args.turns,
                counts=counts,
                window=args.window,
                reserve=args.reserve,
                template=args.template,
                local=not args.no_local,
            )
        )
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    ok = all(p["failed_turns"] == 0 for e in report["engines"] for p in e["phases"])
    return 0 if ok else 1
