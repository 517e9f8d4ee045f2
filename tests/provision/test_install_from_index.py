"""The plan's install commands, run by the real pip against the local server of copied indexes.

pip must fetch exactly the wheels the plan chose (its tag logic and the planner's agree), and
what it installs must then pass set-up's own GPU check: `python -m provision.cuda_check` opens
the CUDA libraries from the installed NVIDIA wheels, then llama.cpp's CUDA backend with them.
The wheels are stand-ins with the real names (`standins.py`): their libraries are tiny but real,
with the sonames and dependencies of the real ones, so the loading is real too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from provision.cuda_check import system_has, toolkit_dirs
from tests.provision.fake_machine import ROOT, TAG, Card, plan
from tests.provision.index_server import IndexServer

GLIBC = os.confstr("CS_GNU_LIBC_VERSION") or ""


@pytest.fixture(autouse=True)
def _glibc_2_35() -> None:
    # The copied pages' current wheels are manylinux_2_35, and the planner checks them
    # against this machine's glibc: the cases below are written for 2.35 or newer.
    found = tuple(int(p) for p in GLIBC.split()[-1].split(".")[:2])
    assert found >= (2, 35), f"these cases need glibc 2.35 or newer; this machine has {GLIBC}"


def pip_install(target: Path, args: list[str], pypi: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=pypi, PIP_NO_CACHE_DIR="1")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "--target", str(target), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def cuda_check(site: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "CUDACXX")}
    env["PYTHONPATH"] = f"{site}{os.pathsep}{ROOT}"
    done = subprocess.run(
        [sys.executable, "-m", "provision.cuda_check", "--json"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize(("cuda", "major"), [("12.4", "12"), ("13.2", "13")])
def test_pip_installs_the_chosen_wheels_and_the_gpu_check_passes(
    tmp_path: Path, indexes: IndexServer, cuda: str, major: str
) -> None:
    p = plan(tmp_path, Card(12288, 11800, cuda), index=indexes.url)
    llama, torch, libs = p["llama_cpp"], p["torch"], p["cuda_runtime"]
    site = tmp_path / "venv" / "site-packages"  # a name search_roots() recognises
    pypi = f"{indexes.url}/pypi/simple"
    seen = len(indexes.requests)

    pip_install(site, [*torch["pip_args"], torch["spec"]], pypi)
    pip_install(site, libs["packages"], pypi)
    pip_install(site, [*llama["pip_args"], llama["spec"]], pypi)

    fetched = [Path(path).name for method, path in indexes.requests[seen:] if method == "GET"]
    fetched = [name for name in fetched if name.endswith(".whl")]
    assert torch["wheel"] == f"torch-2.13.0+cpu-{TAG}-{TAG}-manylinux_2_28_x86_64.whl"
    assert f"torch-2.13.0%2Bcpu-{TAG}-{TAG}-manylinux_2_28_x86_64.whl" in fetched
    assert llama["wheel"] in fetched
    assert [f["file"] for f in libs["files"] if f["file"] not in fetched] == []
    assert (site / "llama_cpp" / "lib" / "libggml-cuda.so").is_file()

    check = cuda_check(site)
    assert check["ok"] is True, check
    report = check["llama"]
    assert report["build"] == "cuda" and report["devices"] == 1 and report["missing"] == []
    assert report["needs"] == sorted(
        [f"libcublas.so.{major}", f"libcublasLt.so.{major}", f"libcudart.so.{major}"]
    )
    assert set(report["loaded"]) == set(report["needs"])
    assert check["ctranslate2"]["missing"] == []  # cuBLAS 12 for CTranslate2, both drivers
    assert "nvidia/cublas/lib/libcublas.so.12" in check["ctranslate2"]["found"]["libcublas.so.12"]


def test_without_the_cuda_libraries_the_check_says_what_is_missing(
    tmp_path: Path, indexes: IndexServer
) -> None:
    # A machine with a CUDA 12 runtime of its own would find it: the libraries are then
    # reported present, not missing.
    own = any(Path(d, "libcudart.so.12").exists() for d in toolkit_dirs()) or system_has(
        "libcudart.so.12"
    )
    p = plan(tmp_path, Card(12288, 11800, "12.4"), index=indexes.url)
    site = tmp_path / "venv" / "site-packages"
    pip_install(
        site, [*p["llama_cpp"]["pip_args"], p["llama_cpp"]["spec"]], f"{indexes.url}/pypi/simple"
    )
    check = cuda_check(site)
    if own:
        assert "libcudart.so.12" not in check["llama"]["missing"]
        return
    assert check["ok"] is False
    assert "libcudart.so.12" in check["llama"]["missing"]
    assert "libcudart.so.12" in check["llama"]["error"]  # the backend does not open without it
