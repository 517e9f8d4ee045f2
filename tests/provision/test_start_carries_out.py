"""`./start.sh` carries out the plan: the pip commands it runs and what reaches the runtime.

start.sh runs from a copy of the tree (start.sh, provision/, config/, pyproject.toml) whose
`.venv/bin/python` is a script that records each call (arguments and the environment that
matters) instead of installing anything, and says that torch, llama_cpp and the CUDA
libraries are missing, so every install step runs. The stand-in machine comes from
fake_machine, the indexes from the local server of copied pages (conftest.py).
test_install_from_index.py runs the same pip arguments with the real pip.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.provision.fake_machine import BASH, CPU_FLAGS, ROOT, Card, indexes, machine

FAKE_PYTHON = """#!/bin/sh
{ printf 'CALL'; for a in "$@"; do printf ' [%s]' "$a"; done; printf '\\n'
  printf 'CMAKE_ARGS=%s\\n' "${CMAKE_ARGS:-}"; printf 'CUDACXX=%s\\n' "${CUDACXX:-}"
  env | grep '^ANNIE_' | sort; } >> "$FAKE_LOG"
case "$*" in
  "-c import torch"|"-c import llama_cpp") exit 1 ;;
  "-m pip show"*) exit 1 ;;
esac
exit 0
"""


@pytest.fixture()
def tree(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "tree"
    root.mkdir()
    shutil.copy2(ROOT / "start.sh", root / "start.sh")
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    ignore = shutil.ignore_patterns("__pycache__")
    for package in ("provision", "config"):
        shutil.copytree(ROOT / package, root / package, ignore=ignore)
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    yield root


def start(
    tree: Path,
    tmp_path: Path,
    card: Card | None,
    index: str,
    nvcc: str | None = None,
    nvcc_at: str = "path",
) -> list[str]:
    """Run `./start.sh doctor` in `tree` on a stand-in machine; return the recorded calls."""
    log = tmp_path / "calls.log"
    env = machine(tmp_path, card, nvcc=nvcc, nvcc_at=nvcc_at)
    env.update(indexes(index), FAKE_LOG=str(log))
    done = subprocess.run(
        [BASH, str(tree / "start.sh"), "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return log.read_text().splitlines()


def _call(lines: list[str], needle: str) -> list[str]:
    """The recorded call containing `needle`, with the lines recorded for it."""
    for i, line in enumerate(lines):
        if line.startswith("CALL") and needle in line:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("CALL")), None)
            return lines[i:end]
    raise AssertionError(f"no call with {needle!r} in:\n" + "\n".join(lines))


def test_a_6_gb_card_installs_the_wheel_its_libraries_and_checks_the_card(
    tree: Path, tmp_path: Path, index_url: str
) -> None:
    lines = start(tree, tmp_path, Card(6144, 5800, "12.4"), index_url)
    torch = _call(lines, "[torch==2.13.0]")
    assert f"[--index-url] [{index_url}/whl/cpu] [torch==2.13.0]" in torch[0]
    libs = _call(lines, "[cuda-toolkit[cudart,cublas]==12.4.*]")
    assert libs[0].startswith("CALL [-m] [pip] [install]")
    llama = _call(lines, "[llama-cpp-python==0.3.36]")
    index = f"{index_url}/llama-cpp-python/whl/cu124"
    assert f"[--only-binary=llama-cpp-python] [--extra-index-url] [{index}]" in llama[0]
    assert "CMAKE_ARGS=" in llama  # a wheel: nothing to compile
    # The card is proven before any model is downloaded for it.
    check = lines.index(_call(lines, "[-m] [provision.cuda_check]")[0])
    assert check > lines.index(llama[0])
    doctor = _call(lines, "[-m] [bot] [doctor]")
    assert "ANNIE_MODELS__LLM_FILE=Qwen3.5-4B-Q4_K_M.gguf" in doctor
    assert "ANNIE_MODELS__LLM_REPO=unsloth/Qwen3.5-4B-GGUF" in doctor
    assert "ANNIE_CONTEXT__WINDOW=16384" in doctor


def test_nvcc_off_path_is_handed_to_the_build(tree: Path, tmp_path: Path, index_url: str) -> None:
    lines = start(tree, tmp_path, Card(8192, 7800, "13.0"), index_url, nvcc="13.0", nvcc_at="cuda")
    build = _call(lines, "[--no-cache-dir] [llama-cpp-python]")
    assert "CMAKE_ARGS=-DGGML_CUDA=on" in build
    assert f"CUDACXX={tmp_path}/usr/local/cuda-13.0/bin/nvcc" in build
    # A CUDA 13 toolkit has no cuBLAS 12: CTranslate2's comes from NVIDIA's wheel.
    assert "[nvidia-cublas-cu12==12.9.*]" in _call(lines, "[nvidia-cublas-cu12==12.9.*]")[0]


def test_no_gpu_installs_the_cpu_builds(tree: Path, tmp_path: Path, index_url: str) -> None:
    lines = start(tree, tmp_path, None, index_url)
    torch = _call(lines, "[torch==2.13.0]")
    assert f"[--index-url] [{index_url}/whl/cpu]" in torch[0]
    llama = _call(lines, "[llama-cpp-python]")
    assert "[--no-cache-dir] [llama-cpp-python]" in llama[0]
    assert f"CMAKE_ARGS={CPU_FLAGS}" in llama
    assert not any("cuda_check" in line or "cuda-toolkit" in line for line in lines)


def test_no_compiler_stops_before_the_build_and_says_what_to_install(
    tree: Path, tmp_path: Path, index_url: str
) -> None:
    env = machine(tmp_path, None, compiler=False)
    env.update(indexes(index_url), FAKE_LOG=str(tmp_path / "calls.log"))
    done = subprocess.run(
        [BASH, str(tree / "start.sh"), "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "FAILED at step: llama-cpp-python" in done.stderr
    assert "build-essential" in done.stderr
