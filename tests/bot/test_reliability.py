"""The reliability bench in the suite: the real server in a child process, scaled down.

A kill at each of five moments, a short soak, `max_sessions` clients at once, disconnects
mid-work and every hostile input (4 s of silence instead of ten minutes), each with the
targets of issue 13 as assertions. A failure names what was sent and what came back.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bench import reliability_hostile as net
from bench import reliability_media as media
from bench.reliability_disconnect import run_disconnects
from bench.reliability_kill import MOMENTS, run_kills
from bench.reliability_load import run_concurrency, run_soak
from testkit.reliability import ServerProcess, Speech

# The reliability bench's short form: minutes of server processes; the full run only.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> Speech:
    return Speech(tmp_path_factory.mktemp("speech"))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server with every engine for the concurrency, disconnect and hostile cases."""
    with ServerProcess(tmp_path_factory.mktemp("live")) as server:
        server.start()
        yield server


@pytest_asyncio.fixture
async def up(live: ServerProcess) -> AsyncIterator[ServerProcess]:
    """The live server, checked still up after each test (a case may have killed it)."""
    yield live
    assert live.alive(), f"the server died:\n{live.log()}"
    assert live.health()["ok"]


def _failed(cases: list[net.Case]) -> list[dict[str, Any]]:
    return [vars(c) for c in cases if not c.handled]


async def test_a_kill_at_each_moment_loses_no_completed_turn(
    tmp_path: Path, speech: Speech
) -> None:
    # One kill at each of the five moments (`bench reliability` runs as many as asked).
    k = await run_kills(tmp_path / "kill", len(MOMENTS), speech)
    assert k["kills"] == len(MOMENTS)
    assert k["integrity_failures"] == []
    assert k["turns_lost"] == 0, k["lost_ids"]
    assert k["half_written"] == 0, k["half_written_ids"]
    assert k["episodes_lost"] == 0, k["episodes_lost_ids"]
    assert k["briefing_checked"] == len(MOMENTS)
    assert k["briefing_carried"] == k["briefing_checked"], k["briefing_misses"]
    reached = {m: v["reached"] for m, v in k["by_moment"].items()}
    assert reached == dict.fromkeys(MOMENTS, 1), (reached, k["not_reached"])


async def test_a_short_soak(tmp_path: Path, speech: Speech) -> None:
    # The suite's short form: the bench's minute of warm-up (half a minute left the thread
    # pools still growing at its start), then at least half a minute and ten actions measured
    # (one reconnect, one barge-in and turns on both paths at least, however slow the
    # machine), each answer heard for a second before the stop (the bench listens 2.5 s).
    # Growth over hours is the bench's: `bench reliability --minutes N`.
    with ServerProcess(tmp_path / "soak") as server:
        server.start()
        s = await run_soak(server, speech, 0.5, min_actions=10, listen_s=1.0)
    assert s["failed"] == 0, s["failures"]
    assert s["turns"] >= 4 and s["reconnects"] >= 1 and s["barge_ins"] >= 1
    # Resident memory may grow by the saved model states (bounded by models.llm_checkpoints,
    # and reported by /healthz). Beyond them the target is < 50 MB over 30 minutes,
    # not met yet (the bench reports it); here a leak as fast as a kept connection (each held
    # its buffers and two threads) fails at once.
    assert s["rss_growth_less_cache_mb"] < 200, s["samples"]
    assert s["fds"][1] <= s["fds"][0] + 2, s["samples"]
    # At rest at both ends (see run_soak): the Python threads, by kind and count, are the same
    # (a kept connection would leave its audio decoder here). All threads together are the
    # bench's to judge over a long run: in half a minute the engines' native pools, started
    # lazily at their first call of a size, read as growth (25 -> 28 and 25 -> 30 here, with
    # the same Python threads at both ends). Native threads per connection are counted over
    # five connections in tests/bot/voice/test_connection_lifetime.py.
    kinds = s["thread_kinds"]
    assert kinds[0] and kinds[1] == kinds[0], (kinds, s["threads"])
    assert s["sessions_after"] == 0
    # Latency is measured path by path in both windows; whether it drifts is the bench's to
    # judge (`bench reliability --minutes N` prints it, alone on the machine): here another
    # process's load in the last window would read as drift, and a slow machine must make this
    # test slower, never red.
    paths = s["latency_by_path"]
    assert all(w["first"]["n"] and w["last"]["n"] for w in paths.values()), paths
    # Both read at rest; the last session's tier-3 polish (the model's summary, saved after
    # the rules' checkpoint) may still be running at the end: one task.
    assert s["tasks"][1] <= s["tasks"][0] + 1 and s["peers"][1] == 0, s


async def test_max_sessions_at_once_without_cross_talk(up: ServerProcess, speech: Speech) -> None:
    c = await run_concurrency(up, speech)
    assert c["max_sessions"] >= 2
    assert c["cross_talk"] == 0, [s["cross_talk"] for s in c["sessions"]]
    for seat in c["sessions"]:
        assert seat["answer"] and seat["latency_ms"] is not None, seat
        assert seat["stored"], seat
    assert c["refused"]["refused"], c["refused"]
    assert "too many open sessions" in c["refused"]["message"]


async def test_disconnects_persist_tier3(up: ServerProcess) -> None:
    """A disconnect at each moment persists the session (tier 3). How soon is the bench's
    figure (`bench reliability`, target within a second): a loaded machine makes it later,
    and that is no failure here."""
    d = await run_disconnects(up)
    report = json.dumps(d)
    for case in ("answer", "tool_call", "compaction"):
        assert d[case]["reached"], report
    for case, r in d.items():
        assert r["session_gone"], report
        assert r["cpu_settled_s"] is not None, report
        assert r["tier3_s"] is not None, f"{case}: no tier-3 row within 30 s: {report}"


async def test_hostile_http(up: ServerProcess) -> None:
    cases = await net.http_cases(up, slow_s=10.0, half_open=50)
    assert len(cases) == 11
    assert _failed(cases) == [], _failed(cases)


async def test_hostile_sdp(up: ServerProcess) -> None:
    cases = await net.sdp_cases(up)
    assert len(cases) == 5
    assert _failed(cases) == [], _failed(cases)


async def test_hostile_data_channel(up: ServerProcess) -> None:
    cases = await net.channel_cases(up, flood=50)
    assert len(cases) == 16
    assert _failed(cases) == [], _failed(cases)


async def test_hostile_audio(up: ServerProcess, speech: Speech) -> None:
    cases = await media.audio_cases(up, speech, silence_s=4.0)
    assert len(cases) == 6
    assert _failed(cases) == [], _failed(cases)


async def test_full_disk_and_locked_database(up: ServerProcess) -> None:
    # Last in the module: it stops and restarts the shared server.
    cases = await media.storage_cases(up)
    assert [c.name for c in cases] == ["full disk", "database locked"]
    assert _failed(cases) == [], _failed(cases)
