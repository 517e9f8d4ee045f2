"""The CUDA libraries the chosen builds open at run time, as NVIDIA's pip wheels, and their size.

llama-cpp-python's CUDA wheels leave libcudart and libcublas out (its wheel workflow passes
`--exclude libcudart.so.12 ... --exclude libcublasLt.so.13` to auditwheel), and CTranslate2's
PyPI wheels need libcublas.so.12 (4.8.5's libctranslate2 names libcublas.so.12 and libcuda.so.1
and nothing else of CUDA's). So a CUDA set-up installs, for a cuXY llama-cpp-python wheel,
`cuda-toolkit[cudart,cublas]==X.Y.*`: NVIDIA's meta package, whose pins say which
nvidia-cuda-runtime and nvidia-cublas (and, for CUDA 13, nvidia-cuda-nvrtc) belong to CUDA X.Y.
Where that leaves CTranslate2 without cuBLAS 12 (a CUDA 13 wheel, or a CUDA 13 toolkit), it
adds `nvidia-cublas-cu12==12.9.*`, which a CUDA 13 driver runs. PyTorch is not the carrier: it
is the CPU build. `models/cuda_libs.py` opens these libraries before the engines load.

Sizes are read from the package index's JSON pages (PyPI's give them); the meta package's own
small wheel is read for its pins. Anything unreadable is reported as unknown.
"""

from __future__ import annotations

import re
from typing import Any

from provision.indexes import Index, variant_cuda
from provision.machine import Machine
from provision.settings import Layered
from provision.wheels import Target, installable, is_prerelease, normalize, parse, version_key

CTRANSLATE2_CUBLAS = "nvidia-cublas-cu12==12.9.*"
_REQ = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?\s*==\s*([0-9][0-9.]*?)(\.\*)?\s*$"
)


def packages(m: Machine, device: str, llama: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The pip requirements that bring the CUDA libraries, and who needs them."""
    if device != "cuda":
        return [], []
    wanted: list[str] = []
    users: list[str] = []
    cublas12 = False
    if llama["route"] == "cuda-wheel":
        major, minor = variant_cuda(str(llama["variant"]))
        wanted.append(f"cuda-toolkit[cudart,cublas]=={major}.{minor}.*")
        users.append(f"llama.cpp's {llama['variant']} build (libcudart, libcublas)")
        cublas12 = major == 12
    elif llama["route"] == "cuda-source":
        cublas12 = bool(m.nvcc.version and m.nvcc.version[0] == 12)  # the toolkit's own
    if cublas12:
        users.append("CTranslate2 (libcublas.so.12, the same cuBLAS)")
    else:
        wanted.append(CTRANSLATE2_CUBLAS)
        users.append("CTranslate2 (libcublas.so.12)")
    return wanted, users


def _split(requirement: str) -> tuple[str, list[str], str, bool] | None:
    match = _REQ.match(requirement)
    if match is None:
        return None
    extras = [e.strip() for e in (match.group(2) or "").split(",") if e.strip()]
    return match.group(1), extras, match.group(3), bool(match.group(4))


def _wanted(marker: str, extras: list[str]) -> bool:
    """Whether a Requires-Dist marker applies to one of `extras` on Linux."""
    quoted = [f"extra == '{e}'" for e in extras] + [f'extra == "{e}"' for e in extras]
    if not any(q in marker for q in quoted):
        return False
    return "sys_platform" not in marker or "linux" in marker


def resolve(
    requirement: str, pypi: str, idx: Index, t: Target, nested: bool = False
) -> list[dict[str, Any]]:
    """The files pip would fetch for `requirement` (`name[extras]==X.Y.*` or `==X.Y.Z`), each
    with its size where the index states it; the meta package's pins are followed one level."""
    parts = _split(requirement)
    if parts is None:
        return [{"package": requirement, "version": None, "file": None, "bytes": None}]
    name, extras, pin, series = parts
    listing = idx.listing(f"{pypi.rstrip('/')}/{normalize(name)}/") or []
    key = version_key(pin)
    fits = [
        (w, x)
        for x in listing
        if (w := parse(x.name)) is not None
        and w.name == normalize(name)
        and not is_prerelease(w.version)
        and installable(w, t)
        and (version_key(w.version)[: len(key)] == key if series else w.version == pin)
    ]
    wheel, listed = max(fits, key=lambda f: version_key(f[0].version)) if fits else (None, None)
    entry = {
        "package": name,
        "version": wheel.version if wheel else None,
        "file": wheel.filename if wheel else None,
        "bytes": listed.size if listed else None,
    }
    out = [entry]
    if extras and listed is not None and not nested:
        for line in idx.requires(listed.url) or []:
            spec, _, marker = line.partition(";")
            if _wanted(marker, extras):
                out += resolve(spec.strip(), pypi, idx, t, nested=True)
    return out


def runtime_route(
    m: Machine, s: Layered, device: str, llama: dict[str, Any], idx: Index
) -> dict[str, Any]:
    """The CUDA-library step of the plan: requirements, who needs them, files and bytes."""
    wanted, users = packages(m, device, llama)
    pypi = str(s.get("gpu.pypi_index"))
    names = [normalize(parts[0]) for r in wanted if (parts := _split(r)) is not None]
    files: list[dict[str, Any]] = []
    if names and all(n in m.installed for n in names):  # installed: nothing to size
        kept = [{"package": n, "version": m.installed[n], "file": None, "bytes": 0} for n in names]
        return {"packages": wanted, "for": users, "files": kept, "bytes": 0, "names": names}
    for requirement in wanted:
        for entry in resolve(requirement, pypi, idx, m.target):
            if all(entry["package"] != f["package"] for f in files):
                files.append(entry)
    sizes = [f["bytes"] for f in files]
    total = sum(sizes) if sizes and None not in sizes else None
    return {"packages": wanted, "for": users, "files": files, "bytes": total, "names": names}
