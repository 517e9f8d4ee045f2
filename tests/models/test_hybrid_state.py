"""The hybrid model's state, proven: after every way Annie moves the model, its next-token
logits equal a from-scratch evaluation of the same tokens on a fresh context.

Qwen3.5 mixes Gated DeltaNet layers (a recurrent state that cannot be cut back) with
attention layers. The adapter never rewinds: it extends, restores a whole state saved at a
turn boundary, or starts over. Random weights are deterministic, so any state left behind by
a wrong move shows up as logits that differ from the reference. Each test also checks how
many tokens were evaluated and how many reused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from config import Settings
from context.conversation import Prefix
from context.ledger import Ledger
from models import load_llm
from models.llama_log import quiet_stderr
from models.llm import LlamaLLM

SYSTEM = {"role": "system", "content": "You are Annie, a voice assistant. " * 4}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_memory",
            "description": "Search the notes.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
]


@pytest.fixture(scope="module")
def hybrid(qwen35_settings: Settings) -> Iterator[LlamaLLM]:
    # Its own instance: the saved states and counts asserted here must start from nothing.
    llm = load_llm(qwen35_settings, n_ctx=2048)
    assert isinstance(llm, LlamaLLM)
    yield llm
    llm.close()


@pytest.fixture(scope="module")
def reference(qwen35_path: Path) -> Iterator[Any]:
    import llama_cpp

    with quiet_stderr():
        model = llama_cpp.Llama(str(qwen35_path), n_ctx=2048, n_batch=512, verbose=False)
    yield model
    model.close()


def fresh_logits(reference: Any, tokens: list[int]) -> npt.NDArray[np.float32]:
    """The last token's logits after evaluating `tokens` on a cleared context."""
    import llama_cpp

    reference.reset()
    reference.eval(tokens)
    ptr = llama_cpp.llama_get_logits_ith(reference.ctx, -1)
    return np.ctypeslib.as_array(ptr, shape=(reference.n_vocab(),)).astype(np.float32)


async def assert_matches_fresh(llm: LlamaLLM, reference: Any) -> list[int]:
    tokens, logits = await llm.next_logits()
    assert tokens, "the model holds no tokens"
    expected = fresh_logits(reference, tokens)
    assert np.all(np.isfinite(logits))
    # Batched and incremental evaluation of the same tokens differ only by float noise.
    np.testing.assert_allclose(logits, expected, rtol=1e-3, atol=1e-3)
    return tokens


async def generate(llm: LlamaLLM, prompt: str, max_tokens: int = 6) -> str:
    return "".join([piece async for piece in llm.stream(prompt, max_tokens=max_tokens)])


def conversation(*turns: tuple[str, str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [SYSTEM]
    for user, answer in turns:
        messages.append({"role": "user", "content": user})
        if answer:
            messages.append({"role": "assistant", "content": answer})
    return messages


async def test_a_turn_that_extends_the_prompt_evaluates_only_new_tokens(
    hybrid: LlamaLLM, reference: Any
) -> None:
    head = hybrid.render([SYSTEM], TOOLS, add_generation_prompt=False)
    stats = await hybrid.prefill(head)
    held = await assert_matches_fresh(hybrid, reference)
    assert stats.evaluated_tokens == len(held) == len(hybrid.tokenize(head))

    first = conversation(("What is on today?", ""))
    prompt = hybrid.render(first, TOOLS)
    answer = await generate(hybrid, prompt)
    stats = hybrid.last_stats
    assert stats.reused_tokens == len(held)
    assert stats.evaluated_tokens == len(hybrid.tokenize(prompt[len(head) :]))
    assert not stats.full_reprefill
    await assert_matches_fresh(hybrid, reference)

    # The next turn extends the prompt the model already holds, its own answer included.
    second = [*first, {"role": "assistant", "content": answer}, {"role": "user", "content": "ok"}]
    tokens_before, _ = await hybrid.next_logits()
    await generate(hybrid, hybrid.render(second, TOOLS))
    stats = hybrid.last_stats
    # Random weights babble: where the template trims the answer differently from the
    # text generated, the model goes back to the state saved at the turn boundary, never further.
    assert len(hybrid.tokenize(prompt)) <= stats.reused_tokens <= len(tokens_before)
    assert stats.reused_tokens + stats.evaluated_tokens == stats.prompt_tokens
    await assert_matches_fresh(hybrid, reference)


async def test_a_tool_round_extends_without_reprefill(hybrid: LlamaLLM, reference: Any) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "search_memory", "arguments": {"query": "2026"}},
    }
    turn = conversation(("Find my booking.", ""))
    await generate(hybrid, hybrid.render(turn, TOOLS))
    with_call = [*turn, {"role": "assistant", "content": "", "tool_calls": [call]}]
    results = [
        {"role": "tool", "content": "booking ABC-123", "tool_call_id": "c1", "name": "x"},
        {"role": "tool", "content": "no more", "tool_call_id": "c2", "name": "x"},
    ]
    prompt = hybrid.render([*with_call, *results], TOOLS)
    reused_text = hybrid.render(turn, TOOLS)
    await generate(hybrid, prompt)
    stats = hybrid.last_stats
    # Back to the state saved at the turn boundary (the model's own call text differed from
    # the rendered one), then only the call and both results are evaluated.
    assert stats.reused_tokens == len(hybrid.tokenize(reused_text))
    assert stats.evaluated_tokens == len(hybrid.tokenize(prompt[len(reused_text) :]))
    await assert_matches_fresh(hybrid, reference)


async def test_going_back_to_a_turn_boundary_restores_its_state_exactly(
    hybrid: LlamaLLM, reference: Any
) -> None:
    one = conversation(("Remind me to call the dentist.", ""))
    p1 = hybrid.render(one, TOOLS)
    a1 = await generate(hybrid, p1)
    two = [*one, {"role": "assistant", "content": a1}, {"role": "user", "content": "Tomorrow."}]
    await generate(hybrid, hybrid.render(two, TOOLS))
    # A different second turn branches at the end of turn one's prompt: the model cannot
    # cut its recurrent state back, so it restores the state saved there.
    branch = [*one, {"role": "assistant", "content": a1}, {"role": "user", "content": "No."}]
    p3 = hybrid.render(branch, TOOLS)
    await generate(hybrid, p3)
    stats = hybrid.last_stats
    assert stats.reused_tokens == len(hybrid.tokenize(p1))
    assert stats.evaluated_tokens == len(hybrid.tokenize(p3[len(p1) :]))
    await assert_matches_fresh(hybrid, reference)


@pytest.mark.parametrize("tier", ["tier1", "tier2"])
async def test_a_compaction_rewrite_restores_the_longest_unchanged_prefix(
    hybrid: LlamaLLM, reference: Any, tier: str
) -> None:
    head = hybrid.render([SYSTEM], TOOLS, add_generation_prompt=False)
    await hybrid.prefill(head)
    call = {"id": "c9", "type": "function", "function": {"name": "search_memory", "arguments": {}}}
    before = [
        *conversation(("Search the news.", "")),
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "long result " * 30, "tool_call_id": "c9", "name": "x"},
        {"role": "assistant", "content": "Here is the news."},
        {"role": "user", "content": "Thanks."},
    ]
    await generate(hybrid, hybrid.render(before, TOOLS))
    if tier == "tier1":
        # Tier 1 clears the old tool result in place: the prompt changes mid-way.
        after = [dict(m) for m in before]
        after[4]["content"] = "[cleared: search result, id r1; get_context brings it back]"
    else:
        # Tier 2 replaces the oldest turns with a summary right after the head.
        after = [SYSTEM, {"role": "user", "content": "Summary: the user read the news."}]
        after.append({"role": "user", "content": "Thanks."})
    prompt = hybrid.render(after, TOOLS)
    await generate(hybrid, prompt)
    stats = hybrid.last_stats
    tokens = await assert_matches_fresh(hybrid, reference)
    assert 0 < stats.reused_tokens < len(tokens)
    assert stats.reused_tokens + stats.evaluated_tokens == stats.prompt_tokens
    assert hybrid.tokenize(prompt).__len__() == stats.prompt_tokens
    if tier == "tier2":
        assert stats.reused_tokens == len(hybrid.tokenize(head))


async def test_cancelling_mid_stream_leaves_a_state_the_next_turn_can_extend(
    hybrid: LlamaLLM, reference: Any
) -> None:
    prompt = hybrid.render(conversation(("Tell me a long story.", "")), TOOLS)
    cancel = asyncio.Event()
    pieces: list[str] = []
    async for piece in hybrid.stream(prompt, max_tokens=200, cancel=cancel):
        pieces.append(piece)
        if len(pieces) == 5:
            cancel.set()
    assert hybrid.last_stats.cancelled
    assert hybrid.last_stats.generated_tokens < 200
    held = await assert_matches_fresh(hybrid, reference)
    assert len(held) > len(hybrid.tokenize(prompt))
    # The interrupted answer, as delivered, is the next prompt's history.
    delivered = "".join(pieces)
    follow = hybrid.render(
        [
            *conversation(("Tell me a long story.", delivered)),
            {"role": "user", "content": "Stop."},
        ],
        TOOLS,
    )
    await generate(hybrid, follow)
    assert hybrid.last_stats.reused_tokens >= len(hybrid.tokenize(prompt))
    await assert_matches_fresh(hybrid, reference)


async def test_cancelling_mid_prefill_keeps_what_was_evaluated(
    hybrid: LlamaLLM, reference: Any
) -> None:
    long_user = "Here is a long message about many things. " * 22
    prompt = hybrid.render(conversation((long_user, "")), TOOLS)
    n_prompt = len(hybrid.tokenize(prompt))
    assert n_prompt > 1500
    # A turn's prompt is evaluated in batches of up to 512 tokens, and the cancel flag is
    # checked between them: the new part here is more than one batch.
    cancel = asyncio.Event()
    cancel.set()
    pieces = [piece async for piece in hybrid.stream(prompt, max_tokens=20, cancel=cancel)]
    stats = hybrid.last_stats
    assert not pieces and stats.cancelled
    assert 0 < stats.evaluated_tokens < n_prompt - stats.reused_tokens
    held = await assert_matches_fresh(hybrid, reference)
    assert len(held) == stats.reused_tokens + stats.evaluated_tokens
    # The same prompt again goes on from where the prefill stopped.
    await generate(hybrid, prompt)
    again = hybrid.last_stats
    assert again.reused_tokens == len(held)
    assert again.evaluated_tokens == n_prompt - len(held)
    await assert_matches_fresh(hybrid, reference)


async def test_the_pinned_head_outlives_the_saved_turn_states_and_restores_exactly(
    hybrid: LlamaLLM, reference: Any
) -> None:
    # The head every session shares ends inside the system message, where a briefing begins.
    prefix = Prefix(str(SYSTEM["content"]).strip(), TOOLS)
    head = Ledger(hybrid, window=2048, output_reserve_tokens=64).shared_head(prefix)
    assert head and not head.endswith("<|im_end|>\n")
    await hybrid.prefill(head, pin=True)
    # More conversations than the saved turn states hold: each evicts the oldest.
    for n in range(hybrid.settings.models.llm_checkpoints + 1):
        await generate(hybrid, hybrid.render(conversation((f"Question {n}?", "")), TOOLS))
    briefed = replace(prefix, briefing="The booking reference is KX42.")
    prompt = hybrid.render([briefed.message(), {"role": "user", "content": "Hi."}], TOOLS)
    assert prompt.startswith(head)
    await generate(hybrid, prompt)
    stats = hybrid.last_stats
    assert stats.reused_tokens == len(hybrid.tokenize(head))  # restored, not re-evaluated
    await assert_matches_fresh(hybrid, reference)
