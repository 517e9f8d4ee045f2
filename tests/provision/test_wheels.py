"""Wheel tags read as pip reads them, the CUDA variants asked for, and list overrides parsed.

The wheel names are real ones from the copied indexes (tests/provision/indexes): what the
planner must take and refuse on a given Python and glibc.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from config import ConfigError, load_settings
from provision.indexes import cuda_variants, parse_page, size_text
from provision.settings import load, parse_list
from provision.wheels import Target, choose, installable, parse, why_not

PY311 = Target(python=(3, 11), glibc=(2, 36))
OLD_GLIBC = Target(python=(3, 11), glibc=(2, 31))
LLAMA_NOW = "llama_cpp_python-0.3.34-py3-none-manylinux_2_35_x86_64.whl"


@pytest.mark.parametrize(
    ("name", "target", "ok"),
    [
        (LLAMA_NOW, PY311, True),  # py3-none: any CPython 3, glibc 2.35 or newer
        (LLAMA_NOW, Target((3, 13), (2, 35)), True),
        (LLAMA_NOW, OLD_GLIBC, False),  # Ubuntu 20.04's glibc 2.31
        ("llama_cpp_python-0.3.24-py3-none-linux_x86_64.whl", OLD_GLIBC, True),
        ("llama_cpp_python-0.3.34-py3-none-win_amd64.whl", PY311, False),
        ("llama_cpp_python-0.3.4-cp311-cp311-linux_x86_64.whl", PY311, True),
        ("llama_cpp_python-0.3.4-cp312-cp312-linux_x86_64.whl", PY311, False),
        ("torch-2.13.0+cu126-cp311-cp311-manylinux_2_28_x86_64.whl", PY311, True),
        ("torch-2.13.0+cu126-cp311-cp311-manylinux_2_28_aarch64.whl", PY311, False),
        (
            "torch-2.13.0+cu126-cp314-cp314t-manylinux_2_28_x86_64.whl",
            Target((3, 14), (2, 36)),
            False,
        ),
        (
            "torch-2.13.0+cu126-cp314-cp314t-manylinux_2_28_x86_64.whl",
            Target((3, 14), (2, 36), free_threaded=True),
            True,
        ),
        (
            "cuda_bindings-13.5.0-cp311-abi3-manylinux_2_28_x86_64.whl",
            Target((3, 12), (2, 36)),
            True,
        ),
        ("cuda_bindings-13.5.0-cp312-abi3-manylinux_2_28_x86_64.whl", PY311, False),
        ("nvidia_nvtx-13.0.85-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl", PY311, True),
        (
            "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
            Target((3, 11), (2, 17)),
            True,
        ),
        ("nvidia_cublas-13.1.1.3-py3-none-manylinux_2_27_x86_64.whl", Target((3, 11), None), False),
        ("cuda_toolkit-12.4.1-py2.py3-none-any.whl", Target((3, 11), None), True),
    ],
)
def test_a_wheel_installs_where_pip_would_take_it(name: str, target: Target, ok: bool) -> None:
    wheel = parse(name)
    assert wheel is not None
    assert installable(wheel, target) is ok


def test_why_a_wheel_does_not_suit_is_said_in_words() -> None:
    wheel = parse(LLAMA_NOW)
    assert wheel is not None
    assert why_not(wheel, OLD_GLIBC) == "it needs glibc 2.35 and this machine has 2.31"
    old = parse("llama_cpp_python-0.3.4-cp312-cp312-linux_x86_64.whl")
    assert old is not None and why_not(old, PY311) == "it is for cp312-cp312"


def test_the_newest_installable_wheel_at_or_above_the_minimum(copied: Path) -> None:
    page = copied / "llama-cpp-python/whl/cu124/llama-cpp-python/index.html"
    names = [x.name for x in parse_page(page.read_text(), "https://abetlen.github.io/")]
    assert LLAMA_NOW in names and "llama_cpp_python-0.3.4-cp311-cp311-linux_x86_64.whl" in names
    best = choose(names, "llama-cpp-python", PY311, minimum="0.3.36")
    assert (
        best is not None
        and best.filename == "llama_cpp_python-0.3.36-py3-none-manylinux_2_35_x86_64.whl"
    )
    # On glibc 2.31 the newest that installs is 0.3.28's unrepaired linux_x86_64 wheel.
    older = choose(names, "llama-cpp-python", OLD_GLIBC, minimum="0.3.20")
    assert older is not None and older.version == "0.3.28"
    assert choose(names, "llama-cpp-python", OLD_GLIBC, minimum="0.3.36") is None


def test_torch_wheels_are_told_apart_by_their_local_label(copied: Path) -> None:
    page = (copied / "whl/cu126/torch/index.html").read_text()
    listed = parse_page(page, "https://download.pytorch.org/whl/cu126/torch/")
    names = [x.name for x in listed]
    best = choose(names, "torch", PY311, exact="2.13.0", local="cu126")
    assert (
        best is not None
        and best.filename == "torch-2.13.0+cu126-cp311-cp311-manylinux_2_28_x86_64.whl"
    )
    assert choose(names, "torch", PY311, exact="2.13.0", local="cu128") is None
    # Root-relative links resolve against the host; '+' stays written %2B in the URL.
    url = next(x.url for x in listed if x.name == best.filename)
    quoted = best.filename.replace("+", "%2B")
    assert url == f"https://download.pytorch.org/whl/cu126/{quoted}"


@pytest.mark.parametrize(
    ("driver", "capability", "first"),
    [
        ((12, 2), (8, 6), ["cu122", "cu121", "cu120"]),
        ((12, 8), (8, 9), ["cu128", "cu127", "cu126", "cu125"]),
        ((13, 0), (8, 9), ["cu130", "cu129", "cu128"]),
        ((13, 2), (12, 0), ["cu132", "cu131", "cu130", "cu129"]),
        ((13, 0), (6, 1), ["cu129", "cu128"]),  # a GTX 10 card: CUDA 13 builds have no code for it
    ],
)
def test_variants_are_asked_for_newest_first_among_those_the_driver_runs(
    driver: tuple[int, int], capability: tuple[int, int], first: list[str]
) -> None:
    order = [v for v, _ in cuda_variants(driver, capability, [])]
    assert order[: len(first)] == first
    newer = [v for v, why in cuda_variants(driver, capability, []) if "minor-version" in why]
    assert all(order.index(v) > order.index(f"cu{driver[0]}0") for v in newer if driver[0] == 12)


def test_a_variant_list_in_config_restricts_the_candidates() -> None:
    order = cuda_variants((12, 4), None, ["cu126", "cu121"])
    assert order == [
        ("cu121", "supported by the driver"),
        ("cu126", "newer than the driver: runs by CUDA's minor-version compatibility"),
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("cu126", ["cu126"]),
        ("cu126,cu130", ["cu126", "cu130"]),
        ("cu126, cu130", ["cu126", "cu130"]),
        ('["cu126"]', ["cu126"]),
        ("['cu126', 'cu130']", ["cu126", "cu130"]),
        ("", []),
    ],
)
def test_every_list_override_parses(tmp_path: Path, text: str, value: list[str]) -> None:
    assert parse_list(text) == value
    env = {"ANNIE_HOME": str(tmp_path), "ANNIE_GPU__TORCH_VARIANTS": text}
    assert load(env).get("gpu.torch_variants") == value
    assert load_settings(env).gpu.torch_variants == value  # the runtime reads it alike


def test_a_list_override_that_is_not_a_list_is_named(tmp_path: Path) -> None:
    env = {"ANNIE_HOME": str(tmp_path), "ANNIE_GPU__NVCC_DIRS": "[not, toml"}
    with pytest.raises(ValueError, match="ANNIE_GPU__NVCC_DIRS"):
        load(env)
    with pytest.raises(ConfigError, match="nvcc_dirs"):
        load_settings(env)


def test_sizes_read_as_pip_shows_them() -> None:
    assert [size_text(n) for n in (None, 0, 2244, 90_215_200, 2_203_644_265)] == [
        "size unknown",
        "no download",
        "2 kB",
        "90 MB",
        "2.20 GB",
    ]
