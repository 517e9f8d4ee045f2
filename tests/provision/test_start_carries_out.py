"""`./start.sh` carries out the plan: the pip commands it runs and what reaches the runtime.

start.sh runs from a copy of the tree (start.sh, provision/, config/, pyproject.toml) whose
`.venv/bin/python` is a script that records each call (arguments and the environment that
matters) instead of installing anything, and says that torch and llama_cpp are missing, so
every install step runs. The fake `nvidia-smi` comes from fake_machine, the wheel index
from conftest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.provision.fake_machine import CPU_FLAGS, PYTHON, ROOT, Card, plan

FAKE_PYTHON = """#!/bin/sh
{ printf 'CALL'; for a in "$@"; do printf ' [%s]' "$a"; done; printf '\\n'
  printf 'CMAKE_ARGS=%s\\n' "${CMAKE_ARGS:-}"; env | grep '^ANNIE_' | sort; } >> "$FAKE_LOG"
case "$*" in
  "-c import torch"|"-c import llama_cpp") exit 1 ;;
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


def start(tree: Path, tmp_path: Path, index: str) -> list[str]:
    """Run `./start.sh doctor` in `tree`; the fake tools are those `plan()` left in tmp/bin."""
    log = tmp_path / "calls.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNIE_")}
    for name in ("CUDACXX", "CUDA_HOME", "CUDA_PATH", "CMAKE_ARGS"):
        env.pop(name, None)
    env.update(
        PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin",
        PYTHON=PYTHON,
        HOME=str(tmp_path),
        ANNIE_HOME=str(tmp_path / "home"),
        ANNIE_GPU__LLAMA_WHEEL_INDEX=index,
        FAKE_LOG=str(log),
    )
    done = subprocess.run(
        ["bash", str(tree / "start.sh"), "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
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


def test_a_6_gb_card_installs_the_wheel_and_the_runtime_gets_the_cards_model(
    tree: Path, tmp_path: Path, index_url: str
) -> None:
    plan(tmp_path, Card(6144, 5800, "12.4"), index=index_url)  # leaves the fake nvidia-smi
    lines = start(tree, tmp_path, index_url)
    torch = _call(lines, "[torch==2.13.0]")
    assert "[--index-url] [https://download.pytorch.org/whl/cu126]" in torch[0]
    llama = _call(lines, "[llama-cpp-python==0.3.36]")
    assert f"[--only-binary=llama-cpp-python] [--extra-index-url] [{index_url}/cu124]" in llama[0]
    assert "CMAKE_ARGS=" in llama  # a wheel: nothing to compile
    doctor = _call(lines, "[-m] [bot] [doctor]")
    assert "ANNIE_MODELS__LLM_FILE=Qwen3.5-4B-Q4_K_M.gguf" in doctor
    assert "ANNIE_MODELS__LLM_REPO=unsloth/Qwen3.5-4B-GGUF" in doctor
    assert "ANNIE_CONTEXT__WINDOW=16384" in doctor


def test_no_gpu_installs_exactly_what_it_did_before(tree: Path, tmp_path: Path) -> None:
    plan(tmp_path, None)
    lines = start(tree, tmp_path, "http://127.0.0.1:9")
    torch = _call(lines, "[torch==2.13.0]")
    assert "index-url" not in torch[0]
    llama = _call(lines, "[llama-cpp-python]")
    assert "[--no-cache-dir] [llama-cpp-python]" in llama[0]
    assert f"CMAKE_ARGS={CPU_FLAGS}" in llama
    doctor = _call(lines, "[-m] [bot] [doctor]")
    assert [line for line in doctor[1:] if line.startswith("ANNIE_")] == [
        f"ANNIE_GPU__LLAMA_WHEEL_INDEX={'http://127.0.0.1:9'}",
        f"ANNIE_HOME={tmp_path / 'home'}",
    ]
