"""How llama-cpp-python and PyTorch get CUDA on this machine, or why they do not.

llama-cpp-python: built from source where `nvcc` exists (`-DGGML_CUDA=on`); otherwise the
published prebuilt wheel for the newest CUDA variant the driver supports, where its index
answers and lists a new enough wheel for this Python; otherwise the CPU build with the
instruction sets named (a native build crashes in the AMX kernels on some Xeons), and a
sentence saying what to install. PyTorch: the CUDA wheel index matching the driver, or the
pinned CPU build.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from provision.machine import Machine
from provision.settings import Layered

CPU_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
CUDA_CMAKE_ARGS = "-DGGML_CUDA=on"
GET_DRIVER = (
    "To use an NVIDIA GPU: install the NVIDIA driver (nvidia-smi must work), then run "
    "./start.sh again; the CUDA toolkit (nvcc) is needed only to build llama-cpp-python "
    "from source."
)
# A wheel file name; some releases carry a local label ("0.3.4+cu124"), which `==0.3.4` matches.
_WHEEL = re.compile(
    r"llama_cpp_python-([0-9][0-9.]*[0-9])(?:\+[\w.]+)?-(cp\d+)-(cp\d+|abi3)-([\w.]+)\.whl$"
)
IndexReader = Callable[[str], "list[str] | None"]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def _cu(variant: str) -> tuple[int, int]:
    digits = variant.removeprefix("cu")
    return int(digits[:-1]), int(digits[-1])


def best_wheel(names: list[str], python_tag: str, minimum: str) -> str | None:
    """The newest llama-cpp-python version with a Linux x86_64 wheel for this Python."""
    found = [
        m.group(1)
        for m in map(_WHEEL.match, names)
        if m and m.group(2) == python_tag and "linux" in m.group(4) and "x86_64" in m.group(4)
    ]
    ok = [v for v in found if _version(v) >= _version(minimum)]
    return max(ok, key=_version) if ok else None


def llama_route(m: Machine, s: Layered, device: str, read_index: IndexReader) -> dict[str, Any]:
    gpu = s.get("gpu")
    out: dict[str, Any] = {"index": None, "cmake_args": "", "pip_args": []}
    out["installed"] = m.installed.get("llama-cpp-python")
    notes: list[str] = []
    out["notes"] = notes
    if device == "cuda" and m.nvcc.path:
        out.update(route="cuda-source", spec="llama-cpp-python", cmake_args=CUDA_CMAKE_ARGS)
        out["label"] = f"CUDA build from source with {m.nvcc.path} (several minutes)"
        cuda = m.gpus.cuda
        if m.nvcc.version and cuda and m.nvcc.version > cuda:
            notes.append(
                f"nvcc is CUDA {m.nvcc.version[0]}.{m.nvcc.version[1]} but the driver supports "
                f"CUDA {cuda[0]}.{cuda[1]}: update the driver, or the build may not load."
            )
        return out
    if device == "cuda":
        cuda = m.gpus.cuda
        variants = [v for v in gpu["llama_wheel_variants"] if cuda and _cu(v) <= cuda]
        variant = max(variants, key=_cu) if variants else None
        if variant is not None:
            index = f"{gpu['llama_wheel_index'].rstrip('/')}/{variant}"
            names = read_index(f"{index}/llama-cpp-python/")
            version = (
                best_wheel(names, m.python_tag, gpu["llama_wheel_min_version"]) if names else None
            )
            if version:
                out.update(route="cuda-wheel", spec=f"llama-cpp-python=={version}", index=index)
                out["pip_args"] = ["--only-binary=llama-cpp-python", "--extra-index-url", index]
                out["label"] = f"prebuilt CUDA wheel {version} ({variant}) from {index}"
                return out
            why = (
                f"{index} could not be reached"
                if names is None
                else f"{index} has no wheel of llama-cpp-python >= "
                f"{gpu['llama_wheel_min_version']} for {m.python_tag} on Linux x86_64"
            )
        else:
            have = f"CUDA {cuda[0]}.{cuda[1]}" if cuda else "an unknown CUDA version"
            why = f"the driver supports {have}; the prebuilt wheels need 12.1 or newer"
        notes.append(
            f"No nvcc and no usable prebuilt wheel ({why}), so llama-cpp-python is built for the "
            "CPU and the LLM runs on the CPU, slowly. To put it on the card, install the CUDA "
            "toolkit (nvcc on PATH, or CUDACXX) or update the driver, then "
            "`.venv/bin/pip uninstall -y llama-cpp-python` and run ./start.sh again."
        )
    elif not m.gpus.cards:
        notes.append(GET_DRIVER)
    out.update(route="cpu", spec="llama-cpp-python", cmake_args=CPU_CMAKE_ARGS)
    out["label"] = "CPU build from source (about 5 minutes on 2 cores)"
    return out


def torch_route(m: Machine, s: Layered, device: str) -> dict[str, Any]:
    gpu = s.get("gpu")
    spec = f"torch=={gpu['torch_version']}"
    out: dict[str, Any] = {"spec": spec, "installed": m.installed.get("torch"), "notes": []}
    cuda = m.gpus.cuda
    if device == "cuda" and cuda and cuda[0] >= 12:
        same = [v for v in gpu["torch_variants"] if _cu(v)[0] == cuda[0]]
        fit = [v for v in same if _cu(v) <= cuda]
        variant = max(fit, key=_cu) if fit else min(same, key=_cu) if same else None
        if variant is not None:
            index = f"{gpu['torch_index'].rstrip('/')}/{variant}"
            if not fit:
                out["notes"].append(
                    f"PyTorch's oldest CUDA {cuda[0]} build is {variant}, newer than the "
                    f"driver's CUDA {cuda[0]}.{cuda[1]}: it runs by CUDA's minor-version "
                    "compatibility; update the driver if torch.cuda.is_available() is False."
                )
            out.update(route="cuda", variant=variant, pip_args=["--index-url", index])
            out["label"] = f"{spec}, CUDA build ({variant}) from {index}"
            return out
    if device == "cuda":
        out["notes"].append("The driver is older than CUDA 12: PyTorch stays the CPU build.")
    out.update(route="cpu", variant=None, pip_args=[])
    out["label"] = f"{spec}, CPU build"
    return out
