"""Open the CUDA libraries pip installed, and prove a llama.cpp CUDA build loads with them.

NVIDIA's pip wheels put their libraries in `site-packages/nvidia/*/lib` (CUDA 12 wheels) or
`site-packages/nvidia/cu13/lib` (CUDA 13 wheels), and a toolkit keeps its own in its lib64; the
dynamic loader searches none of these. Each library is opened here with RTLD_GLOBAL, after
whatever it depends on: once a library with a given soname is open, the loader hands it to
every later request for that name, so an engine's own library then finds it. Nothing is
re-executed and LD_LIBRARY_PATH is not needed.

Standard library only, so `./start.sh` can run `python -m provision.cuda_check` with the
venv's interpreter right after installing llama-cpp-python, before Annie's own packages and
before any model download: it opens llama.cpp's CUDA backend (`libggml-cuda`) and asks it how
many devices it sees, and checks that libcublas.so.12 (what CTranslate2 needs) opens.
`models/cuda_libs.py` uses the same functions at run time.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import site
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_LIB = re.compile(r"lib(cublas|cublasLt|cudnn\w*|cudart|nvrtc\w*|nvJitLink)\.so\.\d+$")
_NEEDS = re.compile(rb"lib(?:cudart|cublasLt|cublas|nvrtc)\.so\.\d+")
CTRANSLATE2_NEEDS = ("libcublas.so.12", "libcublasLt.so.12")


@dataclass
class Preload:
    """What was found and opened, what could not be, and why."""

    found: dict[str, Path] = field(default_factory=dict)
    loaded: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def missing(self, needed: tuple[str, ...]) -> list[str]:
        return [name for name in needed if name not in self.loaded]


def search_roots() -> list[Path]:
    """Every site-packages folder of this interpreter (the venv's, then the user's)."""
    roots = [Path(p) for p in (*site.getsitepackages(), site.getusersitepackages())]
    roots += [Path(p) for p in sys.path if p.endswith("site-packages")]
    return list(dict.fromkeys(r for r in roots if r.is_dir()))


def toolkit_dirs(environ: dict[str, str] | None = None) -> list[Path]:
    """A CUDA toolkit's library folders: where CUDA_HOME/CUDA_PATH point, and /usr/local/cuda."""
    env = os.environ if environ is None else environ
    homes = [env.get("CUDA_HOME", ""), env.get("CUDA_PATH", ""), "/usr/local/cuda"]
    if env.get("CUDACXX"):
        homes.append(str(Path(env["CUDACXX"]).parent.parent))
    dirs = [Path(h) / sub for h in homes if h for sub in ("lib64", "targets/x86_64-linux/lib")]
    return list(dict.fromkeys(d for d in dirs if d.is_dir()))


def find_libraries(roots: list[Path], toolkits: list[Path] | None = None) -> dict[str, Path]:
    """soname -> file, from the pip NVIDIA packages (nvidia/*/lib), torch/lib, then `toolkits`.

    The first root that has a soname wins, and within a root the pip package beats torch's
    bundled copy (older torch wheels carried their own)."""
    found: dict[str, Path] = {}
    folders: list[Path] = []
    for root in roots:
        folders += [*sorted(root.glob("nvidia/*/lib")), *sorted(root.glob("nvidia/*/*/lib"))]
        folders.append(root / "torch" / "lib")
    for folder in [*folders, *(toolkits or [])]:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if _LIB.match(path.name) and path.name not in found:
                found[path.name] = path
    return found


def preload(found: dict[str, Path]) -> Preload:
    """Open every found library with RTLD_GLOBAL, each after its dependencies.

    The order is discovered rather than listed: a library whose dependency is not open yet
    fails, and is tried again after another one opened, until a round opens nothing."""
    result = Preload(found=dict(found))
    waiting = dict(found)
    while waiting:
        opened = False
        for name, path in list(waiting.items()):
            try:
                ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                result.failed[name] = str(exc)
                continue
            result.loaded.append(name)
            result.failed.pop(name, None)
            del waiting[name]
            opened = True
        if not opened:
            break
    return result


def system_has(soname: str) -> bool:
    """Whether the loader finds `soname` on its own (ldconfig, LD_LIBRARY_PATH)."""
    try:
        ctypes.CDLL(soname, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return False
    return True


def needs(library: Path) -> list[str]:
    """The CUDA runtime sonames a library names (read from its bytes; no loading)."""
    try:
        data = library.read_bytes()
    except OSError:
        return []
    return sorted({m.decode() for m in _NEEDS.findall(data)})


def llama_cuda_library(roots: list[Path]) -> Path | None:
    """llama.cpp's CUDA backend inside the installed llama-cpp-python, if it has one."""
    for root in roots:
        for lib in sorted((root / "llama_cpp").glob("**/libggml-cuda*.so*")):
            if lib.is_file():
                return lib
    return None


def open_for(needed: list[str], roots: list[Path]) -> tuple[Preload, list[str]]:
    """Open the libraries `needed` names (cuDNN, about a gigabyte, only if named) and say
    which of them neither pip's packages nor the system provide."""
    found = find_libraries(roots, toolkit_dirs())
    wants_cudnn = any(n.startswith("libcudnn") for n in needed)
    result = preload(
        {k: v for k, v in found.items() if wants_cudnn or not k.startswith("libcudnn")}
    )
    missing = [n for n in result.missing(tuple(needed)) if not system_has(n)]
    return result, missing


def check_llama(roots: list[Path]) -> dict[str, Any]:
    """Whether llama-cpp-python's CUDA backend opens, and how many CUDA devices it sees."""
    lib = llama_cuda_library(roots)
    out: dict[str, Any] = {"build": "cpu" if lib is None else "cuda", "library": str(lib or "")}
    out.update(needs=[], loaded=[], missing=[], devices=None, error="")
    if lib is None:
        return out
    out["needs"] = needs(lib)
    result, out["missing"] = open_for(out["needs"], roots)
    out["loaded"] = [n for n in result.loaded if n in out["needs"]]
    try:
        for base in sorted(lib.parent.glob("libggml-base.so*")):
            ctypes.CDLL(str(base), mode=ctypes.RTLD_GLOBAL)
        backend = ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        out["error"] = str(exc)
        return out
    count = getattr(backend, "ggml_backend_cuda_get_device_count", None)
    if count is not None:
        count.restype = ctypes.c_int
        out["devices"] = int(count())
    return out


def check_cublas12(roots: list[Path]) -> dict[str, Any]:
    """Whether the cuBLAS 12 that CTranslate2's CUDA build links opens."""
    result, missing = open_for(list(CTRANSLATE2_NEEDS), roots)
    where = {n: str(result.found[n]) for n in CTRANSLATE2_NEEDS if n in result.found}
    return {"needs": list(CTRANSLATE2_NEEDS), "found": where, "missing": missing}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m provision.cuda_check", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    roots = search_roots()
    llama, cublas = check_llama(roots), check_cublas12(roots)
    ok = llama["build"] == "cuda" and not llama["error"] and bool(llama["devices"])
    ok = ok and not cublas["missing"]
    if args.json:
        print(json.dumps({"llama": llama, "ctranslate2": cublas, "ok": ok}, indent=2))
        return 0 if ok else 1
    if llama["build"] == "cpu":
        print("    llama.cpp: this llama-cpp-python has no CUDA backend (a CPU build); fix:")
        print("      .venv/bin/pip uninstall -y llama-cpp-python, then ./start.sh again")
    elif llama["error"]:
        print(f"    llama.cpp: its CUDA backend does not open: {llama['error']}")
    elif not llama["devices"]:
        print("    llama.cpp: its CUDA backend sees no device (is the NVIDIA driver loaded?)")
    else:
        print(f"    llama.cpp: CUDA backend opens and sees {llama['devices']} device(s)")
    for name in llama["missing"]:
        print(f"    llama.cpp needs {name}: not found; ./start.sh plan names the package")
    for name in cublas["missing"]:
        print(f"    CTranslate2 needs {name}: not found; fix: pip install nvidia-cublas-cu12")
    if not ok:
        print("    (to run on the CPU instead: ANNIE_MODELS__DEVICE=cpu ./start.sh)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
