"""The shared head's state saved on disk and read back by the next run, on both families.

A second instance of the same model (a server started again) reads the file instead of
evaluating: nothing evaluated, and the model then stands exactly where the first one did. A
file cut short, another text or another window is a miss that evaluates afresh, never an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from config import Settings
from models import load_llm
from models.llm import LlamaLLM
from models.saved_state import SUFFIX

HEAD = "You are Annie, a voice assistant. " + " ".join(
    f"Rule {i}: answer briefly and kindly." for i in range(30)
)
MORE = " The user asks: what is the weather like?"


@pytest.fixture(params=["smollm2", "qwen35"])
def family(request: pytest.FixtureRequest) -> tuple[Settings, int]:
    """Settings for a fresh instance of each family, and a window that fits the head."""
    if request.param == "smollm2":
        return request.getfixturevalue("model_settings"), 2048
    return request.getfixturevalue("qwen35_settings"), 8192


@pytest.fixture
def fresh(family: tuple[Settings, int]) -> Iterator[list[LlamaLLM]]:
    """Fresh instances made on demand (each a server start), closed at the end."""
    made: list[LlamaLLM] = []
    yield made
    for llm in made:
        llm.close()


def start(family: tuple[Settings, int], made: list[LlamaLLM], n_ctx: int | None = None) -> LlamaLLM:
    settings, window = family
    llm = load_llm(settings, n_ctx=n_ctx or window)
    assert isinstance(llm, LlamaLLM)
    made.append(llm)
    return llm


def saved(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{SUFFIX}"))


async def test_a_second_start_reads_the_head_back_and_stands_where_the_first_did(
    family: tuple[Settings, int], fresh: list[LlamaLLM], tmp_path: Path
) -> None:
    first = start(family, fresh)
    evaluated = await first.prefill(HEAD, pin=True, saved_in=tmp_path)
    assert evaluated.plan == "scratch" and evaluated.evaluated_tokens > 100
    assert len(saved(tmp_path)) == 1

    second = start(family, fresh)
    read = await second.prefill(HEAD, pin=True, saved_in=tmp_path)
    assert read.plan == "disk" and read.evaluated_tokens == 0
    assert read.reused_tokens == evaluated.evaluated_tokens
    tokens_1, logits_1 = await first.next_logits()
    tokens_2, logits_2 = await second.next_logits()
    assert tokens_1 == tokens_2 and np.array_equal(logits_1, logits_2)

    # A prompt that goes on from the head evaluates only its own words, to the same place.
    for llm in (first, second):
        more = await llm.prefill(HEAD + MORE)
        assert more.reused_tokens == read.reused_tokens
        assert 0 < more.evaluated_tokens <= len(MORE)
    (tokens_1, logits_1), (tokens_2, logits_2) = [await m.next_logits() for m in (first, second)]
    assert tokens_1 == tokens_2
    assert np.allclose(logits_1, logits_2, atol=1e-3)


async def test_a_damaged_or_foreign_file_is_a_miss_that_evaluates_afresh(
    family: tuple[Settings, int], fresh: list[LlamaLLM], tmp_path: Path
) -> None:
    await start(family, fresh).prefill(HEAD, pin=True, saved_in=tmp_path)
    (path,) = saved(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # a disk that filled up mid-write, say
    killed = tmp_path / f".{path.name}.99999999.tmp"  # a process killed while writing
    killed.write_bytes(data[:100])

    again = await start(family, fresh).prefill(HEAD, pin=True, saved_in=tmp_path)
    assert again.plan == "scratch" and again.evaluated_tokens > 100
    assert [p.stat().st_size for p in saved(tmp_path)] == [len(data)]  # written whole again
    assert not killed.exists()  # and the leftover of the killed writer is gone

    # Another head, or the same head at another window, is another file: never read as this.
    other = await start(family, fresh).prefill(HEAD + MORE, pin=True, saved_in=tmp_path)
    assert other.plan == "scratch"
    window = family[1] // 2
    resized = await start(family, fresh, n_ctx=window).prefill(HEAD, pin=True, saved_in=tmp_path)
    assert resized.plan == "scratch"
    assert len(saved(tmp_path)) == 3
    # Without a folder nothing is read or written.
    plain = await start(family, fresh).prefill(HEAD, pin=True)
    assert plain.plan == "scratch" and len(saved(tmp_path)) == 3
