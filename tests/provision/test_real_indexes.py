"""`./start.sh plan` against copies of the real indexes, on stand-in machines.

Drivers reporting CUDA 12.2, 12.4, 12.8, 12.9, 13.0 and 13.2, each with nvcc on PATH, in
/usr/local/cuda-X.Y/bin (off PATH) or absent, and with or without a C compiler. Every case runs
the real start.sh with a fake `nvidia-smi` against the local server of copied pages
(tests/provision/indexes) and checks the route, and that what the commands name exists in the
copied index: the llama-cpp-python wheel on its variant's page, the PyTorch CPU wheel on
PyTorch's CPU page, the CUDA library wheels on PyPI's pages, with their sizes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from provision.indexes import HttpIndex, parse_page
from provision.machine import Card as GpuCard
from provision.machine import Gpus, Machine
from provision.plan import make_plan
from provision.routes import PYPI_TORCH_CUDA_DEPS
from provision.settings import load
from provision.wheels import Target
from tests.provision.fake_machine import CLOSED, TAG, Card, indexes, plan
from tests.provision.index_server import IndexServer

GLIBC = os.confstr("CS_GNU_LIBC_VERSION") or ""


@pytest.fixture(autouse=True)
def _glibc_2_35() -> None:
    # The copied pages' current wheels are manylinux_2_35, and the planner checks them
    # against this machine's glibc: the cases below are written for 2.35 or newer.
    found = tuple(int(p) for p in GLIBC.split()[-1].split(".")[:2])
    assert found >= (2, 35), f"these cases need glibc 2.35 or newer; this machine has {GLIBC}"


DRIVERS = ["12.2", "12.4", "12.8", "12.9", "13.0", "13.2"]
# The newest variant each driver runs that llama-cpp-python's index publishes (none for
# 12.6-12.9: its CUDA 12 builds stop at 12.5).
LLAMA_VARIANT = {
    "12.2": "cu122",
    "12.4": "cu124",
    "12.8": "cu125",
    "12.9": "cu125",
    "13.0": "cu130",
    "13.2": "cu132",
}
# What `cuda-toolkit[cudart,cublas]==X.Y.*` resolves to (its copied METADATA's pins), and
# cuBLAS 12 for CTranslate2 where the rest is CUDA 13.
CUDA_FILES = {
    "cu122": [
        "cuda_toolkit-12.2.2-",
        "nvidia_cublas_cu12-12.2.5.6-",
        "nvidia_cuda_runtime_cu12-12.2.140-",
    ],
    "cu124": [
        "cuda_toolkit-12.4.1-",
        "nvidia_cublas_cu12-12.4.5.8-",
        "nvidia_cuda_runtime_cu12-12.4.127-",
    ],
    "cu125": [
        "cuda_toolkit-12.5.1-",
        "nvidia_cublas_cu12-12.5.2.13-",
        "nvidia_cuda_runtime_cu12-12.5.39-",
    ],
    "cu130": [
        "cuda_toolkit-13.0.3.0-",
        "nvidia_cublas-13.1.1.3-",
        "nvidia_cuda_nvrtc-13.0.88-",
        "nvidia_cuda_runtime-13.0.96-",
        "nvidia_cublas_cu12-12.9.3.13-",
    ],
    "cu132": [
        "cuda_toolkit-13.2.2-",
        "nvidia_cublas-13.4.1.3-",
        "nvidia_cuda_nvrtc-13.2.86-",
        "nvidia_cuda_runtime-13.2.86-",
        "nvidia_cublas_cu12-12.9.3.13-",
    ],
}
LLAMA_WHEEL = "llama_cpp_python-0.3.36-py3-none-manylinux_2_35_x86_64.whl"
TORCH_CPU = f"torch-2.13.0+cpu-{TAG}-{TAG}-manylinux_2_28_x86_64.whl"
CASES = [
    (cuda, nvcc, compiler)
    for cuda in DRIVERS
    for nvcc in (None, "path", "cuda")
    for compiler in (True, False)
]


def names(copied: Path, page: str) -> list[str]:
    """The file names a copied index page lists."""
    if page.startswith("pypi/"):
        return [f["filename"] for f in json.loads((copied / page).read_text())["files"]]
    return [x.name for x in parse_page((copied / page / "index.html").read_text(), "http://x/")]


def pypi_size(copied: Path, filename: str) -> int:
    """The size PyPI states for `filename` in the copied project page."""
    project = filename.split("-")[0].replace("_", "-")
    files = json.loads((copied / f"pypi/simple/{project}.json").read_text())["files"]
    return int(next(f["size"] for f in files if f["filename"] == filename))


@pytest.mark.parametrize(("cuda", "nvcc", "compiler"), CASES)
def test_every_driver_gets_a_route_that_exists_upstream(
    tmp_path: Path, index_url: str, copied: Path, cuda: str, nvcc: str | None, compiler: bool
) -> None:
    p = plan(
        tmp_path,
        Card(12288, 11800, cuda),
        nvcc=cuda if nvcc else None,
        nvcc_at=nvcc or "path",
        compiler=compiler,
        index=index_url,
    )
    llama, torch, libs = p["llama_cpp"], p["torch"], p["cuda_runtime"]
    commands = {c["step"]: c["command"] for c in p["commands"]}
    assert p["device"] == "cuda"
    assert (p["llm"]["size"], p["llm"]["quant"]) == ("9B", "Q4_K_M")  # sized for the card
    if nvcc and compiler:
        assert llama["route"] == "cuda-source"
        assert "CMAKE_ARGS=-DGGML_CUDA=on" in commands["llama-cpp-python"]
        off_path = nvcc == "cuda"
        assert bool(llama["cudacxx"]) is off_path and p["nvcc"]["on_path"] is not off_path
        if off_path:
            assert llama["cudacxx"] == str(tmp_path / f"usr/local/cuda-{cuda}/bin/nvcc")
            assert f"CUDACXX={llama['cudacxx']}" in commands["llama-cpp-python"]
        cublas12 = [] if cuda.startswith("12.") else ["nvidia-cublas-cu12==12.9.*"]
        assert libs["packages"] == cublas12  # a CUDA 12 toolkit has cuBLAS 12 itself
    else:
        variant = LLAMA_VARIANT[cuda]
        assert llama["route"] == "cuda-wheel" and llama["variant"] == variant
        index = f"{index_url}/llama-cpp-python/whl/{variant}"
        assert llama["wheel"] == LLAMA_WHEEL
        assert LLAMA_WHEEL in names(copied, f"llama-cpp-python/whl/{variant}/llama-cpp-python")
        assert commands["llama-cpp-python"].endswith(
            f"--only-binary=llama-cpp-python --extra-index-url {index} llama-cpp-python==0.3.36"
        )
        if nvcc:
            assert any("no C/C++ compiler" in m for m in p["messages"])
        major, minor = variant[2:4], variant[4]
        assert libs["packages"][0] == f"cuda-toolkit[cudart,cublas]=={major}.{minor}.*"
        files = [f["file"] for f in libs["files"]]
        assert len(files) == len(CUDA_FILES[variant])
        for prefix, file in zip(CUDA_FILES[variant], files, strict=True):
            assert file.startswith(prefix)
            assert file in names(
                copied, f"pypi/simple/{prefix.split('-')[0].replace('_', '-')}.json"
            )
        assert libs["bytes"] == sum(pypi_size(copied, file) for file in files)
        assert "pip install 'cuda-toolkit[cudart,cublas]==" in commands["CUDA libraries"]
    # PyTorch runs the embedder on the CPU: always its CPU build, from PyTorch's CPU index.
    assert (torch["route"], torch["wheel"]) == ("cpu", TORCH_CPU)
    assert TORCH_CPU in names(copied, "whl/cpu/torch")
    assert commands["PyTorch"].endswith(f"--index-url {index_url}/whl/cpu torch==2.13.0")
    assert commands["GPU check"] == ".venv/bin/python -m provision.cuda_check"


# The newest CUDA build of torch 2.13.0 each driver runs: PyTorch publishes cu126, cu130 and
# cu132 for it (no cu128: a 12.8 or 12.9 driver gets cu126).
TORCH_VARIANT = {
    "12.2": "cu126",
    "12.4": "cu126",
    "12.8": "cu126",
    "12.9": "cu126",
    "13.0": "cu130",
    "13.2": "cu132",
}


@pytest.mark.parametrize("cuda", DRIVERS)
def test_a_cuda_pytorch_comes_from_a_variant_that_publishes_the_version(
    tmp_path: Path, index_url: str, copied: Path, cuda: str
) -> None:
    p = plan(
        tmp_path, Card(24576, 24000, cuda), index=index_url, env={"ANNIE_GPU__TORCH_CUDA": "1"}
    )
    torch, variant = p["torch"], TORCH_VARIANT[cuda]
    assert (torch["route"], torch["variant"]) == ("cuda", variant)
    assert torch["wheel"] == f"torch-2.13.0+{variant}-{TAG}-{TAG}-manylinux_2_28_x86_64.whl"
    assert torch["wheel"] in names(copied, f"whl/{variant}/torch")
    assert torch["pip_args"] == ["--index-url", f"{index_url}/whl/{variant}"]
    compatible = cuda in ("12.2", "12.4")  # cu126 on an older 12.x driver
    assert any("minor-version compatibility" in m for m in p["messages"]) is compatible


@pytest.mark.parametrize(
    ("override", "variant"), [("cu126", "cu126"), ("cu126,cu130", "cu130"), ('["cu126"]', "cu126")]
)
def test_the_torch_variant_override_parses_in_every_form(
    tmp_path: Path, index_url: str, override: str, variant: str
) -> None:
    env = {"ANNIE_GPU__TORCH_CUDA": "true", "ANNIE_GPU__TORCH_VARIANTS": override}
    p = plan(tmp_path, Card(24576, 24000, "13.0"), index=index_url, env=env)
    assert (p["torch"]["route"], p["torch"]["variant"]) == ("cuda", variant)


def test_a_cuda_12_wheel_on_a_cuda_13_driver_shares_one_cublas(
    tmp_path: Path, index_url: str
) -> None:
    env = {"ANNIE_GPU__LLAMA_WHEEL_VARIANTS": "cu125"}
    p = plan(tmp_path, Card(12288, 11800, "13.0"), index=index_url, env=env)
    assert p["llama_cpp"]["variant"] == "cu125"
    assert p["cuda_runtime"]["packages"] == ["cuda-toolkit[cudart,cublas]==12.5.*"]


def test_a_card_too_old_for_cuda_13_gets_a_cuda_12_wheel(tmp_path: Path, index_url: str) -> None:
    p = plan(tmp_path, Card(8192, 7800, "13.0", capability="6.1"), index=index_url)
    assert (p["llama_cpp"]["route"], p["llama_cpp"]["variant"]) == ("cuda-wheel", "cu125")
    old = plan(tmp_path / "old", Card(8192, 7800, "12.4", capability="5.2"), index=index_url)
    assert old["llama_cpp"]["route"] == "cpu" and old["device"] == "cpu"
    assert any("compute capability 5.2" in m for m in old["messages"])


def _llama_note(p: dict[str, Any]) -> str:
    return next(m for m in p["messages"] if "no usable prebuilt wheel" in m)


def test_an_index_without_the_wanted_release_says_what_it_has(
    tmp_path: Path, index_url: str
) -> None:
    env = {"ANNIE_GPU__LLAMA_WHEEL_INDEX": f"{index_url}/no-0.3.36/llama-cpp-python/whl"}
    p = plan(tmp_path, Card(12288, 11800, "12.4"), index=index_url, env=env)
    assert p["llama_cpp"]["route"] == "cpu"
    note = _llama_note(p)
    assert (
        "the cu124, cu123, cu122, cu121 and cu125 pages list llama-cpp-python up to 0.3.35, "
        "none at 0.3.36 or newer; gpu.llama_wheel_min_version accepts an older release"
    ) in note
    # The LLM would run on the CPU: nothing is sized for the card, nothing big downloads.
    assert p["device"] == "cpu" and p["budget"] is None and p["disk"]["need_bytes"] == 0
    assert p["settings"] == {"ANNIE_MODELS__DEVICE": "cpu"}
    assert any("nothing is sized for the card" in m for m in p["messages"])
    blocked = plan(
        tmp_path / "cc", Card(12288, 11800, "12.4"), index=index_url, env=env, compiler=False
    )
    assert "no compiler" in blocked["llama_cpp"]["blocked"]


def test_nothing_reachable_builds_for_the_cpu_and_says_so(tmp_path: Path) -> None:
    p = plan(tmp_path, Card(12288, 11800, "12.8"), index=CLOSED)
    assert p["llama_cpp"]["route"] == "cpu" and p["device"] == "cpu"
    assert f"{CLOSED}/llama-cpp-python/whl could not be reached" in _llama_note(p)
    assert p["torch"]["route"] == "pypi" and p["torch"]["bytes"] is None


def test_where_only_pypi_answers_the_torch_download_is_sized_first(
    tmp_path: Path, index_url: str, copied: Path
) -> None:
    p = plan(tmp_path, None, index=index_url, env={"ANNIE_GPU__TORCH_INDEX": CLOSED})
    torch = p["torch"]
    wheel = f"torch-2.13.0-{TAG}-{TAG}-manylinux_2_28_x86_64.whl"
    assert (torch["route"], torch["wheel"], torch["pip_args"]) == ("pypi", wheel, [])
    assert torch["bytes"] == pypi_size(copied, wheel) + PYPI_TORCH_CUDA_DEPS
    note = next(m for m in p["messages"] if "PyTorch's CPU index" in m)
    assert "could not be reached" in note and "CUDA build" in note and "2.20 GB" in note


def test_a_cpu_wheel_in_pips_find_links_is_taken_without_a_download(
    tmp_path: Path, index_url: str
) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / TORCH_CPU).write_bytes(b"a stand-in")
    p = plan(tmp_path, None, index=index_url, env={"PIP_FIND_LINKS": str(wheels)})
    torch = p["torch"]
    assert (torch["route"], torch["wheel"], torch["bytes"], torch["pip_args"]) == (
        "cpu",
        TORCH_CPU,
        0,
        [],
    )
    assert p["commands"][0]["command"] == ".venv/bin/python -m pip install torch==2.13.0"


def test_no_gpu_installs_the_cpu_builds_and_no_cuda_libraries(
    tmp_path: Path, index_url: str
) -> None:
    p = plan(tmp_path, None, index=index_url)
    assert p["device"] == "cpu" and p["llama_cpp"]["route"] == "cpu"
    assert p["cuda_runtime"]["packages"] == []
    assert [c["step"] for c in p["commands"]] == ["PyTorch", "llama-cpp-python", "models"]
    # The source build fetches PyPI's newest source archive; its size is PyPI's.
    assert "llama_cpp_python-0.3.36.tar.gz (77 MB)" in p["llama_cpp"]["label"]
    bare = plan(tmp_path / "bare", None, index=index_url, compiler=False)
    assert "build-essential" in bare["llama_cpp"]["blocked"]


def test_the_text_plan_lists_the_commands_with_their_download_sizes(
    tmp_path: Path, index_url: str
) -> None:
    text = plan(tmp_path, Card(12288, 11800, "13.2"), index=index_url, text=True)
    assert "CUDA 13.2, compute capability 8.9" in text
    assert "Commands ./start.sh will run" in text
    assert (
        f"--extra-index-url {index_url}/llama-cpp-python/whl/cu132 llama-cpp-python==0.3.36" in text
    )
    assert "nvidia_cublas-13.4.1.3-py3-none-manylinux_2_27_x86_64.whl (405 MB)" in text
    assert "nvidia_cublas_cu12-12.9.3.13-py3-none-manylinux_2_27_x86_64.whl (581 MB)" in text
    assert "models: 6.16 GB" in text


def test_an_old_glibc_is_named_and_no_wheel_is_taken(tmp_path: Path, index_url: str) -> None:
    # Ubuntu 20.04: glibc 2.31, CPython 3.8's successor 3.10; the current wheels need 2.35.
    settings = load({"ANNIE_HOME": str(tmp_path), **indexes(index_url)})
    card = GpuCard("NVIDIA GeForce RTX 3060", 12288, 11800, "550.144.03", (8, 6))
    old = Machine(
        Gpus((card,), (12, 4), "ok"),
        compiler="/usr/bin/c++",
        target=Target((3, 10), (2, 31)),
        mem_available=32 * 2**30,
    )
    p = make_plan(old, settings, HttpIndex(2.0))
    assert p["llama_cpp"]["route"] == "cpu" and p["device"] == "cpu"
    assert (
        "the cu124, cu123, cu122, cu121 and cu125 pages list llama-cpp-python 0.3.36, but it "
        "needs glibc 2.35 and this machine has 2.31"
    ) in _llama_note(p)


def test_a_second_run_reads_no_sizes_for_what_is_installed(
    tmp_path: Path, indexes: IndexServer
) -> None:
    site = tmp_path / "venv" / "lib" / f"python{TAG[2]}.{TAG[3:]}" / "site-packages"
    for dist in ("torch-2.13.0+cpu", "llama_cpp_python-0.3.36", "cuda_toolkit-12.4.1"):
        (site / f"{dist}.dist-info").mkdir(parents=True)
    (site / "llama_cpp" / "lib").mkdir(parents=True)
    (site / "llama_cpp" / "lib" / "libggml-cuda.so").write_bytes(b"")
    seen = len(indexes.requests)
    p = plan(tmp_path, Card(12288, 11800, "12.4"), index=indexes.url, venv=tmp_path / "venv")
    assert p["llama_cpp"]["installed"] == "0.3.36+cuda" and p["llama_cpp"]["bytes"] is None
    assert p["cuda_runtime"]["bytes"] == 0
    asked = indexes.requests[seen:]
    assert not [path for method, path in asked if method == "HEAD" or "/pypi/" in path]
    assert not any("installed without CUDA" in m for m in p["messages"])
