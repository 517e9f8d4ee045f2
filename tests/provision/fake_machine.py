"""A stand-in machine for start.sh: fake `nvidia-smi`, `nvcc` and compilers, and the planner run.

`plan()` runs the real `./start.sh plan --json` in a subprocess whose PATH holds only a folder
of fake tools and a folder of links to the few system tools start.sh itself uses, so whether a
compiler or nvcc is present is decided here, not by the machine running the tests. ANNIE_HOME
and HOME are in a temporary folder, pip's own configuration is switched off, and the indexes
point at the local server of copied pages (see conftest.py) or at a closed port.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# The interpreter behind the venv: start.sh runs the planner on plain python3, before any venv.
PYTHON = os.path.realpath(sys.executable)
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
BASH = shutil.which("bash") or "/bin/bash"
CPU_FLAGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
CLOSED = "http://127.0.0.1:9"  # the discard port: refused at once, never a wait
# The system tools start.sh runs besides Python (plan, then the install steps with a fake venv).
TOOLS = ("dirname", "date", "cat", "sha256sum", "cut", "env", "grep", "sort", "id", "head")
# A driver of each branch and the CUDA version its nvidia-smi banner reports.
DRIVERS = {
    "12.2": "535.183.01",
    "12.4": "550.144.03",
    "12.8": "570.153.02",
    "12.9": "575.64.05",
    "13.0": "580.95.05",
    "13.2": "595.45.04",
}


@dataclass(frozen=True)
class Card:
    total_mib: int
    free_mib: int
    cuda: str = "12.4"
    name: str = "NVIDIA GeForce RTX Test"
    capability: str = "8.9"


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)


def machine(
    tmp_path: Path,
    card: Card | None,
    *,
    nvcc: str | None = None,
    nvcc_at: str = "path",
    compiler: bool = True,
) -> dict[str, str]:
    """Write the fake tools into `tmp_path` and return the environment that uses them."""
    fake, tools = tmp_path / "bin", tmp_path / "tools"
    fake.mkdir(parents=True, exist_ok=True)
    tools.mkdir(exist_ok=True)
    for tool in TOOLS:
        real = shutil.which(tool)
        if real and not (tools / tool).exists():
            (tools / tool).symlink_to(real)
    if card is not None:
        driver = DRIVERS.get(card.cuda, "550.54.15")
        row = f"{card.name}, {card.total_mib}, {card.free_mib}, {driver}, {card.capability}"
        banner = f"| NVIDIA-SMI {driver}   Driver Version: {driver}   CUDA Version: {card.cuda} |"
        _script(
            fake / "nvidia-smi",
            f'case "$1" in\n  --query-gpu=*) echo "{row}" ;;\n  *) echo "{banner}" ;;\nesac\n',
        )
    cuda_root = tmp_path / "usr" / "local"
    if nvcc is not None:
        where = fake if nvcc_at == "path" else cuda_root / f"cuda-{nvcc}" / "bin"
        _script(where / "nvcc", f'echo "Cuda compilation tools, release {nvcc}, V{nvcc}.1"\n')
    if compiler:
        for name in ("cc", "c++"):
            _script(fake / name, "exit 0\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANNIE_", "PIP_"))
        and k not in ("CUDACXX", "CUDA_HOME", "CUDA_PATH", "CMAKE_ARGS", "VIRTUAL_ENV")
    }
    env.update(
        PATH=f"{fake}:{tools}",
        PYTHON=PYTHON,
        HOME=str(tmp_path),
        ANNIE_HOME=str(tmp_path / "home"),
        ANNIE_GPU__NVCC_DIRS=json.dumps([f"{cuda_root}/cuda/bin", f"{cuda_root}/cuda-*/bin"]),
        ANNIE_GPU__PROBE_TIMEOUT_S="2",
        PIP_CONFIG_FILE=os.devnull,
    )
    return env


def indexes(base: str) -> dict[str, str]:
    """The index settings for a server of copied pages at `base` (or a closed port)."""
    return {
        "ANNIE_GPU__LLAMA_WHEEL_INDEX": f"{base}/llama-cpp-python/whl",
        "ANNIE_GPU__TORCH_INDEX": f"{base}/whl",
        "ANNIE_GPU__PYPI_INDEX": f"{base}/pypi/simple",
    }


def plan(
    tmp_path: Path,
    card: Card | None,
    *,
    nvcc: str | None = None,
    nvcc_at: str = "path",
    compiler: bool = True,
    index: str = CLOSED,
    env: dict[str, str] | None = None,
    text: bool = False,
    venv: Path | None = None,
) -> Any:
    """Run `./start.sh plan --json` (or the text plan) on this stand-in machine, whose virtual
    environment is `venv` (by default none yet: nothing installed)."""
    venv = venv or tmp_path / "venv"
    run_env = machine(tmp_path, card, nvcc=nvcc, nvcc_at=nvcc_at, compiler=compiler)
    run_env.update(indexes(index))
    run_env.update(env or {})
    done = subprocess.run(
        [BASH, str(ROOT / "start.sh"), "plan", "--venv", str(venv), *([] if text else ["--json"])],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout if text else json.loads(done.stdout)
