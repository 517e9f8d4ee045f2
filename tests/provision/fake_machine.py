"""A fake machine for start.sh: a fake `nvidia-smi` (and `nvcc`) on PATH, and the planner run.

`plan()` runs the real `./start.sh plan --json` in a subprocess with PATH reduced to a folder of
fake tools and the system's /usr/bin:/bin, ANNIE_HOME and HOME in a temporary folder, and the
wheel index pointed at a local HTTP server (see conftest.py) or at a closed port.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# The interpreter behind the venv: start.sh runs the planner on plain python3, before any venv.
PYTHON = os.path.realpath(sys.executable)
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
CPU_FLAGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
CLOSED = "http://127.0.0.1:9"  # the discard port: refused at once, never a wait


@dataclass(frozen=True)
class Card:
    total_mib: int
    free_mib: int
    cuda: str = "12.4"
    name: str = "NVIDIA GeForce RTX Test"


def _script(path: Path, text: str) -> None:
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)


def plan(
    tmp_path: Path,
    card: Card | None,
    *,
    nvcc: str | None = None,
    index: str = CLOSED,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run `./start.sh plan --json` with `card` (None: no nvidia-smi) and return the plan."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    if card is not None:
        row = f"{card.name}, {card.total_mib}, {card.free_mib}, 550.54.15"
        banner = f"| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: {card.cuda} |"
        _script(
            fake / "nvidia-smi",
            f'case "$1" in\n  --query-gpu=*) echo "{row}" ;;\n  *) echo "{banner}" ;;\nesac\n',
        )
    if nvcc is not None:
        _script(fake / "nvcc", f'echo "Cuda compilation tools, release {nvcc}, V{nvcc}.1"\n')
    home = tmp_path / "home"
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ANNIE_") and k not in ("CUDACXX", "CUDA_HOME", "CUDA_PATH")
    }
    clean.update(
        PATH=f"{fake}:/usr/bin:/bin",
        PYTHON=PYTHON,
        HOME=str(tmp_path),
        ANNIE_HOME=str(home),
        ANNIE_GPU__LLAMA_WHEEL_INDEX=index,
        ANNIE_GPU__PROBE_TIMEOUT_S="2",
    )
    clean.update(env or {})
    done = subprocess.run(
        ["bash", str(ROOT / "start.sh"), "plan", "--json"],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))
