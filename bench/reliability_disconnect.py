"""Disconnects: the peer leaves mid-answer, mid-tool-call and mid-compaction.

Each case completes a turn (so the session has something to persist), starts the work, and
closes the client's peer connection at its first sign on the data channel. Then, from
outside: how long after the close the session's tier-3 checkpoint row was written (the
`created_at` the server stamps, against the moment of the close: target 1 s), that /healthz
stops counting the session, and that the server's CPU time settles, which is how a generation
still running for a session that is gone shows from outside the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from typing import Any

from bench.reliability_kill import TOOL_REQUEST, compacting, fill
from testkit import reliability_store as rs
from testkit.peer import VoiceClient
from testkit.reliability import (
    MODEL_QUESTIONS,
    STATE_QUESTIONS,
    ServerProcess,
    new_done,
    no_sessions,
    turn,
    turns_heard,
    wait,
)

CASES = ("answer", "tool_call", "compaction")
# CPU use (seconds per second) below this counts as settled: only the reminder scheduler
# and aiortc's timers are left.
IDLE_CPU = 0.15


async def run_disconnects(server: ServerProcess) -> dict[str, Any]:
    return {case: await _drop(server, case) for case in CASES}


async def _drop(server: ServerProcess, case: str) -> dict[str, Any]:
    await no_sessions(server)
    client = VoiceClient(server.url)
    await client.connect()
    await turn(client, STATE_QUESTIONS[0], listen_s=2.0)
    n = len(client.events)
    if case == "compaction":
        await fill(client)
    seen = turns_heard(client)
    sign = _start(client, case, n)
    # The state turn, if still being spoken, ends (interrupted) as this one starts: only this
    # turn's own assistant_done ends the wait.
    answered = (lambda c: new_done(c, seen)) if case == "tool_call" else (lambda c: False)
    with contextlib.suppress(TimeoutError):
        # A model that answers without calling a tool ends the wait: "not reached".
        await wait(client, lambda c: sign(c) or answered(c), 300.0, f"mid-{case}")
    reached = bool(sign(client))
    closed_at = datetime.now(UTC)
    await client.close()
    t0 = time.monotonic()
    persisted_s = await _tier3_after(server, client.session_id, closed_at)
    settle_s = await _cpu_settles(server, t0)
    gone = server.health().get("sessions") == 0
    return {
        "reached": reached,
        "tier3_s": persisted_s,
        "session_gone": gone,
        "cpu_settled_s": settle_s,
    }


def _seen(n: int, kind: str) -> Any:
    return lambda c: any(e.get("type") == kind for e in c.events[n:])


def _start(client: VoiceClient, case: str, n: int) -> Any:
    if case == "answer":
        client.send_text(MODEL_QUESTIONS[2])
        return _seen(n, "assistant_delta")
    if case == "tool_call":
        client.send({"type": "text", "text": TOOL_REQUEST, "tool": "create_task"})
        return _seen(n, "tool_call")  # the small model may never call one
    return compacting(n)  # fill() ended past tier 2 (n is from before it): tier 2 runs now


async def _tier3_after(server: ServerProcess, session_id: str, closed_at: datetime) -> float | None:
    """Seconds from the close to the tier-3 row's timestamp; None if none within 30 s."""
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        rows = [c for c in rs.checkpoints(server.db_path, session_id) if c.tier == 3]
        if rows:
            # The first row: the rules' checkpoint; a model-polished one may follow it.
            return round((rows[0].created_at - closed_at).total_seconds(), 2)
        await asyncio.sleep(0.1)
    return None


async def _cpu_settles(server: ServerProcess, t0: float, limit_s: float = 30.0) -> float | None:
    """Seconds after the close until the server's CPU use stays below IDLE_CPU for 1 s."""
    last = server.stats().cpu_s
    quiet = 0
    while time.monotonic() - t0 < limit_s:
        await asyncio.sleep(0.5)
        now = server.stats().cpu_s
        quiet = quiet + 1 if (now - last) / 0.5 < IDLE_CPU else 0
        last = now
        if quiet >= 2:
            return round(time.monotonic() - t0 - 1.0, 1)
    return None
