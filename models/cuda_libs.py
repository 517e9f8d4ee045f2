"""Make cuBLAS and cuDNN visible to CTranslate2 before it needs them, or say why not.

CTranslate2 (faster-whisper's engine) opens `libcublas.so.12` and cuDNN's libraries by name
when it first runs on CUDA; the copies that pip installs (the CUDA PyTorch wheels depend on
`nvidia-cublas-cu12` and `nvidia-cudnn-cu12`) sit in `site-packages/nvidia/*/lib`, which the
loader never searches, and a cuDNN sub-library that is missing aborts the process mid-way
through the first transcription, past any Python `except`. faster-whisper's README has users
set LD_LIBRARY_PATH before starting Python; instead, each library is opened here with
RTLD_GLOBAL, after whatever it depends on: once a library with a given soname is loaded, the
loader hands it to every later request for that name. Nothing is re-executed.
"""

from __future__ import annotations

import ctypes
import mmap
import re
import site
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Sonames CTranslate2 4.x asks for on CUDA 12 (cuDNN 9 opens its own sub-libraries).
NEEDED = ("libcublas.so.12", "libcublasLt.so.12")
CUDNN_NEEDED = ("libcudnn.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9")
_LIB = re.compile(r"lib(cublas|cublasLt|cudnn\w*|cudart|nvrtc\w*|nvJitLink)\.so\.\d+$")


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


def find_libraries(roots: list[Path]) -> dict[str, Path]:
    """soname -> file, from the pip NVIDIA packages (nvidia/*/lib) and torch/lib in `roots`.

    The first root that has a soname wins, and within a root the pip package beats torch's
    bundled copy (older torch wheels carried their own)."""
    found: dict[str, Path] = {}
    for root in roots:
        folders = [*sorted(root.glob("nvidia/*/lib")), *sorted(root.glob("nvidia/*/*/lib"))]
        for folder in [*folders, root / "torch" / "lib"]:
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


def wants_cudnn(package: Path) -> bool:
    """Whether this CTranslate2 build uses cuDNN at all (its library names it); some builds
    do their convolutions without it, and then a missing cuDNN is no reason to leave CUDA."""
    libs = [*package.parent.glob("ctranslate2.libs/libctranslate2*"), *package.glob("lib*.so*")]
    for lib in (lib for lib in libs if lib.stat().st_size):  # mmap refuses empty files
        with lib.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            if mm.find(b"libcudnn") >= 0:
                return True
    return not libs  # unknown layout: assume it does


def system_has(soname: str) -> bool:
    """Whether the loader finds `soname` on its own (ldconfig, LD_LIBRARY_PATH)."""
    try:
        ctypes.CDLL(soname, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return False
    return True


def prepare_cuda() -> str | None:
    """Open cuBLAS and cuDNN for CTranslate2; None when ready, else why CUDA cannot work."""
    try:
        import ctranslate2
    except ImportError as exc:
        return f"ctranslate2 cannot be imported ({exc})"
    if ctranslate2.get_cuda_device_count() == 0:
        return "CTranslate2 sees no CUDA device (no GPU, or the NVIDIA driver is not loaded)"
    cudnn = wants_cudnn(Path(ctranslate2.__file__).parent)
    found = find_libraries(search_roots())
    # cuDNN's libraries map about a gigabyte: open them only for a build that uses them.
    result = preload({k: v for k, v in found.items() if cudnn or not k.startswith("libcudnn")})
    needed = (*NEEDED, *CUDNN_NEEDED) if cudnn else NEEDED
    missing = [n for n in result.missing(needed) if not system_has(n)]
    if not missing:
        return None
    why = "; ".join(f"{n}: {result.failed[n]}" for n in missing if n in result.failed)
    return (
        f"{', '.join(missing)} not found or not loadable{f' ({why})' if why else ''}. "
        "Fix: pip install nvidia-cublas-cu12 nvidia-cudnn-cu12"
    )
