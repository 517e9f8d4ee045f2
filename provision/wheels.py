"""Wheel file names, and whether this machine can install one (PEP 427 names, PEP 425 tags).

A wheel's name says what it runs on: `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`,
each of the last three a dot-joined set of tags. pip installs a wheel when one combination of
its tags is among the interpreter's supported ones; `installable` answers the same question for
the tags that occur on Linux: `py3-none` (llama-cpp-python's wheels since 0.3.20), `cpXY-cpXY`
(PyTorch's, and llama-cpp-python's before), `cpXY-abi3` (any CPython from XY on), and the
platforms `linux_<arch>` (pip takes it on any Linux of that architecture), `manylinux_X_Y_<arch>`
with the legacy aliases (manylinux1 is glibc 2.5, manylinux2010 2.12, manylinux2014 2.17), which
need the machine's glibc to be at least X.Y, and `any`. Everything else (Windows, macOS,
musllinux) is another machine's wheel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_(\w+)$")
_PRE = re.compile(r"(a|b|rc|dev|alpha|beta|c|pre|preview)\d*$")


@dataclass(frozen=True)
class Target:
    """The interpreter and C library a wheel must suit. `glibc` is None where unknown (musl)."""

    python: tuple[int, int]
    glibc: tuple[int, int] | None
    arch: str = "x86_64"
    free_threaded: bool = False

    def describe(self) -> str:
        glibc = f"glibc {self.glibc[0]}.{self.glibc[1]}" if self.glibc else "no known glibc"
        tag = "t" if self.free_threaded else ""
        return f"CPython {self.python[0]}.{self.python[1]}{tag}, {glibc}, {self.arch}"


@dataclass(frozen=True)
class Wheel:
    """One wheel file name, split into its parts (the name normalized, the version public)."""

    filename: str
    name: str
    version: str
    local: str | None
    pythons: tuple[str, ...]
    abis: tuple[str, ...]
    platforms: tuple[str, ...]


def normalize(name: str) -> str:
    """A project name as PEP 503 compares them: lower case, runs of -_. as one '-'."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse(filename: str) -> Wheel | None:
    """The parts of a wheel's file name, or None for anything that is not a wheel."""
    if not filename.endswith(".whl"):
        return None
    parts = filename[: -len(".whl")].split("-")
    if len(parts) not in (5, 6):
        return None
    name, version = parts[0], parts[1]
    python, abi, platform = parts[-3:]
    public, _, local = version.partition("+")
    return Wheel(
        filename=filename,
        name=normalize(name),
        version=public,
        local=local or None,
        pythons=tuple(python.split(".")),
        abis=tuple(abi.split(".")),
        platforms=tuple(platform.split(".")),
    )


def version_key(version: str) -> tuple[int, ...]:
    """A sort key for release versions: the numbers, so 0.3.36 > 0.3.4 and 2.13.0 > 2.9.1."""
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+")[0].split("rc")[0]))


def is_prerelease(version: str) -> bool:
    return any(_PRE.search(part) for part in version.lower().split("."))


def _python_ok(python: str, abi: str, t: Target) -> bool:
    major, minor = t.python
    if python.startswith("cp") and python[2:].isdigit():
        tag_major, tag_minor = int(python[2]), int(python[3:] or 0)
        if tag_major != major:
            return False
        if abi == "abi3":
            return not t.free_threaded and tag_minor <= minor
        own = f"cp{major}{minor}" + ("t" if t.free_threaded else "")
        return tag_minor == minor and abi in (own, "none")
    if python.startswith("py") and abi == "none":
        digits = python[2:]
        if digits == str(major):
            return True
        return digits.startswith(str(major)) and digits[1:].isdigit() and int(digits[1:]) <= minor
    return False


def platform_ok(platform: str, t: Target) -> bool:
    if platform == "any":
        return True
    if platform == f"linux_{t.arch}":
        return True
    match = _MANYLINUX.match(platform)
    if match:
        need, arch = (int(match.group(1)), int(match.group(2))), match.group(3)
    else:
        legacy, _, arch = platform.partition("_")
        if legacy not in _LEGACY:
            return False
        need = _LEGACY[legacy]
    return arch == t.arch and t.glibc is not None and need <= t.glibc


def installable(wheel: Wheel, t: Target) -> bool:
    """Whether pip on `t` would take this wheel: some python-abi pair and some platform fit."""
    pairs = any(_python_ok(p, a, t) for p in wheel.pythons for a in wheel.abis)
    return pairs and any(platform_ok(p, t) for p in wheel.platforms)


def why_not(wheel: Wheel, t: Target) -> str:
    """Why `wheel` does not suit `t`, in a few words (for the plan's notes)."""
    if not any(_python_ok(p, a, t) for p in wheel.pythons for a in wheel.abis):
        return f"it is for {'.'.join(wheel.pythons)}-{'.'.join(wheel.abis)}"
    needs = [m for m in map(_MANYLINUX.match, wheel.platforms) if m and m.group(3) == t.arch]
    if needs and t.glibc is not None:
        low = min((int(m.group(1)), int(m.group(2))) for m in needs)
        if low > t.glibc:
            return (
                f"it needs glibc {low[0]}.{low[1]} and this machine has {t.glibc[0]}.{t.glibc[1]}"
            )
    return f"it is for {'.'.join(wheel.platforms)}"


def choose(
    names: list[str],
    project: str,
    t: Target,
    *,
    exact: str | None = None,
    minimum: str | None = None,
    local: str | None = None,
) -> Wheel | None:
    """The newest wheel of `project` in `names` that `t` can install, at `exact` version (or at
    least `minimum`), with local label `local` where given. Pre-releases are never chosen."""
    want = normalize(project)
    best: Wheel | None = None
    for wheel in filter(None, map(parse, names)):
        if wheel.name != want or is_prerelease(wheel.version) or not installable(wheel, t):
            continue
        if exact is not None and version_key(wheel.version) != version_key(exact):
            continue
        if minimum is not None and version_key(wheel.version) < version_key(minimum):
            continue
        if local is not None and wheel.local != local:
            continue
        if best is None or version_key(wheel.version) > version_key(best.version):
            best = wheel
    return best
