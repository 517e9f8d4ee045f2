"""Generated hostile input, surface by surface: the registry `bench fuzz` and the suite share.

A surface is one way input reaches Annie (HTTP routes, the data channel, audio, the model's own
output, ...). Each is a function `(cases, seed, home) -> SurfaceReport` that generates `cases`
inputs from `seed` (the same seed gives the same cases), sends each through the real component
over `home` (an ANNIE_HOME of its own), and checks the property every surface shares: a clear
error or a correct result within the documented timeouts (`docs/reliability.md`), the server
still answers `/healthz`, the store passes its integrity check, and no completed turn is lost.
Surfaces live in the modules named in `MODULES`, each exporting a `SURFACES` dict.

What the surfaces share is here too: `generate` runs a Hypothesis strategy as a plain function
(no shrinking: a failure is recorded, never raised, so one bad input does not stop the run);
`fixed_cases` reads the failing inputs found once and kept (`tests/fixtures/fuzz/NAME.json`,
run before the generated ones); `Served` is one real server for a surface's run, checked after
every case; `Worker` runs cases in a child process that can be killed when one runs away.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import json
import os
import pickle
import re
import resource
import select
import struct
import subprocess
import sys
import time
import traceback
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisDeprecationWarning

ROOT = Path(__file__).resolve().parents[1]
# Failing inputs found once and fixed: one JSON file per surface (see `fixed_cases`).
FIXED_DIR = ROOT / "tests" / "fixtures" / "fuzz"

T = TypeVar("T")


@dataclass
class SurfaceReport:
    """What one surface's run found: `distinct` holds one line per kind of failure (its
    exception type or broken property and where), with an input that shows it."""

    cases: int = 0
    failures: int = 0
    distinct: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def fail(self, kind: str, example: str) -> None:
        """Count a failing case; the first input of each kind is kept to show it."""
        self.failures += 1
        self.distinct.setdefault(kind, example[:500])

    def to_json(self) -> dict[str, object]:
        return {
            "cases": self.cases,
            "failures": self.failures,
            "distinct": len(self.distinct),
            "seconds": round(self.seconds, 1),
        }


Surface = Callable[[int, int, Path], SurfaceReport]

# The modules holding surfaces; each exports `SURFACES: dict[str, Surface]`.
MODULES: tuple[str, ...] = (
    "testkit.fuzz_web",
    "testkit.fuzz_inputs",
    "testkit.fuzz_media",
    "testkit.fuzz_model",
)


def surfaces() -> dict[str, Surface]:
    """Every surface by name, in the order of `MODULES`."""
    found: dict[str, Surface] = {}
    for name in MODULES:
        found.update(importlib.import_module(name).SURFACES)
    return found


def run(name: str, cases: int, seed: int, home: Path) -> SurfaceReport:
    """Run one surface, timing it."""
    t0 = time.monotonic()
    report = surfaces()[name](cases, seed, home)
    report.seconds = time.monotonic() - t0
    return report


# --- cases as JSON, and the ones kept -----------------------------------------------------


def encode(value: Any) -> Any:
    """A case as JSON: bytes become `{"$bytes": base64}`; dicts, lists and scalars as they are."""
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    return value


def decode(value: Any) -> Any:
    """The inverse of `encode`."""
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return base64.b64decode(value["$bytes"])
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def shown(case: Any) -> str:
    """A case as one line of JSON, for a report (cut to the report's 500 characters)."""
    return json.dumps(encode(case), ensure_ascii=False, default=repr)[:500]


def fixed_cases(surface: str, root: Path = FIXED_DIR) -> list[dict[str, Any]]:
    """The kept cases of `surface`: `root/SURFACE.json`, a JSON list of
    `{"why": "what it broke, and the fix", "case": CASE}` (CASE as `encode` writes it)."""
    path = root / f"{surface}.json"
    if not path.is_file():
        return []
    return [decode(entry["case"]) for entry in json.loads(path.read_text(encoding="utf-8"))]


def generate(
    strategy: st.SearchStrategy[T], cases: int, seed_value: int, check: Callable[[T], None]
) -> None:
    """Draw `cases` inputs from `strategy` (the same for the same seed) and `check` each.

    `check` records failures in a report and does not raise, so Hypothesis never shrinks or
    replays: every case runs once, which is what a run against a live server can afford."""

    if cases <= 0:
        return

    @settings(
        max_examples=cases,
        derandomize=False,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @seed(seed_value)
    @given(strategy)
    def each(case: T) -> None:
        check(case)

    with warnings.catch_warnings():
        # Hypothesis warns when the `random` module's state moves while it draws. The
        # strategies here never touch it, but a surface's client runs in a thread of its own
        # (aiortc draws ICE and SCTP numbers from `random`) while the next case is drawn.
        warnings.filterwarnings(
            "ignore",
            message="Do not use the `random` module inside strategies",
            category=HypothesisDeprecationWarning,
        )
        each()


def where(exc: BaseException) -> str:
    """The innermost frame of the project's own code an exception passed, as `path:line`
    (the library frame under it when the project's code called into one)."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [
        f
        for f in frames
        if f.filename.startswith(str(ROOT))
        and "/.venv/" not in f.filename
        and "/testkit/" not in f.filename
    ]
    frame = own[-1] if own else (frames[-1] if frames else None)
    if frame is None:
        return "?"
    name = frame.filename
    with contextlib.suppress(ValueError):
        name = str(Path(name).relative_to(ROOT))
    return f"{name}:{frame.lineno}"


def kind_of(exc: BaseException) -> str:
    """A failure's kind for an exception: its type and where (`KeyError at config/x.py:3`)."""
    return f"{type(exc).__name__} at {where(exc)}"


# --- a real server per surface run ----------------------------------------------------------

# /healthz must answer within this while cases run (a blocked event loop does not).
HEALTH_S = 2.0
# What in the server's log is a bug whatever the input: the guard's "unhandled error", and
# asyncio's reports of a task or callback that failed with nobody to tell.
_BAD_LOG = re.compile(
    r"unhandled error on|Task exception was never retrieved|Exception in callback"
    r"|Unhandled exception|Traceback \(most recent call last\)"
)
# aiohttp logs each request its own parser refuses (a 400 it sends before any route runs)
# with the parser's traceback, and a "100 Continue" it could not write to a client that had
# hung up: the answer working, and a client gone, before any of Annie's code ran.
_PARSER_REFUSAL = re.compile(
    r"^(aiohttp\.http_exceptions\.\w+|aiohttp\.client_exceptions\.ClientConnectionResetError):"
)
# Each log record starts with its time (`bot serve`'s logging format).
_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ", re.MULTILINE)
TOKEN = "fuzz-token"


class Served:
    """`python -m bot serve` (testkit.reliability.ServerProcess) for one surface's run.

    Before it starts, a completed turn is written to its store; `after` checks /healthz and
    the log once a case is done (a dead or stuck server is counted and started again);
    leaving stops it, runs `PRAGMA integrity_check` and looks for that turn."""

    def __init__(self, home: Path, report: SurfaceReport, env: dict[str, str] | None = None):
        from testkit.reliability import ServerProcess

        self.report = report
        # No embedding model: half of a start, and nothing a request surface reaches uses it.
        self.server = ServerProcess(
            home, embeddings=False, env={"ANNIE_SERVER__TOKEN": TOKEN, **(env or {})}
        )
        self.turn_id = ""
        self._log_at = 0

    @property
    def port(self) -> int:
        return self.server.port

    def __enter__(self) -> Served:
        self.turn_id = seed_turn(self.server.home)
        self.server.start()
        return self

    def after(self, kind: str, example: str) -> bool:
        """Check the server after one case (`kind` says where, `example` what was sent);
        False when it had to be started again."""
        problem = self._log_problem()
        if problem:
            self.report.fail(f"server log: {problem} ({kind})", example)
        try:
            with urllib.request.urlopen(f"{self.server.url}/healthz", timeout=HEALTH_S) as r:
                ok = bool(json.loads(r.read()).get("ok"))
        except (OSError, ValueError):
            ok = False
        if ok:
            return True
        self.report.fail(f"/healthz did not answer after {kind}", example)
        self.server.kill9()
        self.server.start()
        self._log_at = 0
        return False

    def _log_problem(self) -> str:
        try:
            with self.server.log_path.open("rb") as fh:
                fh.seek(self._log_at)
                raw = fh.read()
        except OSError:
            return ""
        # Only whole lines: the server may be writing the next one.
        whole = raw[: raw.rfind(b"\n") + 1]
        self._log_at += len(whole)
        return log_problem(whole.decode(errors="replace"))

    def __exit__(self, *exc: object) -> None:
        from testkit.reliability_store import integrity, missing_turns

        problem = self._log_problem()
        if problem:
            self.report.fail(f"server log: {problem} (at the end)", "-")
        self.server.stop(timeout=30)
        state = integrity(self.server.db_path)
        if state != "ok":
            self.report.fail("PRAGMA integrity_check failed", state)
        lost = missing_turns(self.server.db_path, [self.turn_id])
        if lost:
            self.report.fail("a completed turn was lost", ", ".join(lost))


def log_problem(text: str) -> str:
    """The first record in this stretch of the server's log that shows a bug, as one line
    (its first line and the exception it ends with), or ""."""
    starts = [m.start() for m in _RECORD.finditer(text)]
    bounds = zip([0, *starts], [*starts, len(text)], strict=True)
    for record in (text[a:b] for a, b in bounds):
        found = _BAD_LOG.search(record)
        if found is None:
            continue
        lines = record.splitlines()
        last = next((ln for ln in reversed(lines) if ln and not ln[0].isspace()), "")
        if "Error handling request" in record and _PARSER_REFUSAL.match(last):
            continue
        first = next((ln for ln in lines if found.group(0) in ln), lines[0] if lines else "")
        return f"{_RECORD.sub('', first)[:120]} / {last[:160]}"
    return ""


def seed_turn(home: Path) -> str:
    """Write one completed turn (the user's words and the answer) to the store at `home`, the
    way the runtime logs a turn; returns its turn id, for `missing_turns` at the end."""
    from config import load_settings
    from memory.store import Store

    settings = load_settings(environ={"ANNIE_HOME": str(home)})
    turn_id = "turn-fuzz-1"
    with Store.open(settings) as store:
        session = store.sessions.start({"front_end": "fuzz"})
        store.events.append(session, "user", "What time is it?", turn_id=turn_id, role="user")
        store.events.append(session, "assistant", "It is noon.", turn_id=turn_id, role="assistant")
        store.sessions.end(session)
    return turn_id


# --- cases in a child process that can be killed -------------------------------------------


def serve_cases(target: str, memory_mb: int) -> None:
    """The child's side of `Worker`: read pickled cases from stdin, run `target` on each,
    write each answer to what was stdout (stdout itself goes to stderr, so a print inside a
    case cannot corrupt the answers)."""
    # A case that runs away with memory fails with MemoryError instead of taking the machine.
    limit = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    module_name, _, func_name = target.partition(":")
    func = getattr(importlib.import_module(module_name), func_name)
    cases = sys.stdin.buffer
    while True:
        head = cases.read(4)
        if len(head) < 4:
            return
        case = pickle.loads(cases.read(struct.unpack(">I", head)[0]))
        try:
            answer = func(case)
        except BaseException as exc:  # the check itself failed: say how, and go on
            answer = [(kind_of(exc), f"{type(exc).__name__}: {exc}"[:300])]
        data = pickle.dumps(answer)
        answers.write(struct.pack(">I", len(data)) + data)
        answers.flush()


class Worker:
    """A child process that runs `target` ("module:function", taking a case and returning a
    list of `(kind, detail)` problems) case by case; one that takes longer than its cap is
    killed and the next case gets a fresh child."""

    def __init__(self, target: str, memory_mb: int = 2048, env: dict[str, str] | None = None):
        self.target = target
        self.memory_mb = memory_mb
        self.env = dict(env or {})
        self._proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        code = (
            f"from testkit.fuzz import serve_cases; serve_cases({self.target!r}, {self.memory_mb})"
        )
        env = {**os.environ, **self.env}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        self._proc = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        return self._proc

    def warm(self, case: Any, timeout: float = 120.0) -> None:
        """Run one case with a long cap: the child's imports and first parse are not timed."""
        self.run(case, timeout)

    def run(self, case: Any, timeout: float) -> list[tuple[str, str]] | None:
        """The problems `case` shows, or None when it did not finish within `timeout` s."""
        proc = self._proc or self._start()
        assert proc.stdin is not None and proc.stdout is not None
        data = pickle.dumps(case)
        try:
            proc.stdin.write(struct.pack(">I", len(data)) + data)
            proc.stdin.flush()
            head = self._read(proc, 4, time.monotonic() + timeout)
            if head is None:
                self.close()
                return None
            body = self._read(proc, struct.unpack(">I", head)[0], time.monotonic() + 60.0)
        except OSError:
            body = None
        if body is None:
            code = proc.poll()
            self.close()
            return [("the checking process died", f"exit code {code}")]
        return list(pickle.loads(body))

    @staticmethod
    def _read(proc: subprocess.Popen[bytes], size: int, deadline: float) -> bytes | None:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        out = b""
        while len(out) < size:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, size - len(out))
            if not chunk:
                return None
            out += chunk
        return out

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait(timeout=10)
            for pipe in (self._proc.stdin, self._proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            self._proc = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(
        self, typ: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


@contextlib.contextmanager
def environ(values: dict[str, str]) -> Iterator[None]:
    """Set these environment variables (and drop every other ANNIE_* one) for a while."""
    saved = dict(os.environ)
    for name in [n for n in os.environ if n.startswith("ANNIE_")]:
        del os.environ[name]
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def python_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a real `python -m bot` process over `home`: this one's, with the
    checkout on the path, no ANNIE_* variable but the home, and no model hub."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNIE_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update({"ANNIE_HOME": str(home), "HF_HUB_OFFLINE": "1", **(extra or {})})
    return env


PYTHON = sys.executable
