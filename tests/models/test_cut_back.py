"""An edit in the middle of the prompt, as compaction makes, on an attention-only model: the
adapter cuts the KV cache back to the edit and evaluates only from there, and the logits
equal a from-scratch evaluation of the same tokens. (A hybrid model never cuts back:
tests/models/test_hybrid_state.py.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from config import load_settings
from models import load_llm, resolve
from models.llama_log import quiet_stderr
from models.llm import LlamaLLM
from models.llm_cache import BatchSizer
from tests.models.test_hybrid_state import fresh_logits

SYSTEM = {"role": "system", "content": "You are Annie, a voice assistant. Keep answers short."}


@pytest.fixture(scope="module")
def smol(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaLLM]:
    # Its own instance with no saved states, so every reuse shown here is a cut.
    home = tmp_path_factory.mktemp("cut-home")
    settings = load_settings(
        environ={
            "ANNIE_HOME": str(home),
            "HF_HUB_OFFLINE": "1",
            "ANNIE_MODELS__LLM_CHECKPOINTS": "0",
        }
    )
    llm = load_llm(settings, n_ctx=2048)
    assert isinstance(llm, LlamaLLM)
    yield llm
    llm.close()


@pytest.fixture(scope="module")
def reference(smol: LlamaLLM) -> Iterator[Any]:
    import llama_cpp

    with quiet_stderr():
        model = llama_cpp.Llama(str(smol.path), n_ctx=2048, n_batch=512, verbose=False)
    yield model
    model.close()


def turn(user: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]


async def test_an_edit_is_evaluated_from_the_edit_on_and_matches_a_fresh_state(
    smol: LlamaLLM, reference: Any
) -> None:
    # Prefill only: batched evaluation is exact whatever the split, so logits must match.
    # (Tokens generated one at a time take another kernel and differ by float noise.)
    one = [SYSTEM, *turn("Tell me about tea.", "Tea is made from the leaves of a shrub.")]
    two = [*one, *turn("And coffee?", "Coffee is brewed from roasted seeds, " * 6)]
    question = {"role": "user", "content": "Which has more caffeine?"}
    kept = smol.render([*one, {"role": "user", "content": "And coffee?"}])
    await smol.prefill(kept)
    await smol.prefill(smol.render([*two, question]))
    # Compaction clears the second answer: what comes before it is kept, not re-evaluated.
    cleared = [*one, *turn("And coffee?", "[cleared: see get_context]"), question]
    prompt = smol.render(cleared)
    stats = await smol.prefill(prompt)
    assert not stats.full_reprefill
    assert stats.reused_tokens == smol.count(kept)
    assert stats.evaluated_tokens == smol.count(prompt) - smol.count(kept)
    tokens, logits = await smol.next_logits()
    assert smol.detokenize(tokens) == prompt
    np.testing.assert_allclose(logits, fresh_logits(reference, tokens), rtol=1e-3, atol=1e-3)


async def test_a_cut_inside_a_generated_answer_keeps_tokens_that_spell_the_text(
    smol: LlamaLLM,
) -> None:
    first = [SYSTEM, {"role": "user", "content": "Tell me three facts about tea."}]
    prompt1 = smol.render(first)
    answer = "".join([p async for p in smol.stream(prompt1, max_tokens=24)])
    assert len(answer) > 10
    second = [
        *first,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "More?"},
    ]
    await smol.prefill(smol.render(second))

    # An edit in the middle of the answer keeps the prompt and the answer up to the edit.
    half = answer[: len(answer) // 2]
    edited = [*first, {"role": "assistant", "content": half + " [cleared]"}, second[-1]]
    prompt = smol.render(edited)
    stats = await smol.prefill(prompt)
    assert not stats.full_reprefill
    assert stats.reused_tokens > smol.count(prompt1)
    assert stats.reused_tokens <= smol.count(prompt1 + half)
    assert stats.evaluated_tokens == stats.prompt_tokens - stats.reused_tokens
    assert stats.evaluated_tokens < smol.count(prompt) - smol.count(prompt1)

    tokens, _ = await smol.next_logits()
    assert smol.detokenize(tokens) == prompt

    # The next turn extends the cut-back state as usual.
    after = [*edited, {"role": "assistant", "content": "Sure."}, {"role": "user", "content": "Ok"}]
    stats = await smol.prefill(smol.render(after))
    assert stats.reused_tokens == smol.count(prompt)


class FixedBatches(BatchSizer):
    """Batches of one chosen size whatever the rate: a split a busy machine might make."""

    def __init__(self) -> None:
        super().__init__()
        self.fixed = 16

    def size(self, scale: float = 1.0) -> int:
        return self.fixed

    def timed(self, n_tokens: int, started: float) -> None:
        pass


async def test_a_prompt_evaluates_to_the_same_logits_whatever_the_batch_split(
    smol: LlamaLLM, reference: Any
) -> None:
    # Each prompt is split so that a size-only rule would leave its last token alone, and the
    # next prompt extends it: a lone token takes llama.cpp's one-row kernels, and everything
    # after it would read a KV entry rounded differently (logits off by up to 1.4).
    cases = 0
    topics = ("tea", "green tea", "coffee beans", "the history of tea", "oolong", "chai", "mate")
    for topic in topics:
        sizer = FixedBatches()
        llm = LlamaLLM(resolve("llm", smol.settings), smol.settings, n_ctx=2048, batches=sizer)
        try:
            ask = f"Tell me about {topic}: where it comes from, how it is made, how people "
            ask += "drink it at home and at work, and what it costs in a shop or a cafe today."
            first = [SYSTEM, {"role": "user", "content": ask}]
            prompt = llm.render(first)
            n = llm.count(prompt)
            divisors = [d for d in range(8, n // 2 + 1) if (n - 1) % d == 0]
            if not divisors:
                continue
            sizer.fixed = divisors[-1]
            await llm.prefill(prompt)
            answer = {"role": "assistant", "content": "A drink made from leaves."}
            after = [*first, answer, {"role": "user", "content": "What else?"}]
            await llm.prefill(llm.render(after))
            tokens, logits = await llm.next_logits()
            expected = fresh_logits(reference, tokens)
            np.testing.assert_allclose(logits, expected, rtol=1e-3, atol=1e-3)
            cases += 1
        finally:
            llm.close()
    assert cases >= 4
