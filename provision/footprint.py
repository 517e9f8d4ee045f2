"""What a chat model costs in memory: KV cache, recurrent state and saved turn checkpoints.

Pure functions over a `ModelShape`, with the standard library only, so the set-up planner can
use them before any package is installed (`models.footprint` reads the shape from a GGUF header
and re-exports these). The formulas follow the llama.cpp that llama-cpp-python 0.3.36 vendors:

- **KV cache** (`llama-kv-cache.cpp`): attention layers only; per cell and layer a K row of
  `n_head_kv * key_length` and a V row of `n_head_kv * value_length` elements (f16 unless
  `type_k`/`type_v` say otherwise). Cells are the window rounded up to 256.
- **Recurrent state** (`llama-memory-recurrent.cpp`): recurrent layers only, one row per
  sequence, always F32. The conv row is `n_embd_r() = (d_conv - 1) * (d_inner + 2 * n_group *
  d_state)` and the SSM row `n_embd_s() = d_state * d_inner` (`llama-hparams.cpp`; the
  Mamba-style branch, which Qwen3-Next and Qwen3.5 use; RWKV, LFM2 and Kimi rows differ and
  are not modelled here).
- **Which layers recur** (`models/qwen35.cpp` and the other loaders): the
  `attention.recurrent_layers` array when present; for qwen3next/qwen35/qwen35moe otherwise
  every layer but each `full_attention_interval`-th (default 4); every layer for mamba; and
  for the other hybrids the layers whose `head_count_kv` entry is 0. MTP (nextn) layers are
  outside the trunk and get no memory in the main context.
- **A checkpoint** is what `llama_state_get_size` serializes (`llama_context::state_write_data`):
  the architecture name, then the used KV cells (position, sequence ids, M-RoPE's 12-byte cell
  extension for the qwen VL/3.5 family, then the K and V rows of each attention layer with a
  12-byte header each), then the recurrent cell and its rows. This llama.cpp writes no logits
  or embeddings into the state, so Annie's adapter keeps the last token's logits beside it
  (`n_vocab` float32); `Footprint.checkpoint_bytes` includes them.

`QWEN35_9B` holds Qwen3.5-9B's published hyperparameters (its config.json): hidden_size 4096,
num_hidden_layers 32, full_attention_interval 4, num_attention_heads 16, num_key_value_heads 4,
head_dim 256, linear_num_key_heads 16, linear_num_value_heads 32, linear_key_head_dim 128,
linear_value_head_dim 128, linear_conv_kernel_dim 4, vocab_size 248320. llama.cpp's converter
(`conversion/qwen.py`) maps them to ssm.conv_kernel = 4, ssm.state_size = linear_key_head_dim =
128, ssm.group_count = linear_num_key_heads = 16, ssm.time_step_rank = linear_num_value_heads =
32 and ssm.inner_size = linear_value_head_dim * linear_num_value_heads = 4096; the loader reads
the per-head key and value dims both as ssm.state_size.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

# The same literal as `models.base.ToolDialect`; this package may not import the runtime.
Dialect = Literal["json", "xml"]

F32 = 4
F16 = 2
# llama.cpp rounds the context up to a multiple of 256 cells (llama-context.cpp).
CTX_PAD = 256
# Architectures whose rope type is M-RoPE/IMROPE: their KV cells carry a 12-byte extension
# (`llama_kv_cell_ext`) in the saved state (`llama_model_rope_type`, llama-model.cpp).
MROPE_ARCHES = frozenset({"qwen2vl", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe"})
# Hybrids whose loader marks layers by `full_attention_interval` when no explicit array is set.
INTERVAL_ARCHES = frozenset({"qwen3next", "qwen35", "qwen35moe", "minimax-01"})
RECURRENT_ARCHES = frozenset({"mamba", "mamba2"})


@dataclass(frozen=True)
class ModelShape:
    """The hyperparameters that decide a model's memory; per-layer tuples cover the trunk."""

    architecture: str
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: tuple[int, ...]
    key_length: int
    value_length: int
    recurrent: tuple[bool, ...]
    n_vocab: int
    ssm_d_conv: int = 0
    ssm_d_state: int = 0
    ssm_d_inner: int = 0
    ssm_n_group: int = 0
    ssm_dt_rank: int = 0
    dialect: Dialect = "json"

    @property
    def attention_layers(self) -> list[int]:
        return [i for i, r in enumerate(self.recurrent) if not r]

    @property
    def recurrent_layers(self) -> list[int]:
        return [i for i, r in enumerate(self.recurrent) if r]

    @property
    def hybrid(self) -> bool:
        return bool(self.attention_layers) and bool(self.recurrent_layers)

    @property
    def mrope(self) -> bool:
        return self.architecture in MROPE_ARCHES

    @property
    def conv_floats(self) -> int:
        """Floats in one layer's conv state: `n_embd_r()`; the oldest column is not kept."""
        channels = self.ssm_d_inner + 2 * self.ssm_n_group * self.ssm_d_state
        return max(0, self.ssm_d_conv - 1) * channels

    @property
    def ssm_floats(self) -> int:
        """Floats in one layer's SSM state: `n_embd_s()` (value heads x key dim x value dim)."""
        return self.ssm_d_state * self.ssm_d_inner

    def kv_bytes_per_token(self, kv_type_bytes: float = F16) -> int:
        """K and V bytes one token takes over all attention layers."""
        per = 0
        for il in self.attention_layers:
            per += _row(self.n_head_kv[il] * self.key_length, kv_type_bytes)
            per += _row(self.n_head_kv[il] * self.value_length, kv_type_bytes)
        return per

    def recurrent_bytes_per_seq(self) -> int:
        """Conv plus SSM state of one sequence over all recurrent layers (F32)."""
        return len(self.recurrent_layers) * (self.conv_floats + self.ssm_floats) * F32


def _row(n: int, type_bytes: float) -> int:
    return math.ceil(n * type_bytes)


def qwen35_layers(n_layer: int, interval: int = 4) -> tuple[bool, ...]:
    """Qwen3.5's default pattern: every `interval`-th layer is full attention."""
    return tuple((i + 1) % interval != 0 for i in range(n_layer))


QWEN35_9B = ModelShape(
    architecture="qwen35",
    n_layer=32,
    n_embd=4096,
    n_head=16,
    n_head_kv=(4,) * 32,
    key_length=256,
    value_length=256,
    recurrent=qwen35_layers(32, 4),
    n_vocab=248320,
    ssm_d_conv=4,
    ssm_d_state=128,
    ssm_d_inner=128 * 32,
    ssm_n_group=16,
    ssm_dt_rank=32,
    dialect="xml",
)


# Qwen3.5-4B's model card: hidden 2560, 32 layers with full attention every 4th, 16 query and 4
# KV heads of 256, Gated DeltaNet with 16 key and 32 value heads, vocabulary 248320. The DeltaNet
# head dims (128) are taken to be the 9B's: the card does not state them. Its KV cache, 32 KiB per
# token (1 GiB at 32k), matches what published catalogs list for the 4B GGUF.
QWEN35_4B = replace(QWEN35_9B, n_embd=2560)

# The Qwen3.5 sizes the set-up table can name, by their size label.
QWEN35_SHAPES: dict[str, ModelShape] = {"9B": QWEN35_9B, "4B": QWEN35_4B}


@dataclass(frozen=True)
class Footprint:
    """Memory for one context: allocated at load, and per saved turn checkpoint (host RAM).

    `checkpoint_bytes` assumes the window full (a late turn's checkpoint approaches that);
    `checkpoint_half_bytes` is the same at half the window. Both include the logits Annie
    keeps beside llama.cpp's state. One active sequence, as Annie uses.
    """

    architecture: str
    hybrid: bool
    dialect: Dialect
    n_ctx: int
    cells: int
    attention_layers: int
    recurrent_layers: int
    kv_bytes: int
    kv_bytes_per_token: int
    recurrent_bytes: int
    logits_bytes: int
    checkpoint_bytes: int
    checkpoint_half_bytes: int
    checkpoints: int
    checkpoints_bytes: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def state_bytes(shape: ModelShape, n_tokens: int, kv_type_bytes: float = F16) -> int:
    """What `llama_state_get_size` returns with one sequence holding `n_tokens` tokens."""
    size = 4 + len(shape.architecture.encode())  # the architecture name
    if shape.attention_layers:
        size += 4 + 4  # n_stream (one), its cell count
        if n_tokens > 0:
            # per cell: pos, n_seq_id, [M-RoPE x, y, token], one seq id
            cell_meta = 4 + 4 + (12 if shape.mrope else 0) + 4
            size += n_tokens * cell_meta + 4 + 4  # then v_trans, n_layer
            # a 12-byte header (type + row size, or type + element size + width) per K and V
            size += len(shape.attention_layers) * 2 * 12
            size += n_tokens * shape.kv_bytes_per_token(kv_type_bytes)
    if shape.recurrent_layers:
        used = 1 if n_tokens > 0 else 0
        size += 4 + used * (4 + 4 + 4)  # cell count; per cell pos, n_seq_id, seq id
        size += 4 + 4  # s_trans, n_layer
        size += len(shape.recurrent_layers) * 2 * 12  # type + row size for r and s
        size += used * shape.recurrent_bytes_per_seq()
    return size


def estimate(
    shape: ModelShape,
    n_ctx: int,
    n_seq: int = 1,
    kv_type_bytes: float = F16,
    checkpoints: int = 4,
) -> Footprint:
    """KV cache, recurrent state and checkpoint sizes for `shape` at a window of `n_ctx`."""
    cells = math.ceil(n_ctx / CTX_PAD) * CTX_PAD
    logits = shape.n_vocab * F32
    full = state_bytes(shape, n_ctx, kv_type_bytes) + logits
    half = state_bytes(shape, n_ctx // 2, kv_type_bytes) + logits
    return Footprint(
        architecture=shape.architecture,
        hybrid=shape.hybrid,
        dialect=shape.dialect,
        n_ctx=n_ctx,
        cells=cells,
        attention_layers=len(shape.attention_layers),
        recurrent_layers=len(shape.recurrent_layers),
        kv_bytes=cells * shape.kv_bytes_per_token(kv_type_bytes),
        kv_bytes_per_token=shape.kv_bytes_per_token(kv_type_bytes),
        recurrent_bytes=max(1, n_seq) * shape.recurrent_bytes_per_seq(),
        logits_bytes=logits,
        checkpoint_bytes=full,
        checkpoint_half_bytes=half,
        checkpoints=checkpoints,
        checkpoints_bytes=max(0, checkpoints) * full,
    )


def format_bytes(n: int) -> str:
    """Binary units, one decimal: '50.2 MiB', '1.1 GiB'."""
    value = float(n)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.2f} GiB"
