"""The llama.cpp adapter on the shipped SmolLM2: streaming, cancel, counting, reuse."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from models.base import LLM, CallStats, ModelError, Tokenizer

TOOL_GRAMMAR = (
    'root ::= "<tool_call>\\n{\\"name\\": \\"get_time\\", \\"arguments\\": {\\"tz\\": \\"" '
    '[A-Za-z/]+ "\\"}}\\n</tool_call>"'
)


def fresh_system() -> dict[str, str]:
    """A system message no other test used, so the cache cannot already hold it."""
    return {"role": "system", "content": f"You are Annie ({uuid.uuid4().hex[:8]})."}


async def collect(llm: LLM, prompt: str, **kwargs: object) -> str:
    return "".join([piece async for piece in llm.stream(prompt, **kwargs)])  # type: ignore[arg-type]


def test_token_counts_match_the_tokenizer(llm: LLM, tokenizer: Tokenizer) -> None:
    assert tokenizer.exact
    for text in [
        "Hello there!",
        "<|im_start|>user\nWhat's the weather in Zürich? 🌦️<|im_end|>\n",
        "  spaces   and\ttabs\n\nnew lines",
        "",
    ]:
        assert llm.count(text) == tokenizer.count(text)
        assert llm.tokenize(text) == tokenizer.tokenize(text)
    assert llm.detokenize(llm.tokenize("round trip <|im_end|>")) == "round trip <|im_end|>"


async def test_streams_pieces_and_reports_the_prompt_count(llm: LLM, tokenizer: Tokenizer) -> None:
    prompt = llm.render([fresh_system(), {"role": "user", "content": "Name three colors."}])
    pieces = [p async for p in llm.stream(prompt, max_tokens=24)]
    stats = llm.last_stats
    assert len(pieces) >= 2
    assert "".join(pieces).strip()
    assert stats.prompt_tokens == tokenizer.count(prompt)
    assert stats.evaluated_tokens == stats.prompt_tokens
    assert stats.full_reprefill
    assert 1 <= stats.generated_tokens <= 24
    assert stats.total_s >= stats.first_token_s > 0


async def test_cancel_stops_within_one_token(llm: LLM) -> None:
    prompt = llm.render(
        [fresh_system(), {"role": "user", "content": "Tell me a very long story about a dragon."}]
    )
    cancel = asyncio.Event()
    before, after = 0, 0
    async for _piece in llm.stream(prompt, max_tokens=200, cancel=cancel):
        if cancel.is_set():
            after += 1
        else:
            before += 1
            if before == 3:
                cancel.set()
    stats = llm.last_stats
    assert before == 3
    assert after <= 1
    assert stats.cancelled
    assert stats.generated_tokens <= 4


async def test_cancelled_before_start_generates_nothing(llm: LLM) -> None:
    cancel = asyncio.Event()
    cancel.set()
    prompt = llm.render([fresh_system(), {"role": "user", "content": "Hi"}])
    assert await collect(llm, prompt, cancel=cancel) == ""
    assert llm.last_stats.cancelled
    assert llm.last_stats.generated_tokens == 0


async def test_second_turn_evaluates_only_its_new_tokens(llm: LLM) -> None:
    turn1 = [fresh_system(), {"role": "user", "content": "What is the capital of France?"}]
    prompt1 = llm.render(turn1)
    answer = await collect(llm, prompt1, max_tokens=32)
    held = llm.cached_tokens  # type: ignore[attr-defined]
    # Generated tokens stay as generated: the cache is the prompt plus every emitted token.
    assert held == llm.last_stats.prompt_tokens + llm.last_stats.generated_tokens

    turn2 = [
        *turn1,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "And Italy?"},
    ]
    prompt2 = llm.render(turn2)
    assert prompt2.startswith(prompt1 + answer)
    new_text = prompt2[len(prompt1 + answer) :]
    await collect(llm, prompt2, max_tokens=8)
    stats = llm.last_stats
    assert stats.reused_tokens == held
    assert stats.evaluated_tokens == llm.count(new_text)
    assert stats.prompt_tokens == held + llm.count(new_text)
    assert not stats.full_reprefill


async def test_going_back_to_a_turn_boundary_restores_its_saved_state(llm: LLM) -> None:
    turn1 = [fresh_system(), {"role": "user", "content": "Say something about cats."}]
    prompt1 = llm.render(turn1)
    first = await collect(llm, prompt1, max_tokens=12)
    turn2 = [*turn1, {"role": "assistant", "content": first}, {"role": "user", "content": "More."}]
    await collect(llm, llm.render(turn2), max_tokens=6)

    # Regenerate turn 1: the model holds turn 2 now, so this needs the saved state.
    again = await collect(llm, prompt1, max_tokens=12)
    stats = llm.last_stats
    assert not stats.full_reprefill
    assert stats.reused_tokens == llm.count(prompt1)
    assert stats.evaluated_tokens == 0
    assert again == first  # same state, same seed: the restored state is the real one

    # A different second turn also starts from the turn-1 boundary.
    other = [*turn1, {"role": "assistant", "content": first}, {"role": "user", "content": "Dogs?"}]
    prompt_other = llm.render(other)
    await collect(llm, prompt_other, max_tokens=4)
    stats = llm.last_stats
    assert stats.reused_tokens >= llm.count(prompt1)
    assert stats.evaluated_tokens == llm.count(prompt_other) - stats.reused_tokens
    assert not stats.full_reprefill


async def test_prefill_then_stream_evaluates_nothing_new(llm: LLM) -> None:
    prompt = llm.render([fresh_system(), {"role": "user", "content": "Good morning!"}])
    stats = await llm.prefill(prompt)
    assert isinstance(stats, CallStats)
    assert stats.evaluated_tokens == llm.count(prompt)
    await collect(llm, prompt, max_tokens=4)
    assert llm.last_stats.evaluated_tokens == 0
    assert llm.last_stats.reused_tokens == llm.count(prompt)


async def test_grammar_forces_a_parseable_tool_call(llm: LLM) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_time",
                "description": "Current time in a time zone",
                "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
            },
        }
    ]
    prompt = llm.render(
        [fresh_system(), {"role": "user", "content": "What time is it in Tokyo?"}], tools
    )
    out = await collect(llm, prompt, max_tokens=64, grammar=TOOL_GRAMMAR)
    parsed = llm.parse(out)
    assert parsed.errors == []
    assert [c.name for c in parsed.calls] == ["get_time"]
    assert isinstance(parsed.calls[0].arguments["tz"], str)
    assert parsed.calls[0].id.startswith("call_")


async def test_stop_strings_end_the_stream_without_showing_them(llm: LLM) -> None:
    prompt = llm.render([fresh_system(), {"role": "user", "content": "Count: 1, 2, 3, 4, 5"}])
    free = await collect(llm, prompt, max_tokens=24)
    assert len(free) > 3
    stop = free[2:4]
    cut = await collect(llm, prompt, max_tokens=24, stop=[stop])
    assert cut == free[: free.index(stop)]


async def test_bad_grammar_and_overflow_are_model_errors(llm: LLM) -> None:
    prompt = llm.render([fresh_system(), {"role": "user", "content": "Hi"}])
    with pytest.raises(ModelError, match="grammar"):
        await collect(llm, prompt, grammar="this is not gbnf")
    with pytest.raises(ModelError, match="does not fit"):
        await collect(llm, "word " * (llm.n_ctx + 10))
    # Still usable afterwards.
    assert await collect(llm, prompt, max_tokens=4)


async def test_calls_are_served_one_at_a_time_in_order(llm: LLM) -> None:
    a = llm.render([fresh_system(), {"role": "user", "content": "Hello!"}])
    b = llm.render([fresh_system(), {"role": "user", "content": "Goodbye!"}])
    seen: list[tuple[str, float]] = []

    async def run(name: str, prompt: str) -> None:
        async for _ in llm.stream(prompt, max_tokens=8):
            seen.append((name, time.perf_counter()))

    await asyncio.gather(run("a", a), run("b", b))
    names = [n for n, _ in seen]
    assert names == sorted(names)
    assert "a" in names and "b" in names
