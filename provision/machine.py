"""What the planner looks at on this machine: the cards, the CUDA compiler, memory, disk, venv.

Every probe is read-only and quick: `nvidia-smi` twice (the query for name, memory and driver,
and its banner for the driver's CUDA version), `nvcc --version`, /proc/meminfo, the free space
under ANNIE_HOME, the virtual environment's site-packages, and an HTTP GET of a wheel index
with a short timeout. What a probe cannot learn is None, never a guess.
"""

from __future__ import annotations

import html.parser
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

QUERY = "name,memory.total,memory.free,driver_version"
_CUDA = re.compile(r"CUDA Version:\s*(\d+)\.(\d+)")
_NVCC = re.compile(r"release (\d+)\.(\d+)")


@dataclass(frozen=True)
class Card:
    name: str
    total_mib: int
    free_mib: int
    driver: str


@dataclass(frozen=True)
class Gpus:
    """The cards `nvidia-smi` reports; `status` says why there are none."""

    cards: tuple[Card, ...] = ()
    cuda: tuple[int, int] | None = None
    status: str = "nvidia-smi not found"


@dataclass(frozen=True)
class Nvcc:
    path: str | None = None
    version: tuple[int, int] | None = None


@dataclass(frozen=True)
class Machine:
    """Everything the plan depends on; tests build one directly to plan for any machine."""

    gpus: Gpus = field(default_factory=Gpus)
    nvcc: Nvcc = field(default_factory=Nvcc)
    mem_available: int | None = None
    disk_free: int | None = None
    disk_path: str = ""
    python_tag: str = f"cp{sys.version_info.major}{sys.version_info.minor}"
    installed: dict[str, str] = field(default_factory=dict)


def _run(args: list[str], timeout: float = 10.0) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def probe_gpus() -> Gpus:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return Gpus()
    done = _run([exe, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"])
    if done is None or done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines() if done else ["timed out"]
        return Gpus(status=f"nvidia-smi failed: {why[0] if why else 'no output'}")
    cards: list[Card] = []
    for line in done.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4:
            continue
        try:
            cards.append(Card(parts[0], int(float(parts[1])), int(float(parts[2])), parts[3]))
        except ValueError:  # "[N/A]" on some boards: that card cannot be planned for
            continue
    banner = _run([exe])
    match = _CUDA.search(banner.stdout) if banner is not None else None
    cuda = (int(match.group(1)), int(match.group(2))) if match else None
    status = "ok" if cards else "nvidia-smi reported no card"
    return Gpus(tuple(cards), cuda, status)


def probe_nvcc() -> Nvcc:
    """`nvcc` on PATH, or where CUDACXX or CUDA_HOME point (as CMake looks for it)."""
    candidates = [os.environ.get("CUDACXX", "")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(str(Path(os.environ[var]) / "bin" / "nvcc"))
    candidates.append(shutil.which("nvcc") or "")
    for path in candidates:
        if path and os.access(path, os.X_OK):
            done = _run([path, "--version"])
            match = _NVCC.search(done.stdout) if done is not None else None
            version = (int(match.group(1)), int(match.group(2))) if match else None
            return Nvcc(path, version)
    return Nvcc()


def mem_available(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def disk_free(path: Path) -> tuple[int | None, str]:
    """Free bytes on the filesystem that will hold `path` (its nearest existing parent)."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return shutil.disk_usage(probe).free, str(path)
    except OSError:
        return None, str(path)


def installed(venv: Path) -> dict[str, str]:
    """Versions of torch and llama-cpp-python in the venv, from their dist-info folder names.

    Read from the file system so planning never imports them (torch takes seconds). A CUDA
    llama-cpp-python is told by its `libggml-cuda` library, which the version cannot say.
    """
    out: dict[str, str] = {}
    for site in sorted(venv.glob("lib/python3*/site-packages")):
        for dist in site.glob("*.dist-info"):
            name, _, version = dist.name[: -len(".dist-info")].partition("-")
            if name == "torch":
                out["torch"] = version
            elif name.lower() in ("llama_cpp_python", "llama-cpp-python"):
                cuda = any((site / "llama_cpp").glob("**/libggml-cuda*"))
                out["llama-cpp-python"] = version + ("+cuda" if cuda else "+cpu")
    return out


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            self.names.append(href.split("#")[0].rstrip("/").rsplit("/", 1)[-1])


def wheel_index(url: str, timeout: float) -> list[str] | None:
    """The file names a PEP 503 project page lists, or None when it cannot be reached."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            page = resp.read(4_000_000).decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError):
        return None
    parser = _Links()
    parser.feed(page)
    return [urllib.parse.unquote(n) for n in parser.names]


def probe(venv: Path, home: Path) -> Machine:
    free, where = disk_free(home)
    return Machine(
        gpus=probe_gpus(),
        nvcc=probe_nvcc(),
        mem_available=mem_available(),
        disk_free=free,
        disk_path=where,
        installed=installed(venv),
    )
