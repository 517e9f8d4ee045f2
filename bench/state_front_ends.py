"""`bench state`, front ends: the same questions through `ask` and through a live session.

Both decide through the runtime's chain of answerers (`bot.turn.answers`). Each gets a home of
its own in a temporary folder, seeded like the benchmark's store (`testkit.status_set.seed`),
and a runtime of its own, which loads the embedding model at the first question that needs
it; that first question's cost is reported. The model never answers here: `ask`'s model path
is a stand-in that records the question, and the live session runs on a scripted model. Per
set: whether both took the same path for every question, the share each answered from state,
and what a turn cost (`ask`: the whole answer, logging included; the session: its chain's
decision), cold (no question vector reused).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench.state_routing import spread
from bot.commands.ask import Answer, Asker
from bot.runtime import Runtime
from bot.turn.answers import Answered, Decision
from config import Settings
from models import load_tokenizer
from models.fakes import ScriptedLLM
from testkit import status_set
from testkit.status_set import Labelled


def _ask_paths(
    settings: Settings, sets: dict[str, list[Labelled]], now: datetime, lines: list[str]
) -> tuple[dict[str, list[str]], list[float]]:
    def model(text: str, decision: Decision) -> Answer:
        return Answer("", "model")

    asker = Asker(settings, model=model)
    try:
        status_set.seed(asker.store, now)
        paths: dict[str, list[str]] = {}
        times: list[float] = []
        index = asker.runtime.intents
        for name, items in sets.items():
            index.forget_recent()
            paths[name] = []
            for item in items:
                ready = index.ready()
                t0 = time.perf_counter()
                answer = asker.ask(item.text)
                ms = (time.perf_counter() - t0) * 1000.0
                paths[name].append(answer.path)
                if not ready and index.ready():
                    # The turn that loaded the embedding model and the classifier.
                    how = "trained" if index.train_s else "read from the cache"
                    lines.append(
                        f"  ask: the first question to need the classifier took {ms / 1000:.2f} s"
                        f" (the embedding model loaded then, its libraries already imported by "
                        f"this process; the classifier {how})"
                    )
                else:
                    times.append(ms)
        return paths, times
    finally:
        asker.close()


async def _session_paths(
    settings: Settings, sets: dict[str, list[Labelled]], now: datetime
) -> tuple[dict[str, list[str]], list[float]]:
    tokenizer = load_tokenizer(settings)
    runtime = Runtime(settings, llm=ScriptedLLM(tokenizer, lambda prompt: "From the model."))
    try:
        status_set.seed(runtime.store, now)
        session = runtime.open_session()
        runtime.intents.warm()  # its first-question cost is `ask`'s figure
        paths: dict[str, list[str]] = {}
        times: list[float] = []
        for name, items in sets.items():
            runtime.intents.forget_recent()
            paths[name] = []
            for item in items:
                t0 = time.perf_counter()
                decision = await session.chain.decide(item.text, session.id)
                times.append((time.perf_counter() - t0) * 1000.0)
                # A reminder command or an approval is answered before the state path.
                paths[name].append(decision.path if isinstance(decision, Answered) else "model")
        return paths, times
    finally:
        await runtime.close()


def run_front_ends(
    settings: Settings, sets: dict[str, list[Labelled]], now: datetime, lines: list[str]
) -> bool:
    """Route `sets` through `ask` and a live session; True when both agree on every question."""
    say = lines.append
    say("through the front ends (each its own home and runtime, the model never asked):")
    with tempfile.TemporaryDirectory(prefix="annie-bench-front-") as tmp:
        ask_home = settings.model_copy(update={"home": str(Path(tmp) / "ask")})
        session_home = settings.model_copy(update={"home": str(Path(tmp) / "session")})
        for home in (ask_home, session_home):
            home.home_path.mkdir(parents=True)
        by_ask, ask_ms = _ask_paths(ask_home, sets, now, lines)
        by_session, session_ms = asyncio.run(_session_paths(session_home, sets, now))
    same = True
    for name, items in sets.items():
        # `ask` says "state" for every answer without the model; the session names the stage.
        session_paths = by_session[name]
        without_model = ["model" if p == "model" else "state" for p in session_paths]
        differ = [
            i.text for i, a, s in zip(items, by_ask[name], without_model, strict=True) if a != s
        ]
        same = same and not differ
        status = [k for k, i in enumerate(items) if i.label != "none"]
        near = [k for k, i in enumerate(items) if i.label == "none"]
        answered = sum(session_paths[k] == "state" for k in status)
        taken = sum(session_paths[k] == "state" for k in near)
        commands = sum(session_paths[k] in ("reminder", "approval") for k in near)
        say(
            f"  {name}: ask and the live session took the same path for "
            f"{len(items) - len(differ)}/{len(items)}; the state path answered {answered}/"
            f"{len(status)} status questions and {taken}/{len(near)} near misses (reminder "
            f"commands among the near misses, carried out before it: {commands})"
        )
        for text in differ[:5]:
            say(f"    differs: {text!r}")
    say(f"  ask, whole answer per turn: {spread(ask_ms)}")
    say(f"  live session, the chain's decision per turn: {spread(session_ms)}")
    return same
