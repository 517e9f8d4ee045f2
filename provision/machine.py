"""What the planner looks at on this machine: cards, CUDA compiler, C compiler, memory, disk.

Every probe is read-only and quick: `nvidia-smi` twice (the query for name, memory, driver and
compute capability, and its banner for the driver's CUDA version), `nvcc --version` (on PATH,
where CUDACXX or CUDA_HOME point, or in the folders NVIDIA's packages use, which are off PATH),
the C and C++ compilers on PATH, the interpreter and glibc a wheel must suit, /proc/meminfo, the
free space under ANNIE_HOME, the virtual environment's site-packages, and the local folders
pip's find-links name. What a probe cannot learn is None, never a guess.
"""

from __future__ import annotations

import configparser
import contextlib
import glob
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from provision.wheels import Target

QUERY = "name,memory.total,memory.free,driver_version,compute_cap"
_CUDA = re.compile(r"CUDA Version:\s*(\d+)\.(\d+)")
_NVCC = re.compile(r"release (\d+)\.(\d+)")
_GLIBC = re.compile(r"glibc (\d+)\.(\d+)")
# llama.cpp is C and C++: a source build needs both compilers.
COMPILERS = (("cc", "gcc", "clang"), ("c++", "g++", "clang++"))


@dataclass(frozen=True)
class Card:
    name: str
    total_mib: int
    free_mib: int
    driver: str
    capability: tuple[int, int] | None = None


@dataclass(frozen=True)
class Gpus:
    """The cards `nvidia-smi` reports; `status` says why there are none."""

    cards: tuple[Card, ...] = ()
    cuda: tuple[int, int] | None = None
    status: str = "nvidia-smi not found"

    @property
    def capability(self) -> tuple[int, int] | None:
        """The lowest compute capability among the cards (a build must suit every one)."""
        known = [c.capability for c in self.cards if c.capability is not None]
        return min(known) if known else None


@dataclass(frozen=True)
class Nvcc:
    path: str | None = None
    version: tuple[int, int] | None = None
    on_path: bool = True


def this_target() -> Target:
    """The interpreter running this code and the machine's glibc, as a wheel must suit them."""
    libc = ""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    match = _GLIBC.match(libc)
    glibc = (int(match.group(1)), int(match.group(2))) if match else None
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower())
    return Target(
        python=(sys.version_info.major, sys.version_info.minor),
        glibc=glibc,
        arch=arch or platform.machine(),
        free_threaded=bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    )


@dataclass(frozen=True)
class Machine:
    """Everything the plan depends on; tests build one directly to plan for any machine."""

    gpus: Gpus = field(default_factory=Gpus)
    nvcc: Nvcc = field(default_factory=Nvcc)
    compiler: str | None = None
    mem_available: int | None = None
    disk_free: int | None = None
    disk_path: str = ""
    target: Target = field(default_factory=this_target)
    installed: dict[str, str] = field(default_factory=dict)
    local_wheels: tuple[str, ...] = ()


def _run(args: list[str], timeout: float = 10.0) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _card(parts: list[str]) -> Card | None:
    try:
        cap = tuple(int(p) for p in parts[4].split(".")) if len(parts) > 4 else ()
        capability = (cap[0], cap[1]) if len(cap) == 2 else None
        return Card(parts[0], int(float(parts[1])), int(float(parts[2])), parts[3], capability)
    except (ValueError, IndexError):  # "[N/A]" on some boards: that card cannot be planned for
        return None


def probe_gpus() -> Gpus:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return Gpus()
    done = _run([exe, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"])
    if done is not None and done.returncode != 0:  # drivers before compute_cap was queryable
        old = QUERY.removesuffix(",compute_cap")
        done = _run([exe, f"--query-gpu={old}", "--format=csv,noheader,nounits"])
    if done is None or done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines() if done else ["timed out"]
        return Gpus(status=f"nvidia-smi failed: {why[0] if why else 'no output'}")
    cards = [
        card
        for line in done.stdout.splitlines()
        if len(parts := [p.strip() for p in line.split(",")]) >= 4
        and (card := _card(parts)) is not None
    ]
    banner = _run([exe])
    match = _CUDA.search(banner.stdout) if banner is not None else None
    cuda = (int(match.group(1)), int(match.group(2))) if match else None
    status = "ok" if cards else "nvidia-smi reported no card"
    return Gpus(tuple(cards), cuda, status)


def _nvcc_version(path: str) -> tuple[int, int] | None:
    done = _run([path, "--version"])
    match = _NVCC.search(done.stdout) if done is not None else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def probe_nvcc(dirs: list[str] | None = None) -> Nvcc:
    """`nvcc` as CMake would find it (CUDACXX, CUDA_HOME, PATH), else in `dirs`.

    NVIDIA's packages install it in /usr/local/cuda/bin or /usr/local/cuda-X.Y/bin, which are
    not on PATH until the user adds them; a compiler found there is reported `on_path=False`,
    and the build is pointed at it through CUDACXX. Of several versioned folders the newest
    version wins."""
    candidates = [os.environ.get("CUDACXX", "")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(str(Path(os.environ[var]) / "bin" / "nvcc"))
    candidates.append(shutil.which("nvcc") or "")
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return Nvcc(path, _nvcc_version(path))
    found: list[tuple[tuple[int, int], str]] = []
    for pattern in dirs or []:
        for folder in sorted(glob.glob(os.path.expanduser(pattern))):
            path = os.path.join(folder, "nvcc")
            if os.access(path, os.X_OK):
                found.append((_nvcc_version(path) or (0, 0), path))
    if not found:
        return Nvcc()
    version, path = max(found)
    return Nvcc(path, version if version != (0, 0) else None, on_path=False)


def probe_compiler() -> str | None:
    """The C++ compiler a llama.cpp build would use, if a C compiler is there too."""
    c = next((p for name in COMPILERS[0] if (p := shutil.which(name))), None)
    cxx = next((p for name in COMPILERS[1] if (p := shutil.which(name))), None)
    return cxx if c and cxx else None


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
    """Versions of torch, llama-cpp-python and NVIDIA's CUDA library packages in the venv,
    from their dist-info folder names (normalized project names as keys).

    Read from the file system so planning never imports them (torch takes seconds). A CUDA
    llama-cpp-python is told by its `libggml-cuda` library, which the version cannot say.
    """
    out: dict[str, str] = {}
    for site in sorted(venv.glob("lib/python3*/site-packages")):
        for dist in site.glob("*.dist-info"):
            name, _, version = dist.name[: -len(".dist-info")].partition("-")
            name = name.lower().replace("_", "-")
            if name == "torch" or name == "cuda-toolkit" or name.startswith("nvidia-"):
                out[name] = version
            elif name == "llama-cpp-python":
                cuda = any((site / "llama_cpp").glob("**/libggml-cuda*"))
                out["llama-cpp-python"] = version + ("+cuda" if cuda else "+cpu")
    return out


def pip_find_links(environ: dict[str, str] | None = None) -> list[Path]:
    """The local folders pip's find-links name (PIP_FIND_LINKS and pip's config files).

    pip prefers a matching wheel found there to the index, so the plan names it rather than a
    download. PIP_CONFIG_FILE set to /dev/null means no config files, as it does for pip."""
    env = dict(os.environ if environ is None else environ)
    values = [env.get("PIP_FIND_LINKS", "")]
    chosen = env.get("PIP_CONFIG_FILE")
    if chosen != os.devnull:
        home = Path(env.get("HOME", str(Path.home())))
        xdg = env.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
        files = [Path("/etc/pip.conf"), *(Path(d) / "pip" / "pip.conf" for d in xdg)]
        files += [home / ".pip" / "pip.conf", home / ".config" / "pip" / "pip.conf"]
        if env.get("VIRTUAL_ENV"):
            files.append(Path(env["VIRTUAL_ENV"]) / "pip.conf")
        if chosen:
            files.append(Path(chosen))
        for path in files:
            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read(path)
            except (configparser.Error, OSError, UnicodeDecodeError):
                continue
            for section in ("global", "install"):
                values.append(parser.get(section, "find-links", fallback=""))
    folders = []
    for value in values:
        for item in value.split():
            path = Path(item.removeprefix("file://"))
            if "://" not in item.removeprefix("file://") and path.is_dir():
                folders.append(path)
    return list(dict.fromkeys(folders))


def local_wheels(folders: list[Path]) -> tuple[str, ...]:
    return tuple(str(p) for folder in folders for p in sorted(folder.glob("*.whl")))


def probe(venv: Path, home: Path, nvcc_dirs: list[str] | None = None) -> Machine:
    free, where = disk_free(home)
    return Machine(
        gpus=probe_gpus(),
        nvcc=probe_nvcc(nvcc_dirs),
        compiler=probe_compiler(),
        mem_available=mem_available(),
        disk_free=free,
        disk_path=where,
        installed=installed(venv),
        local_wheels=local_wheels(pip_find_links()),
    )
