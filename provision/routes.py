"""How llama-cpp-python and PyTorch get onto this machine, read from what the indexes publish.

llama-cpp-python on a card: built from source where `nvcc` and a C/C++ compiler exist and nvcc
is no newer than the driver; otherwise the prebuilt wheel from the best CUDA variant of its
index (`indexes.cuda_variants`: newest the driver runs first) whose page lists a wheel of at
least `llama_wheel_min_version` that this Python and glibc can install; otherwise a CPU build,
with a sentence saying why and what to install. Without a compiler a CPU build cannot happen,
and the plan says so before anything starts.

PyTorch runs only the embedder, which runs on the CPU, so it gets the CPU build: a matching
wheel in a folder pip's find-links name, else PyTorch's CPU index where that answers, else PyPI,
where on Linux x86_64 `torch==X` is the CUDA build; the plan then says how big it is before
anything downloads. `gpu.torch_cuda = true` asks for the newest CUDA build the driver runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provision.indexes import Index, Listed, cuda_variants
from provision.indexes import size_text as _gb
from provision.machine import Machine
from provision.settings import Layered
from provision.wheels import Target, Wheel, choose, normalize, parse, version_key, why_not

CPU_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
CUDA_CMAKE_ARGS = "-DGGML_CUDA=on"
GET_DRIVER = (
    "To use an NVIDIA GPU: install the NVIDIA driver (nvidia-smi must work), then run "
    "./start.sh again; the CUDA toolkit (nvcc) is needed only to build llama-cpp-python "
    "from source."
)
GET_COMPILER = (
    "install a C and C++ compiler and cmake (Debian/Ubuntu: sudo apt-get install "
    "build-essential cmake; Fedora: sudo dnf install gcc-c++ cmake), then ./start.sh again"
)
# llama-cpp-python's CUDA 12 wheels carry code for compute capability 6.0 and newer.
LLAMA_MIN_CAPABILITY = (6, 0)
# What `pip install torch==2.13.0` from PyPI pulls besides the torch wheel on Linux x86_64
# (CPython 3.11): the CUDA 13 libraries, cuDNN, NCCL, cuSPARSELt, NVSHMEM, Triton and CUDA
# bindings its metadata requires, summed from PyPI's listings on 2026-12-02.
PYPI_TORCH_CUDA_DEPS = 2_203_644_265


@dataclass(frozen=True)
class Found:
    """A variant whose page lists a wheel this machine can install."""

    variant: str
    why: str
    index: str
    wheel: Wheel
    listed: Listed


def _missing(
    listing: list[Listed], project: str, t: Target, want: str, exact: bool, local: str | None
) -> str:
    """Why a page that exists offers nothing installable: what it has, and why that fails."""
    wheels = [w for w in (parse(x.name) for x in listing) if w and w.name == normalize(project)]
    if local is not None:
        wheels = [w for w in wheels if w.local == local]
    if not wheels:
        return f"no {project} wheels"
    newest = max(wheels, key=lambda w: version_key(w.version))
    if exact:
        fit = [w for w in wheels if version_key(w.version) == version_key(want)]
        if not fit:
            return f"no {project} {want} (newest {newest.version})"
    else:
        fit = [w for w in wheels if version_key(w.version) >= version_key(want)]
        if not fit:
            return f"{project} up to {newest.version}, none at {want} or newer"
    linux = [w for w in fit if any(t.arch in p for p in w.platforms)] or fit
    return f"{project} {linux[0].version}, but {why_not(linux[0], t)}"


def find_variant(
    idx: Index,
    base: str,
    project: str,
    candidates: list[tuple[str, str]],
    t: Target,
    *,
    exact: str | None = None,
    minimum: str | None = None,
    local_is_variant: bool = False,
) -> tuple[Found | None, list[str]]:
    """Ask each candidate variant's page in turn; the first with an installable wheel wins.

    Returns the find and the reasons the earlier candidates were passed over, pages with the
    same reason said once. An unreachable index ends the search at once (its other pages are on
    the same host)."""
    passed: list[tuple[str, str]] = []
    for variant, why in candidates:
        page = f"{base.rstrip('/')}/{variant}/{project}/"
        listing = idx.listing(page)
        if listing is None:
            return None, [*_said(passed), f"{base} could not be reached"]
        if not listing:
            continue  # the index publishes no such variant
        local = variant if local_is_variant else None
        names = [x.name for x in listing]
        wheel = choose(names, project, t, exact=exact, minimum=minimum, local=local)
        if wheel is None:
            want = exact or minimum or "0"
            why_none = _missing(listing, project, t, want, exact is not None, local)
            passed.append((variant, why_none))
            continue
        listed = next(x for x in listing if x.name == wheel.filename)
        return Found(variant, why, f"{base.rstrip('/')}/{variant}", wheel, listed), _said(passed)
    return None, _said(passed)


def _said(passed: list[tuple[str, str]]) -> list[str]:
    """Reasons by page, consecutive pages with the same reason said once."""
    groups: list[tuple[list[str], str]] = []
    for variant, reason in passed:
        if groups and groups[-1][1] == reason:
            groups[-1][0].append(variant)
        else:
            groups.append(([variant], reason))
    out = []
    for variants, reason in groups:
        if len(variants) == 1:
            out.append(f"the {variants[0]} page lists {reason}")
        else:
            out.append(f"the {', '.join(variants[:-1])} and {variants[-1]} pages list {reason}")
    return out


def _size(idx: Index, listed: Listed) -> int | None:
    return listed.size if listed.size is not None else idx.size(listed.url)


def llama_route(m: Machine, s: Layered, device: str, idx: Index) -> dict[str, Any]:
    gpu = s.get("gpu")
    out: dict[str, Any] = {"index": None, "variant": None, "cmake_args": "", "pip_args": []}
    out.update(cudacxx="", wheel=None, bytes=None, blocked="", spec="llama-cpp-python")
    out["installed"] = m.installed.get("llama-cpp-python")
    notes: list[str] = []
    out["notes"] = notes
    cuda, nvcc = m.gpus.cuda, m.nvcc
    if device == "cuda":
        too_new = bool(nvcc.version and cuda and nvcc.version > cuda)
        if nvcc.path and m.compiler and not too_new:
            return _source(out, m, s, idx)
        if nvcc.path and not m.compiler:
            notes.append(f"nvcc is at {nvcc.path} but there is no C/C++ compiler to build with.")
        if nvcc.path and too_new and nvcc.version and cuda:
            notes.append(
                f"nvcc is CUDA {nvcc.version[0]}.{nvcc.version[1]} but the driver supports "
                f"CUDA {cuda[0]}.{cuda[1]}: a build with it would not load, so a prebuilt "
                "wheel is looked for; update the driver to build from source."
            )
        why = _llama_wheel(out, m, gpu, idx)
        if not why:
            return out
        if nvcc.path and m.compiler:
            notes.append(f"No usable prebuilt wheel ({why}): building with nvcc anyway.")
            return _source(out, m, s, idx)
        nvcc_state = "No nvcc" if not nvcc.path else "No way to build with nvcc here"
        notes.append(
            f"{nvcc_state} and no usable prebuilt wheel ({why}), so llama-cpp-python would be "
            "built for the CPU. To put the LLM on the card, update the driver or install the "
            "CUDA toolkit (nvcc), then `.venv/bin/pip uninstall -y llama-cpp-python` and run "
            "./start.sh again."
        )
    elif not m.gpus.cards:
        notes.append(GET_DRIVER)
    out.update(route="cpu", cmake_args=CPU_CMAKE_ARGS)
    out["bytes"], sdist = (None, "") if out["installed"] else _sdist(idx, s)
    out["label"] = f"CPU build from source{sdist} (about 5 minutes on 2 cores)"
    if not m.compiler:
        out["blocked"] = (
            f"llama-cpp-python must be compiled here and there is no compiler: {GET_COMPILER}"
        )
        notes.append(f"No C/C++ compiler on PATH: {GET_COMPILER}.")
    return out


def _source(out: dict[str, Any], m: Machine, s: Layered, idx: Index) -> dict[str, Any]:
    nvcc = m.nvcc
    out.update(route="cuda-source", cmake_args=CUDA_CMAKE_ARGS)
    out["cudacxx"] = "" if nvcc.on_path else str(nvcc.path)
    where = f"{nvcc.path}" + ("" if nvcc.on_path else ", off PATH: passed as CUDACXX")
    out["bytes"], sdist = (None, "") if out["installed"] else _sdist(idx, s)
    out["label"] = f"CUDA build from source{sdist} with {where} (several minutes)"
    return out


def _sdist(idx: Index, s: Layered) -> tuple[int | None, str]:
    """The size of the newest llama-cpp-python source archive on PyPI, which a build fetches."""
    page = idx.listing(f"{str(s.get('gpu.pypi_index')).rstrip('/')}/llama-cpp-python/") or []
    archives = [x for x in page if x.name.endswith(".tar.gz") and "-" in x.name]
    if not archives:
        return None, ""
    newest = max(archives, key=lambda x: version_key(x.name.rsplit("-", 1)[1][: -len(".tar.gz")]))
    size = _size(idx, newest)
    return size, f" of {newest.name} ({_gb(size)})"


def _llama_wheel(out: dict[str, Any], m: Machine, gpu: dict[str, Any], idx: Index) -> str:
    """Fill `out` with the prebuilt CUDA wheel; '' when found, else why there is none."""
    cuda, cap = m.gpus.cuda, m.gpus.capability
    if cuda is None:
        return "the driver's CUDA version is unknown"
    if cap is not None and cap < LLAMA_MIN_CAPABILITY:
        return f"the card's compute capability {cap[0]}.{cap[1]} is below the wheels' 6.0"
    minimum = str(gpu["llama_wheel_min_version"])
    candidates = cuda_variants(cuda, cap, list(gpu["llama_wheel_variants"]))
    found, passed = find_variant(
        idx,
        str(gpu["llama_wheel_index"]),
        "llama-cpp-python",
        candidates,
        m.target,
        minimum=minimum,
    )
    if found is None:
        nothing = f"no variant page for CUDA {cuda[0]}.{cuda[1]} or older was published"
        if any(" or newer" in reason for reason in passed):
            passed.append("gpu.llama_wheel_min_version accepts an older release")
        return "; ".join(passed) or nothing
    version = found.wheel.version
    out.update(route="cuda-wheel", spec=f"llama-cpp-python=={version}", index=found.index)
    size = None if out["installed"] else _size(idx, found.listed)  # sizes only for downloads
    out.update(variant=found.variant, wheel=found.wheel.filename, bytes=size)
    out["pip_args"] = ["--only-binary=llama-cpp-python", "--extra-index-url", found.index]
    out["label"] = (
        f"prebuilt CUDA wheel {version} ({found.variant}), {found.wheel.filename}, "
        f"{_gb(out['bytes'])}, from {found.index}"
    )
    if "minor-version" in found.why:
        out["notes"].append(
            f"The newest llama-cpp-python CUDA build for this driver is {found.variant}, newer "
            f"than the driver's CUDA {cuda[0]}.{cuda[1]}: it {found.why.split(': ')[1]}; "
            "update the driver if the model does not load on the card."
        )
    return ""


def _local_torch(m: Machine, version: str) -> Path | None:
    names = {Path(p).name: Path(p) for p in m.local_wheels}
    wheel = choose(list(names), "torch", m.target, exact=version, local="cpu")
    return names[wheel.filename] if wheel else None


def torch_route(m: Machine, s: Layered, device: str, idx: Index) -> dict[str, Any]:
    gpu = s.get("gpu")
    version = str(gpu["torch_version"])
    spec = f"torch=={version}"
    base = str(gpu["torch_index"]).rstrip("/")
    out: dict[str, Any] = {"spec": spec, "installed": m.installed.get("torch"), "notes": []}
    out.update(variant=None, pip_args=[], wheel=None, bytes=None, index=None)
    t, cuda = m.target, m.gpus.cuda
    if device == "cuda" and bool(gpu["torch_cuda"]) and cuda is not None:
        candidates = cuda_variants(cuda, m.gpus.capability, list(gpu["torch_variants"]))
        found, passed = find_variant(
            idx, base, "torch", candidates, t, exact=version, local_is_variant=True
        )
        if found is not None:
            size = None if out["installed"] else _size(idx, found.listed)
            out.update(route="cuda", variant=found.variant, index=found.index, bytes=size)
            out.update(wheel=found.wheel.filename, pip_args=["--index-url", found.index])
            out["label"] = (
                f"{spec}, CUDA build ({found.variant}) from {found.index}: {_gb(size)} for "
                "torch, and the NVIDIA libraries it names from the same index"
            )
            if "minor-version" in found.why:
                out["notes"].append(
                    f"PyTorch {version}'s oldest CUDA {cuda[0]} build is {found.variant}, newer "
                    f"than the driver's CUDA {cuda[0]}.{cuda[1]}: it {found.why.split(': ')[1]}; "
                    "update the driver if torch.cuda.is_available() is False."
                )
            return out
        why = "; ".join(passed) or f"no CUDA {cuda[0]} build of torch {version} is published"
        out["notes"].append(f"gpu.torch_cuda is set but {why}: PyTorch stays the CPU build.")
    local = _local_torch(m, version)
    if local is not None:
        out.update(route="cpu", wheel=local.name, bytes=0, index=str(local.parent))
        out["label"] = f"{spec}, CPU build: {local.name} in {local.parent} (pip's find-links)"
        return out
    cpu_page = idx.listing(f"{base}/cpu/torch/")
    wheel = choose([x.name for x in cpu_page or []], "torch", t, exact=version, local="cpu")
    if cpu_page and wheel is not None:
        listed = next(x for x in cpu_page if x.name == wheel.filename)
        size = None if out["installed"] else _size(idx, listed)
        out.update(route="cpu", wheel=wheel.filename, bytes=size, index=f"{base}/cpu")
        out["pip_args"] = ["--index-url", f"{base}/cpu"]
        out["label"] = f"{spec}, CPU build ({wheel.filename}, {_gb(size)}) from {base}/cpu"
        return out
    return _torch_from_pypi(out, m, s, idx, cpu_page is None)


def _torch_from_pypi(
    out: dict[str, Any], m: Machine, s: Layered, idx: Index, unreachable: bool
) -> dict[str, Any]:
    version, base = str(s.get("gpu.torch_version")), str(s.get("gpu.torch_index")).rstrip("/")
    pypi = f"{str(s.get('gpu.pypi_index')).rstrip('/')}/torch/"
    page = [] if out["installed"] else idx.listing(pypi) or []
    wheel = choose([x.name for x in page], "torch", m.target, exact=version)
    listed = next((x for x in page if wheel and x.name == wheel.filename), None)
    size = _size(idx, listed) if listed else None
    out.update(route="pypi", wheel=wheel.filename if wheel else None, bytes=size)
    why = "could not be reached" if unreachable else f"lists no torch {version}+cpu for this Python"
    if m.target.arch == "x86_64":  # PyPI's Linux x86_64 torch wheels are the CUDA builds
        out["bytes"] = None if size is None else size + PYPI_TORCH_CUDA_DEPS
        out["label"] = (
            f"torch=={version} from PyPI: the CUDA build, {_gb(size)} and about "
            f"{_gb(PYPI_TORCH_CUDA_DEPS)} of NVIDIA libraries it depends on"
        )
        out["notes"].append(
            f"PyTorch's CPU index ({base}/cpu) {why}, so pip takes torch=={version} from PyPI, "
            f"which on Linux x86_64 is the CUDA build: {_gb(size)} for torch and about "
            f"{_gb(PYPI_TORCH_CUDA_DEPS)} of NVIDIA libraries, though the embedder runs on the "
            f"CPU. To avoid it, make {base}/cpu reachable or put torch-{version}+cpu in a "
            "folder pip's find-links name, then ./start.sh again."
        )
    else:
        out["label"] = f"torch=={version} from PyPI ({_gb(size)})"
        out["notes"].append(f"PyTorch's CPU index ({base}/cpu) {why}: torch comes from PyPI.")
    return out
