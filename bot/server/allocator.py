"""The C allocator for the long-running server: its policy (large blocks go back to the system),
freed memory handed back when a connection ends, and the heap figures /healthz reports.

glibc serves a block of 128 KiB or more with mmap and returns it on free, but each time such a
block is freed it raises that threshold to the block's size (up to 32 MiB). From then on blocks
of that size come from the heap arenas, where freed memory stays resident unless it happens to
sit at the top of a heap. The server frees multi-megabyte blocks all the time (saved model
states, audio, transcription features, from several threads and so several arenas), so resident
memory crept up: 181 MB beyond the saved states over a four-minute run of the reliability bench's
soak, against 26 MB in the same run repeated with MALLOC_MMAP_THRESHOLD_=1048576 in the
environment. Setting the threshold, or the trim threshold, turns glibc's dynamic rule off.

glibc also gives each thread that allocates while the others hold theirs an arena of its own,
up to eight per core, and each arena keeps its own free memory. The server's threads
(recognition, the end-of-turn detector, Piper, llama.cpp's workers, the asyncio pool) each
filled one.
Over a five-minute soak, two arenas (M_ARENA_MAX) took resident growth beyond the saved states
from 62 to 36 MB and the free memory the arenas held from +60 to +27 MB, with the same turns.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
from typing import Any

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # from glibc's malloc.h
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
ARENA_MAX = 2  # the main thread's arena and one shared by every other thread
MMAP_THRESHOLD = 1 << 20  # blocks from 1 MiB up are mapped, and unmapped when freed
TRIM_THRESHOLD = 4 << 20  # free space above this at a heap's top goes back at once


@functools.cache
def _libc(function: str) -> Any | None:
    """A function of the C library, or None where there is none by that name (not glibc).
    Looked up once: find_library runs ldconfig, and /healthz asks on every request."""
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), function) if name else None
    except (OSError, AttributeError):
        return None


def return_large_blocks() -> bool:
    """Fix glibc's mmap and trim thresholds and its arena count; True if set. Call before the
    engines load (and start their threads): a thread keeps the arena it was given.

    Not glibc (musl, macOS) or a policy chosen in the environment (glibc's own
    MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ and MALLOC_ARENA_MAX variables): leave the
    allocator alone.
    """
    chosen = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_ARENA_MAX")
    if any(v in os.environ for v in chosen):
        return False
    mallopt = _libc("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    done = all(
        bool(mallopt(option, value))
        for option, value in (
            (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
            (M_TRIM_THRESHOLD, TRIM_THRESHOLD),
            (M_ARENA_MAX, ARENA_MAX),
        )
    )
    if not done:
        log.warning("could not set the allocator's policy; resident memory may creep up")
    return done


def release_free() -> bool:
    """Hand the arenas' free pages back to the system (glibc's malloc_trim); True if done.

    Blocks under the mmap threshold come from heap arenas, and a heap only shrinks from its
    top: memory freed in the middle stays resident, held for reuse. Over the reliability
    bench's 30-minute soak that held memory grew by 60 MB (90 -> 150 MB) while the data kept
    grew by 20 MB beyond the saved states. malloc_trim releases the free pages wherever they
    are. It walks every arena under its lock, so it runs at a quiet moment (a connection has
    ended) and off the event loop.
    """
    trim = _libc("malloc_trim")
    if trim is None:
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)
    return True


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def heap_mb() -> dict[str, float] | None:
    """The C heap over all arenas (glibc's mallinfo2), in MB; None where there is no mallinfo2.

    "allocated" is what the process holds (arena blocks in use plus mapped blocks); "free_held"
    is freed memory the arenas keep. Resident growth that shows up in the second is the
    allocator's, not a leak; growth in the first is data something keeps.
    """
    fn = _libc("mallinfo2")  # glibc 2.33 and later
    if fn is None:
        return None
    fn.restype = _MallInfo2
    info = fn()
    mb = 2**20
    return {
        "allocated": round((info.uordblks + info.hblkhd) / mb, 1),
        "free_held": round(info.fordblks / mb, 1),
    }
