"""Small stand-in wheels with real file names, and tiny shared libraries to put in them.

A stand-in wheel installs like the real one (pip checks its name, version and tags) but holds
only what the tests look at: the CUDA libraries NVIDIA's wheels carry (`libcudart.so.12`,
`libcublas.so.12` ... as real, tiny ELF libraries with those sonames, in the folders the real
wheels use), llama.cpp's CUDA backend for a llama-cpp-python CUDA wheel (a library that names
libcudart and libcublas of its CUDA version, as the real one does, and answers
`ggml_backend_cuda_get_device_count` with 1), and for cuda-toolkit the real METADATA copied
from PyPI, so pip follows its pins.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import subprocess
import zipfile
from pathlib import Path

INDEXES = Path(__file__).resolve().parent / "indexes"


def _cc(folder: Path, soname: str, source: str, *needs: str) -> Path:
    src = folder / f"{soname}.c"
    src.write_text(source)
    out = folder / soname
    links = [f"-l:{n}" for n in needs]
    cmd = ["cc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(out), str(src)]
    subprocess.run([*cmd, f"-L{folder}", "-Wl,--no-as-needed", *links], check=True)
    return out


def build_libraries(folder: Path) -> dict[str, bytes]:
    """The stand-in libraries by file name, built once per test session with `cc`."""
    folder.mkdir(parents=True, exist_ok=True)
    for major in (12, 13):
        _cc(folder, f"libcudart.so.{major}", "int cudart_standin(void) { return 1; }")
        _cc(folder, f"libcublasLt.so.{major}", "int cublaslt_standin(void) { return 1; }")
        _cc(
            folder,
            f"libcublas.so.{major}",
            "int cublas_standin(void) { return 2; }",
            f"libcublasLt.so.{major}",
        )
    _cc(folder, "libnvrtc.so.13", "int nvrtc_standin(void) { return 1; }")
    _cc(folder, "libggml-base.so", "int ggml_base_standin(void) { return 1; }")
    for major in (12, 13):
        sub = folder / f"cu{major}"
        sub.mkdir(exist_ok=True)
        for name in (f"libcudart.so.{major}", f"libcublas.so.{major}", f"libcublasLt.so.{major}"):
            (sub / name).write_bytes((folder / name).read_bytes())
        (sub / "libggml-base.so").write_bytes((folder / "libggml-base.so").read_bytes())
        _cc(
            sub,
            "libggml-cuda.so",
            "int ggml_backend_cuda_get_device_count(void) { return 1; }",
            "libggml-base.so",
            f"libcudart.so.{major}",
            f"libcublas.so.{major}",
            f"libcublasLt.so.{major}",
        )
    libs = {p.name: p.read_bytes() for p in folder.glob("lib*.so*")}
    for major in (12, 13):
        libs[f"libggml-cuda-cu{major}"] = (folder / f"cu{major}" / "libggml-cuda.so").read_bytes()
    return libs


def contents(filename: str, url_path: str, libs: dict[str, bytes]) -> dict[str, bytes]:
    """What a stand-in of `filename` holds (the URL tells a llama wheel's CUDA variant)."""
    name = filename.split("-")[0].lower()
    if name == "llama_cpp_python":
        variant = re.search(r"-cu(\d\d)\d/", url_path)
        if variant is None:
            return {}
        return {
            "llama_cpp/lib/libggml-base.so": libs["libggml-base.so"],
            "llama_cpp/lib/libggml-cuda.so": libs[f"libggml-cuda-cu{variant.group(1)}"],
        }
    layout = {
        "nvidia_cuda_runtime_cu12": {"nvidia/cuda_runtime/lib/": ["libcudart.so.12"]},
        "nvidia_cublas_cu12": {"nvidia/cublas/lib/": ["libcublas.so.12", "libcublasLt.so.12"]},
        "nvidia_cuda_runtime": {"nvidia/cu13/lib/": ["libcudart.so.13"]},
        "nvidia_cublas": {"nvidia/cu13/lib/": ["libcublas.so.13", "libcublasLt.so.13"]},
        "nvidia_cuda_nvrtc": {"nvidia/cu13/lib/": ["libnvrtc.so.13"]},
    }
    out: dict[str, bytes] = {}
    for folder, names in layout.get(name, {}).items():
        out.update({folder + n: libs[n] for n in names})
    return out


def wheel(filename: str, files: dict[str, bytes]) -> bytes:
    """A valid wheel named `filename` holding `files`; cuda-toolkit gets its copied METADATA."""
    stem = filename[: -len(".whl")]
    dist, version = stem.split("-")[:2]
    tags = stem.split("-")[-3:]
    info = f"{dist}-{version}.dist-info"
    copied = INDEXES / "pypi" / "metadata" / f"{filename}.METADATA"
    if copied.is_file():
        metadata = copied.read_text()
    else:
        metadata = f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\nVersion: {version}\n"
    wheel_tags = "".join(
        f"Tag: {p}-{a}-{plat}\n"
        for p in tags[0].split(".")
        for a in tags[1].split(".")
        for plat in tags[2].split(".")
    )
    members = {
        **files,
        f"{info}/METADATA": metadata.encode(),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: annie-tests\nRoot-Is-Purelib: false\n{wheel_tags}"
        ).encode(),
    }
    record = []
    for path, data in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    members[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in members.items():
            info_ = zipfile.ZipInfo(path)
            info_.external_attr = 0o644 << 16
            zf.writestr(info_, data)
    return buf.getvalue()
