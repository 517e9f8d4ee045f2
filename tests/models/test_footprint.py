"""models.footprint against real llama.cpp: the generated qwen35 hybrid and the shipped SmolLM2.

The estimate must equal what llama.cpp serializes (`llama_state_get_size`, byte for byte) at
several fills and windows, and what it allocates (the KV and recurrent sizes its load log
prints, to the log's 0.01 MiB).
"""

from __future__ import annotations

import ctypes
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import gguf
import llama_cpp
import pytest

from config import Settings
from models import resolve
from models.footprint import (
    QWEN35_9B,
    ModelShape,
    estimate,
    qwen35_layers,
    read_hparams,
    state_bytes,
)
from models.llama_log import quiet_stderr
from testkit.qwen35 import write_qwen35_gguf

MIB = 1024 * 1024


@dataclass
class Loaded:
    llama: llama_cpp.Llama
    n_ctx: int  # as requested; llama.cpp rounds it up to 256 cells
    log: str


@pytest.fixture(scope="module")
def smollm2_path(model_settings: Settings) -> Path:
    return resolve("llm", model_settings).path


@pytest.fixture(scope="module")
def qwen35_wide_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight layers (two of them attention) and wider heads, so the KV log shows real MiB."""
    folder = tmp_path_factory.mktemp("qwen35-wide")
    return write_qwen35_gguf(folder / "qwen35-wide.gguf", n_layer=8, n_embd=256)


def _load(path: Path, n_ctx: int) -> Loaded:
    """Load with llama.cpp's log sent to a list (what it allocated is only printed there)."""
    lines: list[str] = []

    @llama_cpp.llama_log_callback
    def collect(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        lines.append(text.decode("utf-8", errors="replace"))

    llama_cpp.llama_log_set(collect, ctypes.c_void_p(0))
    try:
        with quiet_stderr():
            llama = llama_cpp.Llama(str(path), n_ctx=n_ctx, n_batch=512, verbose=False)
    finally:
        llama_cpp.llama_log_set(llama_cpp._logger.llama_log_callback, ctypes.c_void_p(0))
    return Loaded(llama, n_ctx, "".join(lines))


@pytest.fixture()
def loaded(request: pytest.FixtureRequest) -> Iterator[Loaded]:
    fixture, n_ctx = request.param
    out = _load(request.getfixturevalue(fixture), n_ctx)
    yield out
    out.llama.close()


def _fill(llama: llama_cpp.Llama, n_tokens: int) -> int:
    """Evaluate `n_tokens` ordinary tokens from an empty memory; return the state size."""
    llama.reset()
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(llama.ctx), True)
    ids = [32 + i % 90 for i in range(n_tokens)]  # printable bytes: tokens in any vocabulary
    for start in range(0, n_tokens, 512):
        llama.eval(ids[start : start + 512])
    size = int(llama_cpp.llama_state_get_size(llama.ctx))
    buf = (ctypes.c_uint8 * size)()
    assert llama_cpp.llama_state_get_data(llama.ctx, buf, size) == size
    return size


@functools.cache
def _shape(path: str) -> ModelShape:
    return read_hparams(path)  # reading SmolLM2's 49k-token vocabulary takes about 2 s


def _logged_mib(log: str, module: str) -> float:
    found = re.search(rf"{module}: size =\s*([0-9.]+) MiB", log)
    assert found, f"no '{module}: size' line in llama.cpp's load log"
    return float(found.group(1))


CASES = [
    ("qwen35_path", 512),
    ("qwen35_path", 1000),
    ("qwen35_wide_path", 700),
    ("smollm2_path", 512),
]


@pytest.mark.parametrize("loaded", CASES, indirect=True, ids=[f"{f}-{n}" for f, n in CASES])
def test_state_size_is_exactly_what_llama_cpp_serializes(loaded: Loaded) -> None:
    llama = loaded.llama
    shape = _shape(llama.model_path)
    n_ctx = loaded.n_ctx
    assert _fill(llama, 0) == state_bytes(shape, 0)
    for n_tokens in (1, 137, n_ctx - 1):
        assert _fill(llama, n_tokens) == state_bytes(shape, n_tokens), n_tokens


@pytest.mark.parametrize(
    "loaded",
    [("qwen35_path", 512), ("smollm2_path", 512)],
    indirect=True,
    ids=["qwen35", "smollm2"],
)
def test_checkpoint_estimate_at_full_and_half_window(loaded: Loaded) -> None:
    llama = loaded.llama
    shape = _shape(llama.model_path)
    fp = estimate(shape, 512, checkpoints=3)
    assert fp.logits_bytes == llama.n_vocab() * 4
    assert fp.checkpoint_bytes == _fill(llama, 512) + fp.logits_bytes
    assert fp.checkpoint_half_bytes == _fill(llama, 256) + fp.logits_bytes
    assert fp.checkpoints_bytes == 3 * fp.checkpoint_bytes


@pytest.mark.parametrize(
    "loaded",
    [("qwen35_wide_path", 4096), ("qwen35_path", 1000), ("smollm2_path", 4096)],
    indirect=True,
    ids=["qwen35-wide", "qwen35", "smollm2"],
)
def test_allocation_matches_llama_cpp_load_log(loaded: Loaded) -> None:
    shape = _shape(loaded.llama.model_path)
    fp = estimate(shape, loaded.n_ctx)
    assert fp.cells == loaded.llama.n_ctx()
    # llama.cpp prints MiB with two decimals.
    assert _logged_mib(loaded.log, "llama_kv_cache") == pytest.approx(fp.kv_bytes / MIB, abs=6e-3)
    if shape.recurrent_layers:
        logged = _logged_mib(loaded.log, "llama_memory_recurrent")
        assert logged == pytest.approx(fp.recurrent_bytes / MIB, abs=6e-3)
    else:
        assert "llama_memory_recurrent: size" not in loaded.log


def test_reads_the_generated_qwen35_as_a_hybrid(qwen35_path: Path) -> None:
    shape = read_hparams(qwen35_path)
    assert shape.architecture == "qwen35"
    assert shape.recurrent == (True, True, True, False)
    assert shape.attention_layers == [3]
    assert shape.hybrid and shape.mrope
    assert shape.dialect == "xml"
    assert (shape.n_embd, shape.n_head, shape.n_head_kv) == (64, 4, (2, 2, 2, 2))
    assert (shape.key_length, shape.value_length) == (16, 16)
    # testkit's Gated DeltaNet: 2 key heads, 4 value heads of 16, a kernel of 4.
    assert (shape.ssm_d_conv, shape.ssm_d_state, shape.ssm_n_group) == (4, 16, 2)
    assert (shape.ssm_d_inner, shape.ssm_dt_rank) == (64, 4)
    assert shape.conv_floats == 3 * (64 + 2 * 2 * 16)
    assert shape.ssm_floats == 4 * 16 * 16


def test_reads_smollm2_as_a_plain_transformer(smollm2_path: Path) -> None:
    shape = _shape(str(smollm2_path))
    assert shape.architecture == "llama"
    assert not shape.hybrid and not shape.recurrent_layers
    assert len(shape.attention_layers) == shape.n_layer == 30
    assert shape.dialect == "json"
    fp = estimate(shape, 4096)
    assert fp.recurrent_bytes == 0
    assert fp.kv_bytes == 4096 * 30 * 2 * 3 * 64 * 2


def test_qwen35_9b_from_its_published_config() -> None:
    assert QWEN35_9B.attention_layers == [3, 7, 11, 15, 19, 23, 27, 31]
    assert len(QWEN35_9B.recurrent_layers) == 24
    fp = estimate(QWEN35_9B, 32768, checkpoints=4)
    # 8 attention layers x (K + V) x 4 KV heads x 256 x f16, per token.
    assert fp.kv_bytes_per_token == 8 * 2 * 4 * 256 * 2
    assert fp.kv_bytes == 1024 * MIB
    # Per DeltaNet layer: conv 3 x (4096 + 2 x 16 x 128) floats, state 32 heads x 128 x 128.
    assert fp.recurrent_bytes == 24 * (3 * 8192 + 32 * 128 * 128) * 4
    assert fp.checkpoint_bytes > fp.kv_bytes + fp.recurrent_bytes
    assert fp.checkpoints_bytes == 4 * fp.checkpoint_bytes
    assert fp.hybrid and fp.dialect == "xml"


def test_a_quantized_kv_cache_shrinks_only_the_attention_part() -> None:
    f16 = estimate(QWEN35_9B, 32768)
    q8 = estimate(QWEN35_9B, 32768, kv_type_bytes=34 / 32)  # q8_0: 34 bytes per 32 values
    assert q8.kv_bytes < f16.kv_bytes
    assert q8.recurrent_bytes == f16.recurrent_bytes


def _header_only(path: Path, arch: str, n_layer: int, **extra: object) -> Path:
    """A GGUF with metadata and no tensors: enough for `read_hparams`, not for llama.cpp."""
    writer = gguf.GGUFWriter(path, arch=arch)
    writer.add_block_count(n_layer)
    writer.add_embedding_length(64)
    writer.add_head_count(4)
    writer.add_token_list(["a", "b", "c"])
    for key, value in extra.items():
        if isinstance(value, list):
            writer.add_array(f"{arch}.{key}", value)
        else:
            writer.add_uint32(f"{arch}.{key}", int(value))  # type: ignore[call-overload]
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_per_layer_head_count_array_marks_recurrent_layers(tmp_path: Path) -> None:
    # Jamba-style hybrids mark their recurrent layers with head_count_kv 0.
    path = _header_only(
        tmp_path / "j.gguf", "jamba", 4, **{"attention.head_count_kv": [0, 2, 0, 0]}
    )
    shape = read_hparams(path)
    assert shape.recurrent == (True, False, True, True)
    assert shape.n_head_kv == (0, 2, 0, 0)
    assert shape.key_length == 16 and shape.n_vocab == 3
    assert shape.kv_bytes_per_token() == 2 * 2 * 16 * 2
    assert shape.dialect == "json"


def test_qwen35_recurrent_layers_array_and_mtp_layers(tmp_path: Path) -> None:
    # An explicit array wins over the interval; a trailing MTP layer is not in the trunk.
    path = _header_only(
        tmp_path / "q.gguf",
        "qwen35",
        5,
        nextn_predict_layers=1,
        full_attention_interval=4,
        **{"attention.recurrent_layers": [True, False, True, True, False]},
    )
    shape = read_hparams(path)
    assert shape.n_layer == 4
    assert shape.recurrent == (True, False, True, True)
    default = _header_only(tmp_path / "d.gguf", "qwen35", 8)
    assert read_hparams(default).recurrent == qwen35_layers(8, 4)
    assert qwen35_layers(8, 4) == (True, True, True, False) * 2
