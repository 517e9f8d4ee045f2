"""Make the CUDA libraries visible to CTranslate2 and llama.cpp before they load, or say why not.

CTranslate2 (faster-whisper's engine) opens `libcublas.so.12` (and, in builds that name it,
cuDNN) by name when it first runs on CUDA; llama-cpp-python's CUDA wheels link libcudart and
libcublas of their CUDA version without carrying them. The copies pip installs (NVIDIA's
`nvidia-*` wheels, which `./start.sh` adds on a card) sit in `site-packages/nvidia/*/lib`, which
the loader never searches, and a cuDNN sub-library that is missing aborts the process mid-way
through the first transcription, past any Python `except`. faster-whisper's README has users set
LD_LIBRARY_PATH before starting Python; instead, each library is opened here with RTLD_GLOBAL,
after whatever it depends on (`provision.cuda_check`, shared with set-up's own check): once a
library with a given soname is loaded, the loader hands it to every later request for that name.

`prepare_cuda` serves CTranslate2, `prepare_llama` must run before `import llama_cpp`, and
`prove_llama` loads a model the way the runtime does and reads how many layers llama.cpp put on
the card, which `doctor` prints.
"""

from __future__ import annotations

import functools
import gc
import mmap
import re
from pathlib import Path
from typing import Any

from provision.cuda_check import (
    Preload,
    check_llama,
    find_libraries,
    open_for,
    preload,
    search_roots,
    system_has,
)

__all__ = [
    "Preload",
    "find_libraries",
    "preload",
    "prepare_cuda",
    "prepare_llama",
    "prove_llama",
    "search_roots",
    "system_has",
    "wants_cudnn",
]

# Sonames CTranslate2 4.x asks for on CUDA 12 (cuDNN 9 opens its own sub-libraries).
NEEDED = ("libcublas.so.12", "libcublasLt.so.12")
CUDNN_NEEDED = ("libcudnn.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9")
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_DEVICE = re.compile(r"using device (\w+) \(([^)]*)\)")


def wants_cudnn(package: Path) -> bool:
    """Whether this CTranslate2 build uses cuDNN at all (its library names it); some builds
    do their convolutions without it, and then a missing cuDNN is no reason to leave CUDA."""
    libs = [*package.parent.glob("ctranslate2.libs/libctranslate2*"), *package.glob("lib*.so*")]
    for lib in (lib for lib in libs if lib.stat().st_size):  # mmap refuses empty files
        with lib.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            if mm.find(b"libcudnn") >= 0:
                return True
    return not libs  # unknown layout: assume it does


def prepare_cuda() -> str | None:
    """Open cuBLAS and cuDNN for CTranslate2; None when ready, else why CUDA cannot work."""
    try:
        import ctranslate2
    except ImportError as exc:
        return f"ctranslate2 cannot be imported ({exc})"
    if ctranslate2.get_cuda_device_count() == 0:
        return "CTranslate2 sees no CUDA device (no GPU, or the NVIDIA driver is not loaded)"
    cudnn = wants_cudnn(Path(ctranslate2.__file__).parent)
    needed = (*NEEDED, *CUDNN_NEEDED) if cudnn else NEEDED
    result, missing = open_for(list(needed), search_roots())
    if not missing:
        return None
    why = "; ".join(f"{n}: {result.failed[n]}" for n in missing if n in result.failed)
    return (
        f"{', '.join(missing)} not found or not loadable{f' ({why})' if why else ''}. "
        "Fix: pip install nvidia-cublas-cu12" + (" nvidia-cudnn-cu12" if cudnn else "")
    )


def prepare_llama() -> dict[str, Any]:
    """Open the CUDA libraries the installed llama-cpp-python's CUDA backend names, before
    `import llama_cpp`: its CUDA wheels leave libcudart and libcublas to the machine. Returns
    `provision.cuda_check.check_llama`'s report: the build, what it needs, what is missing.
    The work is done once per process; later calls return the same report."""
    return dict(_llama_report())


@functools.cache
def _llama_report() -> dict[str, Any]:
    return check_llama(search_roots())


def prove_llama(path: Path, gpu_layers: int, n_ctx: int = 256) -> dict[str, Any]:
    """Load the GGUF at `path` as the runtime does on CUDA and read llama.cpp's own account of
    where its layers went ("offloaded 33/33 layers to GPU") and which device it used.

    Run it with nothing else on the card: the model is loaded once more, then released."""
    report = prepare_llama()
    out: dict[str, Any] = {"build": report["build"], "missing": report["missing"]}
    out.update(devices=report["devices"], offloaded=None, layers=None, device=None)
    out["error"] = report["error"]
    if report["build"] != "cuda" or report["error"]:
        return out
    import llama_cpp

    from models.llama_log import quiet_stderr, set_verbose

    out["supports_offload"] = bool(llama_cpp.llama_supports_gpu_offload())
    try:
        with quiet_stderr() as log:
            try:
                model = llama_cpp.Llama(
                    str(path), n_ctx=n_ctx, n_gpu_layers=gpu_layers, verbose=True
                )
            finally:
                set_verbose(False)
        del model
        gc.collect()
    except Exception as exc:  # the report says what failed; doctor goes on
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    done = _OFFLOADED.search(log.text)
    if done:
        out.update(offloaded=int(done.group(1)), layers=int(done.group(2)))
    used = _DEVICE.search(log.text)
    if used:
        out["device"] = f"{used.group(1)} ({used.group(2)})"
    return out
