"""Opening a GGUF file with llama.cpp, the one way the chat model and the vocabulary both do.

The CUDA runtime libraries a prebuilt CUDA wheel leaves out are opened first
(`models.cuda_libs.prepare_llama`), llama.cpp's load chatter is captured while it loads, and a
failed load is a `ModelError` that says what llama.cpp said and what to do about it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from models.base import ModelError
from models.cuda_libs import prepare_llama
from models.llama_log import StderrLog, quiet_stderr, set_verbose


def open_llama(path: Path, failed: str, fix: str, **options: Any) -> Any:
    """A `llama_cpp.Llama` over `path` with `options`; on failure a ModelError reading
    "`failed` {path}: {why} ({llama.cpp's own lines}). Fix: `fix`"."""
    prepare_llama()
    import llama_cpp

    log = StderrLog()
    try:
        with quiet_stderr() as log:
            try:
                # Verbose inside the capture, so a failed load can say why.
                llama = llama_cpp.Llama(str(path), verbose=True, **options)
                llama.verbose = False
            finally:
                set_verbose(False)
    except Exception as exc:
        raise ModelError(f"{failed} {path}: {exc} ({log.tail()}). Fix: {fix}") from exc
    return llama
