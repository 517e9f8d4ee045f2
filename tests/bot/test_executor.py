"""The server's default thread pool: every worker running from the start, none added later."""

from __future__ import annotations

import asyncio
import threading
import time

from bot.server.executor import PREFIX, install, pool_size, started_pool


def _workers() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith(PREFIX + "_"))


def test_a_started_pool_runs_all_its_workers_and_adds_none_under_load() -> None:
    before = _workers()
    pool = started_pool(3)
    try:
        assert _workers() - before == 3
        # More jobs at once than workers: they queue; the pool starts no fourth thread.
        jobs = [pool.submit(time.sleep, 0.05) for _ in range(12)]
        for job in jobs:
            job.result()
        assert _workers() - before == 3
    finally:
        pool.shutdown(wait=True)
    assert _workers() == before


def test_installed_as_the_loops_default_it_serves_to_thread() -> None:
    async def main() -> tuple[int, str]:
        loop = asyncio.get_running_loop()
        pool = install(loop, 2)
        try:
            before = _workers()
            names = await asyncio.gather(
                *(asyncio.to_thread(lambda: threading.current_thread().name) for _ in range(8))
            )
            assert all(n.startswith(PREFIX + "_") for n in names)
            return _workers() - before, names[0]
        finally:
            pool.shutdown(wait=True)

    added, _ = asyncio.run(main())
    assert added == 0
    assert pool_size() >= 5  # min(32, cores + 4): at least one core
