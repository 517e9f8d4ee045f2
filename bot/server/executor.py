"""The event loop's default thread pool for the long-running server, every worker started at once.

`asyncio.to_thread` (speech recognition, the end-of-turn detector, Piper's chunks, the allocator's
trim) runs on the loop's default `ThreadPoolExecutor`. That pool starts a worker only when a job
finds none idle, and never ends one, so its size is the busiest moment so far: over the
reliability bench's 30-minute soak it went from 4 workers to 5, read as a thread leak. Starting
all of them before the first session makes the count the same from the first minute to the
last, and bounds it by the same number the default pool would reach at worst.
"""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor

PREFIX = "asyncio"  # the name the default pool's workers get, so /healthz counts them as before


def pool_size() -> int:
    """What `ThreadPoolExecutor` picks by default: min(32, cores + 4)."""
    return min(32, (os.cpu_count() or 1) + 4)


def started_pool(workers: int | None = None, timeout: float = 10.0) -> ThreadPoolExecutor:
    """A pool whose `workers` threads are all running (idle) when it is returned.

    The pool starts a thread for a job only when no worker is idle, so `workers` jobs that wait
    for one another make it start all of them; then they return and the workers idle.
    """
    size = workers or pool_size()
    pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix=PREFIX)
    gate = threading.Barrier(size, timeout=timeout)
    jobs = [pool.submit(gate.wait) for _ in range(size)]
    for job in jobs:
        job.result()
    return pool


def install(loop: asyncio.AbstractEventLoop, workers: int | None = None) -> ThreadPoolExecutor:
    """Make a started pool the loop's default executor; returns it."""
    pool = started_pool(workers)
    loop.set_default_executor(pool)
    return pool
