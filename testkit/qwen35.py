"""A tiny random-weight GGUF of architecture `qwen35`, laid out as llama.cpp's loader reads it.

Qwen3.5 is a hybrid: most layers are Gated DeltaNet (linear attention with a recurrent state),
every `full_attention_interval`-th layer is gated full attention with a KV cache. That mix is
what makes context reuse on the real 9B model different from a plain transformer (a
recurrent state cannot be trimmed back to an earlier position), so tests that exercise
state save/restore, prefix reuse and exact token counting need a file with the same
architecture, tokenizer and chat template, small enough to write in a test run.

The keys, tensor names and shapes follow llama.cpp's `llama_model_qwen35` loader
(src/models/qwen35.cpp) and its converter (`Qwen3_5TextModel`); only the sizes are tiny and
the weights are random. Writing uses the `gguf` package and numpy only.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import gguf
import numpy as np

ARCH = "qwen35"
QWEN35_TEMPLATE: str = Path(__file__).with_name("qwen35_template.jinja").read_text("utf-8")

# Real Qwen3.5 checkpoints: every 4th layer is full attention, the rest are linear attention.
FULL_ATTENTION_INTERVAL = 4
HEAD_DIM = 16  # attention head size (key_length == value_length; the graph asserts equality)
SSM_HEAD_DIM = 16  # Gated DeltaNet head size; the loader uses it for both keys and values
SSM_CONV_KERNEL = 4
# The 9B model has half as many DeltaNet key heads as value heads; keep that ratio so the
# broadcast path (n_v_heads > n_k_heads) is exercised.
SSM_K_HEADS = 2
SSM_V_HEADS = 4
# IMRoPE over the first ROPE_DIMS of each head; the sections split ROPE_DIMS / 2 rotation
# pairs between the temporal/height/width axes (the 9B model: 64 dims, [11, 11, 10, 0]).
ROPE_DIMS = 8
ROPE_SECTIONS = [2, 1, 1, 0]
CONTEXT_LENGTH = 262144
ROPE_FREQ_BASE = 10_000_000.0
RMS_EPS = 1e-6
INIT_SCALE = 0.02

# A subset of Qwen's added tokens, in the relative order Qwen files list them. `<|...|>`
# tokens are CONTROL (the converter marks them special); the XML-ish ones are plain added
# tokens, which the converter writes as USER_DEFINED, so llama.cpp matches them even when
# parse_special is off.
_CONTROL = gguf.TokenType.CONTROL
_USER = gguf.TokenType.USER_DEFINED
SPECIAL_TOKENS: list[tuple[str, gguf.TokenType]] = [
    ("<|endoftext|>", _CONTROL),
    ("<|im_start|>", _CONTROL),
    ("<|im_end|>", _CONTROL),
    ("<|vision_start|>", _CONTROL),
    ("<|vision_end|>", _CONTROL),
    ("<|image_pad|>", _CONTROL),
    ("<|video_pad|>", _CONTROL),
    ("<tool_call>", _USER),
    ("</tool_call>", _USER),
    ("<tool_response>", _USER),
    ("</tool_response>", _USER),
    ("<think>", _USER),
    ("</think>", _USER),
]

# A few merges, in rank order, written in the byte-to-unicode alphabet ('Ġ' is a space,
# 'Ċ' a newline). Each merge's parts must already be tokens when it is applied.
MERGES: list[tuple[str, str]] = [
    ("Ġ", "t"),
    ("h", "e"),
    ("i", "n"),
    ("e", "r"),
    ("Ġ", "a"),
    ("o", "n"),
    ("r", "e"),
    ("Ġt", "he"),
    ("a", "t"),
    ("e", "n"),
    ("Ġ", "s"),
    ("o", "r"),
    ("Ġ", "w"),
    ("i", "s"),
    ("Ġ", "o"),
    ("e", "s"),
    ("Ġ", "c"),
    ("a", "n"),
    ("Ġ", "i"),
    ("in", "g"),
    ("Ġ", "b"),
    ("Ġ", "f"),
    ("Ġ", "m"),
    ("Ċ", "Ċ"),
]


@cache
def byte_tokens() -> tuple[str, ...]:
    """GPT-2's byte-to-unicode alphabet, in the order byte-level BPE vocabularies list it."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    rest = [b for b in range(256) if b not in printable]
    # Bytes without a printable glyph map to U+0100 onwards, in byte order.
    chars = [chr(b) for b in printable] + [chr(256 + i) for i in range(len(rest))]
    return tuple(chars)


def vocabulary() -> tuple[list[str], list[int], list[str]]:
    """Tokens, their types and the merges: 256 bytes, merged pairs, then Qwen's specials."""
    tokens = list(byte_tokens())
    types = [int(gguf.TokenType.NORMAL)] * len(tokens)
    known = set(tokens)
    merges: list[str] = []
    for left, right in MERGES:
        if left not in known or right not in known:
            raise ValueError(f"merge {left!r} + {right!r} uses a token not yet in the vocabulary")
        merges.append(f"{left} {right}")
        if left + right not in known:
            tokens.append(left + right)
            types.append(int(gguf.TokenType.NORMAL))
            known.add(left + right)
    for text, kind in SPECIAL_TOKENS:
        tokens.append(text)
        types.append(int(kind))
    return tokens, types, merges


def write_qwen35_gguf(path: Path, *, seed: int = 0, n_layer: int = 4, n_embd: int = 64) -> Path:
    """Write a random-weight qwen35 GGUF to `path` and return it; the same seed gives the
    same bytes.

    Layer i is full attention when (i + 1) is a multiple of the attention interval, as in the
    real checkpoints; with fewer than 4 layers the interval shrinks so there is still one.
    """
    if n_layer < 2:
        raise ValueError("n_layer must be at least 2: one DeltaNet and one attention layer")
    if n_embd < 16 or n_embd % 16:
        raise ValueError("n_embd must be a positive multiple of 16")
    interval = min(FULL_ATTENTION_INTERVAL, n_layer)
    n_head = n_embd // HEAD_DIM
    n_head_kv = max(1, n_head // 2)
    n_ff = 3 * n_embd
    tokens, types, merges = vocabulary()
    rng = np.random.default_rng(seed)

    def matrix(rows: int, cols: int) -> np.ndarray:
        # numpy shape is (rows, cols) = ggml ne {cols, rows}: cols is the input dimension.
        return rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(INIT_SCALE)

    def ones(n: int) -> np.ndarray:
        # Qwen3.5's RMS norms are stored with the +1 offset already applied, so 1 is neutral.
        return np.ones(n, dtype=np.float32)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(path, arch=ARCH)
    _write_metadata(writer, n_layer, n_embd, n_head, n_head_kv, n_ff, interval)
    _write_tokenizer(writer, tokens, types, merges)

    writer.add_tensor("token_embd.weight", matrix(len(tokens), n_embd))
    writer.add_tensor("output_norm.weight", ones(n_embd))
    writer.add_tensor("output.weight", matrix(len(tokens), n_embd))

    key_dim = SSM_HEAD_DIM * SSM_K_HEADS
    value_dim = SSM_HEAD_DIM * SSM_V_HEADS
    conv_dim = 2 * key_dim + value_dim
    for il in range(n_layer):
        blk = f"blk.{il}"
        writer.add_tensor(f"{blk}.attn_norm.weight", ones(n_embd))
        writer.add_tensor(f"{blk}.post_attention_norm.weight", ones(n_embd))
        if (il + 1) % interval == 0:
            # Gated attention: attn_q yields query and output gate interleaved per head.
            writer.add_tensor(f"{blk}.attn_q.weight", matrix(2 * n_head * HEAD_DIM, n_embd))
            writer.add_tensor(f"{blk}.attn_k.weight", matrix(n_head_kv * HEAD_DIM, n_embd))
            writer.add_tensor(f"{blk}.attn_v.weight", matrix(n_head_kv * HEAD_DIM, n_embd))
            writer.add_tensor(f"{blk}.attn_output.weight", matrix(n_embd, n_head * HEAD_DIM))
            writer.add_tensor(f"{blk}.attn_q_norm.weight", ones(HEAD_DIM))
            writer.add_tensor(f"{blk}.attn_k_norm.weight", ones(HEAD_DIM))
        else:
            # Gated DeltaNet: fused q|k|v projection, output gate z, a short causal conv over
            # q|k|v, per-value-head decay (ssm_a = -exp(A_log), dt bias) and beta.
            writer.add_tensor(f"{blk}.attn_qkv.weight", matrix(conv_dim, n_embd))
            writer.add_tensor(f"{blk}.attn_gate.weight", matrix(value_dim, n_embd))
            # Depthwise conv weights at PyTorch's init scale (1 / sqrt(kernel)), not 0.02, so
            # the recurrent state visibly depends on earlier tokens.
            conv = rng.standard_normal((conv_dim, SSM_CONV_KERNEL), dtype=np.float32)
            writer.add_tensor(f"{blk}.ssm_conv1d.weight", conv * np.float32(0.5))
            writer.add_tensor(f"{blk}.ssm_dt.bias", ones(SSM_V_HEADS))
            decay = -rng.uniform(1.0, 16.0, SSM_V_HEADS).astype(np.float32)
            writer.add_tensor(f"{blk}.ssm_a", decay)
            writer.add_tensor(f"{blk}.ssm_beta.weight", matrix(SSM_V_HEADS, n_embd))
            writer.add_tensor(f"{blk}.ssm_alpha.weight", matrix(SSM_V_HEADS, n_embd))
            writer.add_tensor(f"{blk}.ssm_norm.weight", ones(SSM_HEAD_DIM))
            writer.add_tensor(f"{blk}.ssm_out.weight", matrix(n_embd, value_dim))
        writer.add_tensor(f"{blk}.ffn_gate.weight", matrix(n_ff, n_embd))
        writer.add_tensor(f"{blk}.ffn_up.weight", matrix(n_ff, n_embd))
        writer.add_tensor(f"{blk}.ffn_down.weight", matrix(n_embd, n_ff))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _write_metadata(
    writer: gguf.GGUFWriter,
    n_layer: int,
    n_embd: int,
    n_head: int,
    n_head_kv: int,
    n_ff: int,
    interval: int,
) -> None:
    writer.add_name("Qwen3.5 tiny random (testkit)")
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_context_length(CONTEXT_LENGTH)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_key_length(HEAD_DIM)
    writer.add_value_length(HEAD_DIM)
    writer.add_layer_norm_rms_eps(RMS_EPS)
    writer.add_rope_freq_base(ROPE_FREQ_BASE)
    writer.add_rope_dimension_count(ROPE_DIMS)
    # Required by the qwen35 loader (it reads exactly 4 entries).
    writer.add_rope_dimension_sections(ROPE_SECTIONS)
    writer.add_ssm_conv_kernel(SSM_CONV_KERNEL)
    writer.add_ssm_state_size(SSM_HEAD_DIM)
    writer.add_ssm_group_count(SSM_K_HEADS)
    writer.add_ssm_time_step_rank(SSM_V_HEADS)
    writer.add_ssm_inner_size(SSM_HEAD_DIM * SSM_V_HEADS)
    writer.add_full_attention_interval(interval)


def _write_tokenizer(
    writer: gguf.GGUFWriter, tokens: list[str], types: list[int], merges: list[str]
) -> None:
    ids = {text: i for i, text in enumerate(tokens)}
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen35")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_eos_token_id(ids["<|im_end|>"])
    writer.add_pad_token_id(ids["<|endoftext|>"])
    # Real Qwen files name <|endoftext|> as BOS but never add it. Without a BOS id llama.cpp's
    # BPE default is token 11, which here would be the byte ','.
    writer.add_bos_token_id(ids["<|endoftext|>"])
    writer.add_add_bos_token(False)
    writer.add_chat_template(QWEN35_TEMPLATE)
