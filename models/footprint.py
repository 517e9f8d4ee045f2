"""What a chat model costs in memory, read from its GGUF header (no tensor data is read).

The arithmetic (KV cache, recurrent state, the states saved at turn boundaries; the formulas
and the llama.cpp sources they follow) lives in `provision.footprint`, standard library only,
so the set-up planner sizes a model before anything is installed with the same code `doctor`
uses. This module adds what needs the installed packages: `read_hparams` (gguf) and the
tool-call dialect of the embedded chat template (jinja2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from models.base import ModelError, ToolDialect
from models.chat_template import ChatTemplate
from provision.footprint import (
    CTX_PAD,
    F16,
    F32,
    INTERVAL_ARCHES,
    MROPE_ARCHES,
    QWEN35_4B,
    QWEN35_9B,
    QWEN35_SHAPES,
    RECURRENT_ARCHES,
    Footprint,
    ModelShape,
    estimate,
    format_bytes,
    qwen35_layers,
    state_bytes,
)

__all__ = [
    "CTX_PAD",
    "F16",
    "F32",
    "INTERVAL_ARCHES",
    "MROPE_ARCHES",
    "QWEN35_4B",
    "QWEN35_9B",
    "QWEN35_SHAPES",
    "RECURRENT_ARCHES",
    "Footprint",
    "ModelShape",
    "estimate",
    "format_bytes",
    "qwen35_layers",
    "read_hparams",
    "state_bytes",
    "template_dialect",
]


def template_dialect(source: str | None) -> ToolDialect:
    """The tool-call dialect the chat template teaches ("xml" for `<function=...>` calls)."""
    try:
        return ChatTemplate(source).dialect
    except ModelError:  # a template that does not compile: judge its text alone
        return "xml" if source and "<function=" in source else "json"


def read_hparams(path: str | Path) -> ModelShape:
    """The shape of the GGUF at `path`, from its header (tensor data stays on disk)."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))

    def get(key: str, default: Any = None) -> Any:
        field = reader.fields.get(key)
        return default if field is None else field.contents()

    arch = str(get("general.architecture"))

    def key(name: str, default: Any = None) -> Any:
        return get(f"{arch}.{name}", default)

    n_layer_all = int(key("block_count"))
    n_layer = n_layer_all - int(key("nextn_predict_layers", 0))
    n_embd = int(key("embedding_length"))
    heads = _per_layer(key("attention.head_count", 0), n_layer_all)
    heads_kv = _per_layer(key("attention.head_count_kv", heads), n_layer_all)
    n_head = max(heads[:n_layer], default=0)
    key_length = int(key("attention.key_length", n_embd // n_head if n_head else 0))
    value_length = int(key("attention.value_length", n_embd // n_head if n_head else 0))

    flags = key("attention.recurrent_layers")
    if flags is not None:
        recurrent = tuple(bool(x) for x in _per_layer(flags, n_layer_all)[:n_layer])
    elif arch in INTERVAL_ARCHES:
        recurrent = qwen35_layers(n_layer, int(key("full_attention_interval", 4)))
    elif arch in RECURRENT_ARCHES:
        recurrent = (True,) * n_layer
    else:
        recurrent = tuple(h == 0 for h in heads_kv[:n_layer])

    tokens = reader.fields.get("tokenizer.ggml.tokens")
    n_vocab = len(tokens.data) if tokens is not None else int(key("vocab_size", 0))
    return ModelShape(
        architecture=arch,
        n_layer=n_layer,
        n_embd=n_embd,
        n_head=n_head,
        n_head_kv=tuple(heads_kv[:n_layer]),
        key_length=key_length,
        value_length=value_length,
        recurrent=recurrent,
        n_vocab=n_vocab,
        ssm_d_conv=int(key("ssm.conv_kernel", 0)),
        ssm_d_state=int(key("ssm.state_size", 0)),
        ssm_d_inner=int(key("ssm.inner_size", 0)),
        ssm_n_group=int(key("ssm.group_count", 0)),
        ssm_dt_rank=int(key("ssm.time_step_rank", 0)),
        dialect=template_dialect(get("tokenizer.chat_template")),
    )


def _per_layer(value: Any, n: int) -> list[int]:
    """A scalar or per-layer array hyperparameter as one int per layer."""
    if isinstance(value, list):
        return [int(v) for v in value] + [0] * (n - len(value))
    return [int(value)] * n
