"""The generated qwen35 GGUF (testkit.qwen35) on real llama.cpp.

It must be deterministic, load as the same hybrid architecture as Qwen3.5-9B, tokenize like a
Qwen file, and show the two facts context reuse depends on: a whole-sequence state snapshot
restores exactly, and the recurrent state cannot be trimmed back to an earlier position.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from pathlib import Path

import llama_cpp
import numpy as np
import pytest
from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from models.llama_log import quiet_stderr
from testkit.qwen35 import QWEN35_TEMPLATE, write_qwen35_gguf

PROMPT = "<|im_start|>user\nIs there anything on the task list for me?<|im_end|>\n"
CONTINUATION = "<|im_start|>assistant\nThere are two open tasks."
OTHER = "<|im_start|>assistant\nNothing is pending."


@pytest.fixture()
def qwen35(qwen35_path: Path) -> Iterator[llama_cpp.Llama]:
    # A fresh context per test: these tests leave the memory in states others must not see.
    with quiet_stderr():
        model = llama_cpp.Llama(model_path=str(qwen35_path), n_ctx=512, verbose=False)
    yield model
    model.close()


def _tokens(model: llama_cpp.Llama, text: str) -> list[int]:
    return model.tokenize(text.encode("utf-8"), add_bos=False, special=True)


def _last_logits(model: llama_cpp.Llama) -> np.ndarray:
    row = llama_cpp.llama_get_logits_ith(model.ctx, -1)
    return np.ctypeslib.as_array(row, shape=(model.n_vocab(),)).copy()


def _save(model: llama_cpp.Llama) -> bytes:
    size = llama_cpp.llama_state_get_size(model.ctx)
    buf = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_get_data(model.ctx, buf, size)
    assert 0 < written <= size
    return bytes(buf[:written])


def _decode_at(model: llama_cpp.Llama, tokens: list[int], pos0: int) -> int:
    """llama_decode's return code for `tokens` placed at positions pos0, pos0 + 1, ..."""
    batch = llama_cpp.llama_batch_init(len(tokens), 0, 1)
    try:
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = pos0 + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = i == len(tokens) - 1
        batch.n_tokens = len(tokens)
        return int(llama_cpp.llama_decode(model.ctx, batch))
    finally:
        llama_cpp.llama_batch_free(batch)


def _jinja() -> ImmutableSandboxedEnvironment:
    # The same environment shape as models/chat_template.py: HF templates signal errors by
    # calling raise_exception.
    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    return env


def _restore(model: llama_cpp.Llama, blob: bytes, n_tokens: int) -> None:
    buf = (ctypes.c_uint8 * len(blob)).from_buffer_copy(blob)
    assert llama_cpp.llama_state_set_data(model.ctx, buf, len(blob)) == len(blob)
    model.n_tokens = n_tokens


def test_same_seed_writes_the_same_bytes(tmp_path: Path) -> None:
    first = write_qwen35_gguf(tmp_path / "a.gguf", seed=0).read_bytes()
    again = write_qwen35_gguf(tmp_path / "b.gguf", seed=0).read_bytes()
    other = write_qwen35_gguf(tmp_path / "c.gguf", seed=1).read_bytes()
    assert first == again
    assert first != other
    assert len(first) < 4 * 1024 * 1024


def test_loads_as_a_qwen35_hybrid(qwen35: llama_cpp.Llama) -> None:
    assert qwen35.metadata["general.architecture"] == "qwen35"
    assert qwen35.metadata["qwen35.full_attention_interval"] == "4"
    assert llama_cpp.llama_model_is_hybrid(qwen35.model)
    assert not llama_cpp.llama_model_is_recurrent(qwen35.model)
    assert qwen35.token_eos() == _tokens(qwen35, "<|im_end|>")[0]


def test_logits_are_finite_and_depend_on_the_input(qwen35: llama_cpp.Llama) -> None:
    qwen35.eval(_tokens(qwen35, PROMPT))
    first = _last_logits(qwen35)
    qwen35.reset()
    qwen35.eval(_tokens(qwen35, PROMPT.replace("task", "shopping")))
    assert np.isfinite(first).all()
    assert not np.allclose(first, _last_logits(qwen35))


@pytest.mark.parametrize("text", ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>"])
def test_special_tokens_are_single_tokens(qwen35: llama_cpp.Llama, text: str) -> None:
    assert len(_tokens(qwen35, text)) == 1


def test_qwen_added_tokens_match_without_parse_special(qwen35: llama_cpp.Llama) -> None:
    # As in real Qwen files: <tool_call> & co. are USER_DEFINED, matched even in plain text;
    # <|im_start|> is CONTROL, so plain text spells it out byte by byte.
    assert len(qwen35.tokenize(b"<tool_call>", add_bos=False, special=False)) == 1
    assert len(qwen35.tokenize(b"<|im_start|>", add_bos=False, special=False)) > 1


def test_merges_apply_and_no_bos_is_added(qwen35: llama_cpp.Llama) -> None:
    assert len(qwen35.tokenize(b" the", add_bos=False)) == 1
    plain = qwen35.tokenize(b"hello", add_bos=True)
    assert plain == qwen35.tokenize(b"hello", add_bos=False)


@pytest.mark.parametrize(
    "text",
    [
        "Grüße aus Köln, naïve café — 世界 🦙 ok?\n\n\ttabs  and   spaces ",
        "emoji joiners 👩‍👩‍👧 and math ∑ x² ≤ ∞, Ελληνικά, русский, עברית",
    ],
)
def test_utf8_round_trips(qwen35: llama_cpp.Llama, text: str) -> None:
    tokens = qwen35.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    assert qwen35.detokenize(tokens).decode("utf-8") == text


def test_whole_sequence_state_restores_exactly(qwen35: llama_cpp.Llama) -> None:
    prompt = _tokens(qwen35, PROMPT)
    qwen35.eval(prompt)
    snapshot = _save(qwen35)

    qwen35.eval(_tokens(qwen35, CONTINUATION))
    expected = _last_logits(qwen35)

    # A different continuation moves the recurrent state somewhere else entirely...
    _restore(qwen35, snapshot, len(prompt))
    qwen35.eval(_tokens(qwen35, OTHER))
    assert not np.allclose(expected, _last_logits(qwen35))

    # ...and the snapshot brings it back.
    _restore(qwen35, snapshot, len(prompt))
    qwen35.eval(_tokens(qwen35, CONTINUATION))
    np.testing.assert_allclose(_last_logits(qwen35), expected, atol=1e-4)


def test_partial_sequence_removal_is_refused(qwen35: llama_cpp.Llama) -> None:
    tokens = _tokens(qwen35, PROMPT)
    qwen35.eval(tokens)
    memory = llama_cpp.llama_get_memory(qwen35.ctx)
    assert memory is not None
    n = len(tokens)

    assert llama_cpp.llama_memory_seq_rm(memory, 0, n // 2, -1) is False
    # Refused without side effects: the attention cache was not trimmed either.
    assert llama_cpp.llama_memory_seq_pos_max(memory, 0) == n - 1
    assert llama_cpp.llama_memory_seq_rm(memory, 0, 0, -1) is True
    assert llama_cpp.llama_memory_seq_pos_max(memory, 0) == -1


def test_decoding_after_a_rewind_without_restore_fails(qwen35: llama_cpp.Llama) -> None:
    prompt = _tokens(qwen35, PROMPT)
    other = _tokens(qwen35, OTHER)
    qwen35.eval(prompt + _tokens(qwen35, CONTINUATION))
    end = qwen35.n_tokens
    memory = llama_cpp.llama_get_memory(qwen35.ctx)

    # llama.cpp refuses a batch that starts at or before the last stored position (M-RoPE
    # positions may only move forward), so a rewind must go through a restored snapshot.
    assert _decode_at(qwen35, other, len(prompt)) != 0
    # llama-cpp-python's own rewind (n_tokens back, then eval) hits the same wall.
    qwen35.n_tokens = len(prompt)
    with quiet_stderr(), pytest.raises(RuntimeError, match="llama_decode returned"):
        qwen35.eval(other)
    assert llama_cpp.llama_memory_seq_pos_max(memory, 0) == end - 1


def test_embedded_template_is_the_official_one(qwen35: llama_cpp.Llama) -> None:
    source = qwen35.metadata["tokenizer.chat_template"]
    assert source == QWEN35_TEMPLATE
    template = _jinja().from_string(source)
    with pytest.raises(TemplateError, match=r"No user query found in messages\."):
        template.render(messages=[{"role": "system", "content": "You are Annie."}])
    rendered = template.render(
        messages=[{"role": "user", "content": "hi"}],
        add_generation_prompt=True,
        enable_thinking=False,
    )
    assert (
        rendered == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )
