"""A session process for the kill -9 test: completes some turns, then streams a slow answer.
Also the scenario's parts the in-process session tests share (`scripted_runtime`).

Run as `python -m tests.compaction.crash_child N` with ANNIE_HOME set. It prints `DONE i` after
each completed turn and `STREAMING` once the last turn's answer has started; the parent kills
it with SIGKILL at that point, so no tier-3 record is ever written.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from bot.runtime import Runtime
from bot.turn.events import TextDelta
from compaction.summarize import INSTRUCTIONS
from config import load_settings
from memory.store import Store
from models import Tokenizer, load_tokenizer
from models.fakes import ScriptedLLM
from testkit.sim import scripted_summary

TURNS = [
    ("Hi Annie, I want to plan my sister's birthday.", "Lovely. Tell me about her."),
    ("actually my sister's name is Ana, not Anna", "Thanks, Ana it is."),
    ("My booking reference for the venue is QX-7731.", "Noted: QX-7731."),
    ("She likes jazz and green tea.", "Jazz and green tea, got it."),
]
CORRECTION = TURNS[1][0]
LAST = "Can you draft the whole plan for the day, hour by hour?"
SLOW_ANSWER = "Here is the plan. " + "We start in the morning and then we walk. " * 60


def reply(prompt: str) -> str:
    for question, answer in TURNS:
        if prompt.rstrip().endswith(f"{question}<|im_end|>\n<|im_start|>assistant"):
            return answer
    return SLOW_ANSWER


def short_answer(prompt: str) -> str:
    # Summary calls (tier 3 on close) get checkpoint JSON; conversation turns a short answer.
    return scripted_summary(prompt) if INSTRUCTIONS in prompt else "Okay, noted."


def scripted_runtime(tokenizer: Tokenizer) -> tuple[Runtime, ScriptedLLM]:
    """A runtime at a 16,384 window over the test's ANNIE_HOME, answering `short_answer`."""
    settings = load_settings(context={"window": 16384})
    llm = ScriptedLLM(tokenizer, short_answer, n_ctx=16384)
    store = Store(settings.db_path)
    return Runtime(settings, llm=llm, store=store, tokenizer=tokenizer), llm


async def main(completed: int) -> None:
    settings = load_settings(context={"window": 16384})
    tokenizer = load_tokenizer(settings)
    llm = ScriptedLLM(tokenizer, reply, n_ctx=16384, token_delay_s=0.05)
    runtime = Runtime(settings, llm=llm, store=Store(settings.db_path), tokenizer=tokenizer)
    session = runtime.open_session(meta={"front_end": "crash-test"})
    print(f"SESSION {session.id}", flush=True)
    for i, (question, _) in enumerate(TURNS[:completed], start=1):
        async for _event in session.handle_text(question):
            pass
        await session.wait_idle()
        print(f"DONE {i}", flush=True)
    async for event in session.handle_text(LAST):
        if isinstance(event, TextDelta):
            print("STREAMING", flush=True)
            await asyncio.sleep(60)  # the parent kills the process during this turn


def kill_mid_turn(annie_home: Path, completed: int = len(TURNS)) -> tuple[str, list[str]]:
    """Run this module as a child, SIGKILL it while it streams; (its session id, its lines)."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.compaction.crash_child", str(completed)],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "ANNIE_HOME": str(annie_home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    seen: list[str] = []
    try:
        for line in child.stdout:
            seen.append(line.strip())
            if line.startswith("STREAMING"):
                child.send_signal(signal.SIGKILL)  # mid-answer: no tier-3, no clean close
                break
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, (seen, child.stderr.read() if child.stderr else "")
    return seen[0].split()[1], seen


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
