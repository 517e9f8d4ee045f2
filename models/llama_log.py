"""llama.cpp's own log: quieted while a model loads, and kept to say why a load failed.

llama.cpp prints its load chatter to file descriptor 2 even when asked not to, and its load
errors only there; `quiet_stderr` captures both that and what llama-cpp-python forwards to
Python's `sys.stderr`, and `StderrLog.tail` picks out the lines that say what went wrong.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import threading
from collections.abc import Iterator

_STDERR_LOCK = threading.Lock()


class StderrLog:
    """What llama.cpp printed while stderr was captured (its load errors are only there)."""

    def __init__(self) -> None:
        self.text = ""

    def tail(self, lines: int = 3) -> str:
        """The lines that say what went wrong, else the last few."""
        kept = [ln.strip() for ln in self.text.splitlines() if ln.strip()]
        errors = [ln for ln in kept if any(w in ln.lower() for w in ("error", "fail", "unknown"))]
        return " | ".join((errors or kept)[-lines:])


def set_verbose(verbose: bool) -> None:
    """Route llama.cpp's log through llama-cpp-python's logger at this verbosity (called once
    llama_cpp is loaded)."""
    from llama_cpp._logger import set_verbose as _set

    _set(verbose)


@contextlib.contextmanager
def quiet_stderr() -> Iterator[StderrLog]:
    """Capture C-level stderr (llama.cpp prints load chatter even with verbose=False)."""
    log = StderrLog()
    # llama-cpp-python forwards llama.cpp's errors to Python's sys.stderr; the rest goes
    # straight to file descriptor 2. Capture both.
    python_side = io.StringIO()
    with _STDERR_LOCK, tempfile.TemporaryFile() as sink, contextlib.redirect_stderr(python_side):
        try:
            saved = os.dup(2)
        except OSError:
            yield log
            return
        try:
            os.dup2(sink.fileno(), 2)
            yield log
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            native = sink.read()[-20000:].decode("utf-8", errors="replace")
            log.text = native + python_side.getvalue()[-20000:]
