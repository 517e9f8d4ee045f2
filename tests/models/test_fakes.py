"""The scripted model reports what the real one reports, through the same code."""

from __future__ import annotations

import asyncio

import pytest

from models.base import LLM, CallStats, ModelError, Tokenizer
from models.fakes import ScriptedLLM


async def collect(llm: LLM, prompt: str, **kwargs: object) -> str:
    return "".join([piece async for piece in llm.stream(prompt, **kwargs)])  # type: ignore[arg-type]


def stat_tuple(stats: CallStats) -> tuple[int, int, int, bool]:
    return (stats.prompt_tokens, stats.reused_tokens, stats.evaluated_tokens, stats.full_reprefill)


async def test_scripted_model_matches_the_real_one_turn_by_turn(
    llm: LLM, tokenizer: Tokenizer
) -> None:
    # A fixed prompt no other test uses: the replies are then the same on every run. The
    # real model keeps the tokens it sampled, which may spell a reply otherwise than the
    # tokenizer would (one token fewer or more); the scripted one tokenizes the text. With
    # a prompt drawn afresh each run, a full run at adf7094 sampled such a reply.
    system = {"role": "system", "content": "You are Annie (the scripted model's twin)."}
    users = ["Hello!", "What is two plus two?", "Thanks."]

    async def converse(model: LLM) -> tuple[list[str], list[tuple[int, int, int, bool]]]:
        messages: list[dict[str, str]] = [system]
        replies, stats = [], []
        for text in users:
            messages.append({"role": "user", "content": text})
            reply = await collect(model, model.render(messages), max_tokens=16)
            replies.append(reply)
            stats.append(stat_tuple(model.last_stats))
            messages.append({"role": "assistant", "content": reply})
        return replies, stats

    real_replies, real_stats = await converse(llm)
    fake = ScriptedLLM(tokenizer, real_replies)
    fake_replies, fake_stats = await converse(fake)
    assert fake_replies == real_replies
    # The first call differs only because the real model may hold an unrelated cache.
    assert fake_stats[0][0] == real_stats[0][0]
    assert fake_stats[1:] == real_stats[1:]
    assert fake.render([system]) == llm.render([system])


async def test_scripted_model_streams_with_delay_and_cancels(tokenizer: Tokenizer) -> None:
    fake = ScriptedLLM(tokenizer, lambda prompt: "one two three four five six seven eight")
    fake.token_delay_s = 0.01
    cancel = asyncio.Event()
    got: list[str] = []
    async for piece in fake.stream(fake.render([{"role": "user", "content": "go"}]), cancel=cancel):
        got.append(piece)
        if len(got) == 2:
            cancel.set()
    assert len(got) <= 3
    assert fake.last_stats.cancelled
    assert fake.last_stats.generated_tokens <= 3


async def test_scripted_model_parses_tool_calls_and_runs_out_clearly(tokenizer: Tokenizer) -> None:
    fake = ScriptedLLM(
        tokenizer, ['<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>']
    )
    prompt = fake.render([{"role": "user", "content": "call f"}])
    out = await collect(fake, prompt)
    assert fake.parse(out).calls[0].arguments == {"a": 1}
    assert fake.prompts == [prompt]
    with pytest.raises(ModelError, match="only 1 replies"):
        await collect(fake, prompt)
    # The failed call went back to the prompt's saved state; the answer is evaluated again.
    stats = await fake.prefill(prompt + out)
    assert stats.reused_tokens == fake.count(prompt)
    assert stats.evaluated_tokens == fake.count(out)
