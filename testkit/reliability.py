"""The reliability harness: the real server in a child process, observed from outside.

`ServerProcess` starts `python -m bot serve` with its own ANNIE_HOME and a free port, waits
for `/healthz`, and can kill it with SIGKILL, stop it cleanly, cap its file size (a full disk
without a privileged mount: RLIMIT_FSIZE through `prlimit`, with SIGXFSZ ignored so writes
fail with EFBIG instead of killing it), and read its resources from /proc. `Speech` makes the
recorded questions once with the Piper voice and caches them as .npy files. `bench reliability`
and tests/bot/test_reliability.py share all of this.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from testkit.peer import VoiceClient

ROOT = Path(__file__).resolve().parents[1]
# Small window: the shipped 135M model prefills ~130 tokens/s, and the thresholds are fractions.
WINDOW = 4096


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ProcStats:
    """What /proc says about a process; `tasks` and `peers` come from /healthz when it has them."""

    rss_kb: int
    fds: int
    threads: int
    cpu_s: float
    health: dict[str, Any]


def _ignore_xfsz() -> None:
    # In the child before exec: an ignored signal stays ignored across exec, so a write past
    # RLIMIT_FSIZE returns EFBIG (a clear "file too large") instead of killing the server.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


class ServerProcess:
    """`python -m bot serve` on a free loopback port, over `home`."""

    def __init__(
        self,
        home: Path,
        *,
        window: int = WINDOW,
        embeddings: bool = True,
        env: dict[str, str] | None = None,
    ) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "ANNIE_HOME": str(home),
            "ANNIE_SERVER__PORT": str(self.port),
            "ANNIE_CONTEXT__WINDOW": str(window),
            "HF_HUB_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        if not embeddings:
            # Half of a start is importing sentence-transformers; without it the server runs
            # recall-off and lexical search, which nothing a kill checks depends on.
            self.env["ANNIE_MODELS__EMBED_PATH"] = str(home / "no-embedding-model")
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.log_path = home / "serve-0.log"

    @property
    def db_path(self) -> Path:
        return self.home / "annie.db"

    @property
    def pid(self) -> int:
        assert self.proc is not None, "the server is not running"
        return self.proc.pid

    def start(self, timeout: float = 180.0) -> float:
        """Start it and wait until /healthz answers; returns the seconds that took."""
        self.starts += 1
        self.log_path = self.home / f"serve-{self.starts}.log"
        t0 = time.monotonic()
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bot", "serve"],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_ignore_xfsz,
                start_new_session=True,  # a Ctrl+C on the bench is not the server's
            )
        atexit.register(self.kill9)  # a bench that crashes leaves no server behind
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}):\n{self.log()}")
            with contextlib.suppress(OSError):
                if self.health().get("ok"):
                    return time.monotonic() - t0
            time.sleep(0.1)
        self.kill9()
        raise TimeoutError(f"the server did not answer /healthz in {timeout:.0f}s:\n{self.log()}")

    def wait_head(self, timeout: float = 300.0) -> float:
        """Wait until the server has evaluated the head every session shares (it does so
        when it starts, while nobody talks); returns the seconds that took."""
        t0 = time.monotonic()
        while not self.health().get("head_kept"):
            if time.monotonic() - t0 > timeout or not self.alive():
                raise TimeoutError(f"the shared head was not kept in {timeout:.0f}s:\n{self.log()}")
            time.sleep(0.2)
        return time.monotonic() - t0

    def health(self, timeout: float = 5.0) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/healthz", timeout=timeout) as response:
            return dict(json.loads(response.read()))

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGINT (a clean shutdown: every session closes, tier 3), then SIGKILL past `timeout`."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            return None

    def limit_file_size(self, limit: int | None) -> None:
        """Cap (or with None, lift) the size of any file the server writes: a full disk."""
        value = resource.RLIM_INFINITY if limit is None else limit
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.prlimit(self.pid, resource.RLIMIT_FSIZE, (value, hard))

    def stats(self) -> ProcStats:
        """Resident memory, open descriptors, threads and CPU time, read from /proc."""
        proc = Path(f"/proc/{self.pid}")
        status = (proc / "status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        rss = int(fields["VmRSS"].split()[0])
        threads = int(fields["Threads"].strip())
        stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        cpu = (int(stat[11]) + int(stat[12])) / tick  # utime + stime
        fds = len(os.listdir(proc / "fd"))
        health: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            health = self.health()
        return ProcStats(rss, fds, threads, cpu, health)

    def log(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop(timeout=30)


# Questions: the state path answers from typed tables in milliseconds; the model path runs the
# shipped LLM. Distinct words per question, so each client's answers can be told apart.
STATE_QUESTIONS = [
    "Are there any tasks pending on me?",
    "What time is it?",
    "How full is the context?",
    "Do I have any reminders?",
]
MODEL_QUESTIONS = [
    "What is the capital of France?",
    "Name a color.",
    "Tell me a fun fact about whales.",
    "Say hello to me.",
]
LONG_QUESTION = "Tell me a long story about the sea and a lighthouse keeper."
INTERRUPTION = "Stop, please wait a moment."


class Speech:
    """Recorded questions, spoken once by the Piper voice and cached as 48 kHz int16 .npy."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        cache.mkdir(parents=True, exist_ok=True)
        self._tts: Any = None

    async def clip(self, text: str) -> np.ndarray:
        name = "".join(c if c.isalnum() else "_" for c in text.lower())[:80] + ".npy"
        path = self.cache / name
        if path.exists():
            return np.asarray(np.load(path), dtype=np.int16)
        if self._tts is None:
            from config import load_settings
            from models import load_tts
            from testkit.peer import speak_48k

            self._tts = load_tts(load_settings())
            self._speak = speak_48k
        pcm = await self._speak(self._tts, text)
        np.save(path, pcm)
        return pcm


async def connect(url: str, resume: str | None = None, timeout: float = 30.0) -> VoiceClient:
    """A connected VoiceClient (closed again if connecting fails)."""
    client = VoiceClient(url)
    try:
        await client.connect(resume=resume, timeout=timeout)
    except BaseException:
        await client.close()
        raise
    return client


async def no_sessions(server: ServerProcess, timeout: float = 30.0) -> int:
    """Wait until /healthz counts no session (a closed client's slot frees once the server has
    closed its session, tier 3 included); returns the count left."""
    deadline = time.monotonic() + timeout
    left = -1
    while time.monotonic() < deadline:
        left = int(server.health().get("sessions", -1))
        if left == 0:
            return 0
        await asyncio.sleep(0.2)
    return left


def done_turns(client: VoiceClient) -> list[dict[str, Any]]:
    """The assistant_done events the client saw: turns it was told are complete."""
    return client.of_type("assistant_done")


def turns_heard(client: VoiceClient) -> set[str]:
    """Every turn the client has heard of so far."""
    return {e["turn_id"] for e in client.events if e.get("turn_id")}


def new_event(client: VoiceClient, seen: set[str], *kinds: str) -> dict[str, Any] | None:
    """The first event of `kinds` from a turn not in `seen`. A turn still being spoken when
    the next one starts ends then, with events of its own (a second assistant_done,
    interrupted): they are not the new turn's."""
    return next(
        (e for e in client.events if e.get("type") in kinds and e.get("turn_id") not in seen),
        None,
    )


def new_done(client: VoiceClient, seen: set[str]) -> dict[str, Any] | None:
    """The assistant_done of a turn not in `seen` (see `new_event`)."""
    return new_event(client, seen, "assistant_done")


def _idle(client: VoiceClient, turn_id: str) -> bool:
    return any(
        e.get("state") == "idle" and e.get("turn_id") == turn_id
        for e in client.of_type("voice_state")
    )


async def turn(
    client: VoiceClient,
    said: str | np.ndarray,
    *,
    timeout: float = 180.0,
    listen_s: float = 4.0,
) -> dict[str, Any]:
    """Type (str) or speak (PCM) one turn and wait for its answer; returns its assistant_done.

    Then listen like a person: up to `listen_s` of the answer being spoken, after which the
    client presses stop, since the small model can ramble for minutes of speech."""
    # Every turn heard of so far: one still running ends (interrupted, often with no text)
    # before this one's answer comes.
    seen = turns_heard(client)
    if isinstance(said, str):
        client.send_text(said)
    else:
        client.mic.play(said)
    done = await wait(client, lambda c: new_done(c, seen), timeout, "an answer")
    turn_id = done["turn_id"]
    with contextlib.suppress(TimeoutError):
        await wait(client, lambda c: _idle(c, turn_id), listen_s, "the answer spoken")
        return dict(done)
    client.send({"type": "interrupt"})
    with contextlib.suppress(TimeoutError):
        await wait(client, lambda c: _idle(c, turn_id), 15.0, "the answer stopped")
    return dict(done)


async def wait(client: VoiceClient, predicate: Any, timeout: float, what: str) -> Any:
    """`client.wait_for` with a short message (its own lists every event seen)."""
    try:
        return await client.wait_for(predicate, timeout, what)
    except TimeoutError as exc:
        last = [e.get("type") for e in client.events[-8:]]
        msg = f"timed out after {timeout:.0f}s waiting for {what}; last: {last}"
        raise TimeoutError(msg) from exc


def latencies(client: VoiceClient, stage: str = "voice_to_voice") -> list[float]:
    """The server's per-turn latency for `stage` in ms, as the data channel reported it."""
    return [
        float(e["stages"][stage]) for e in client.of_type("latency") if stage in e.get("stages", {})
    ]


def pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(np.asarray(values), q)), 1) if values else None
