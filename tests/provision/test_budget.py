"""The VRAM budget against Qwen3.5-9B's published hyperparameters, and the planner's choices.

The KV and recurrent lines are computed here from config.json's numbers by hand, independently
of `provision.footprint`, so a wrong formula there cannot agree with itself.
"""

from __future__ import annotations

from pathlib import Path

from config import Settings
from provision.budget import GIB, MIB, Estimates, checkpoints_that_fit, vram_budget
from provision.footprint import QWEN35_9B, estimate
from provision.indexes import Offline
from provision.machine import Card, Gpus, Machine, Nvcc
from provision.plan import choose_llm, make_plan
from provision.settings import DEFAULT_TOML, load

# Qwen3.5-9B config.json: 32 layers, full attention every 4th, 4 KV heads of 256; Gated
# DeltaNet with 16 key heads and 32 value heads of 128, conv kernel 4.
LAYERS, INTERVAL, KV_HEADS, HEAD_DIM = 32, 4, 4, 256
K_HEADS, V_HEADS, LIN_DIM, CONV = 16, 32, 128, 4
Q4_K_M = 5_680_522_464  # unsloth/Qwen3.5-9B-GGUF, Qwen3.5-9B-Q4_K_M.gguf


def gpu_box(card: Card, mem: int, disk: int | None = None) -> Machine:
    """A CUDA 12.4 box with the toolkit and a compiler: llama.cpp is built for the card from
    source, so the LLM runs on it without any index being read."""
    nvcc = Nvcc("/usr/local/cuda/bin/nvcc", (12, 4))
    gpus = Gpus((card,), (12, 4), "ok")
    return Machine(gpus, nvcc, "/usr/bin/c++", mem_available=mem, disk_free=disk)


def test_qwen35_9b_kv_and_recurrent_state_from_the_published_hyperparameters() -> None:
    attention = LAYERS // INTERVAL
    kv_per_token = attention * 2 * KV_HEADS * HEAD_DIM * 2  # K and V rows, f16
    assert kv_per_token == 32 * 1024
    conv = (CONV - 1) * (V_HEADS * LIN_DIM + 2 * K_HEADS * LIN_DIM)  # q, k and v channels
    ssm = LIN_DIM * V_HEADS * LIN_DIM  # per value head a key-dim x value-dim matrix
    recurrent = (LAYERS - attention) * (conv + ssm) * 4
    assert recurrent == 52_690_944  # 50.25 MiB

    b = vram_budget(QWEN35_9B, Q4_K_M, 32768, 4, free=12 * GIB, host_available=32 * GIB)
    assert b.kv == 32768 * kv_per_token == GIB
    assert b.recurrent == recurrent
    # Compute buffers: the stated base plus one 512-token batch of f32 scores for 16 heads.
    assert b.compute == 512 * MIB + 32768 * 512 * 16 * 4
    assert (b.whisper, b.headroom) == (768 * MIB, 512 * MIB)
    assert b.on_card == Q4_K_M + GIB + recurrent + 512 * MIB + GIB + 768 * MIB + 512 * MIB
    assert round(b.on_card / GIB, 2) == 9.09  # "about 10 GB free" is what the default needs
    assert b.fits and b.host_fits
    # Four checkpoints of a full window, in host memory, not on the card.
    full = estimate(QWEN35_9B, 32768).checkpoint_bytes
    assert b.checkpoints_bytes == 4 * full and 1.0 * GIB < full < 1.1 * GIB


def test_a_card_below_the_default_budget_does_not_fit() -> None:
    b = vram_budget(QWEN35_9B, Q4_K_M, 32768, 4, free=9 * GIB, host_available=None)
    assert not b.fits
    half = vram_budget(QWEN35_9B, Q4_K_M, 16384, 4, free=9 * GIB, host_available=None)
    assert half.fits and half.kv == GIB // 2


def test_checkpoints_shrink_to_the_host_memory_left_but_one_is_always_kept() -> None:
    est = Estimates(host_reserve=4 * GIB)
    roomy = vram_budget(QWEN35_9B, Q4_K_M, 32768, 4, None, 16 * GIB, est)
    assert checkpoints_that_fit(roomy, 4) == 4
    tight = vram_budget(QWEN35_9B, Q4_K_M, 32768, 4, None, 6 * GIB, est)
    assert not tight.host_fits
    assert checkpoints_that_fit(tight, 4) == 1
    none = vram_budget(QWEN35_9B, Q4_K_M, 32768, 4, None, 2 * GIB, est)
    assert checkpoints_that_fit(none, 4) == 1


def test_the_planner_reads_the_same_defaults_as_the_runtime(tmp_path: Path) -> None:
    layered = load({"ANNIE_HOME": str(tmp_path)})
    defaults = Settings().model_dump()
    assert layered.get("gpu") == defaults["gpu"]
    assert layered.get("context.window") == defaults["context"]["window"]
    assert layered.explicit == frozenset()
    env = load({"ANNIE_HOME": str(tmp_path), "ANNIE_CONTEXT__WINDOW": "4096"})
    assert env.get("context.window") == 4096 and env.explicit == {"context.window"}
    assert DEFAULT_TOML.is_file()


def test_host_memory_lowers_the_checkpoints_and_exports_them(tmp_path: Path) -> None:
    s = load({"ANNIE_HOME": str(tmp_path)})
    card = Card("NVIDIA Test", 12288, 11800, "550")
    machine = gpu_box(card, 6 * GIB, 10**12)
    plan = make_plan(machine, s, Offline())
    assert plan["llm"]["checkpoints"] == 1
    assert plan["settings"]["ANNIE_MODELS__LLM_CHECKPOINTS"] == "1"
    assert plan["budget"]["checkpoints"] == 1
    assert any("1 turn checkpoints, not 4" in m for m in plan["messages"])


def test_too_little_disk_is_said_before_anything_downloads(tmp_path: Path) -> None:
    s = load({"ANNIE_HOME": str(tmp_path)})
    card = Card("NVIDIA Test", 12288, 11800, "550")
    machine = gpu_box(card, 32 * GIB, 10**9)
    plan = make_plan(machine, s, Offline())
    assert plan["disk"]["ok"] is False
    assert plan["disk"]["need_bytes"] >= Q4_K_M
    assert any("free some space" in m for m in plan["messages"])


def test_a_model_already_in_annie_home_needs_no_download(tmp_path: Path) -> None:
    s = load({"ANNIE_HOME": str(tmp_path)})
    card = Card("NVIDIA Test", 12288, 11800, "550")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "Qwen3.5-9B-Q4_K_M.gguf").write_bytes(b"GGUF")
    machine = gpu_box(card, 32 * GIB)
    llm = choose_llm(machine, s, card)
    assert llm is not None and llm["file"] == "Qwen3.5-9B-Q4_K_M.gguf"
    plan = make_plan(machine, s, Offline())
    assert plan["models"][0]["source"] == "present"
