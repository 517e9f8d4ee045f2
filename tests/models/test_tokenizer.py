"""Exact counting from the GGUF vocabulary, and the labelled tiktoken estimator."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import load_settings
from models import ModelError, load_llm, load_tokenizer
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from models.tokenizer import TiktokenTokenizer


def test_gguf_tokenizer_is_exact_and_carries_the_template(tokenizer: Tokenizer) -> None:
    assert tokenizer.exact
    assert tokenizer.chat_template and "<|im_start|>" in tokenizer.chat_template
    assert tokenizer.eos_token == "<|im_end|>"
    # Special tokens are single tokens, not spelled out.
    assert tokenizer.count("<|im_start|>user\n") == 3
    assert tokenizer.detokenize(tokenizer.tokenize("Hello, Zürich!")) == "Hello, Zürich!"


async def test_tiktoken_estimator_is_labelled_and_still_renders() -> None:
    estimator = TiktokenTokenizer()
    assert not estimator.exact
    assert "estimate" in estimator.name
    assert estimator.count("hello world") == 2
    fake = ScriptedLLM(estimator, ["Hi!"])
    prompt = fake.render([{"role": "user", "content": "Hello"}])
    assert prompt == "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
    assert "".join([p async for p in fake.stream(prompt)]) == "Hi!"
    assert fake.last_stats.prompt_tokens == estimator.count(prompt)


def test_broken_gguf_is_named_with_llama_cpp_reason(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF\x03\x00\x00\x00garbage")
    settings = load_settings(models={"llm_path": str(broken)})
    with pytest.raises(ModelError) as err:
        load_llm(settings, n_ctx=512)
    assert str(broken) in str(err.value)
    assert "failed" in str(err.value)
    with pytest.raises(ModelError, match="vocabulary"):
        load_tokenizer(settings)
