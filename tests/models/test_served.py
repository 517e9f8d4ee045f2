"""The chat model on a real serving engine (llama-cpp-python's server in a child process, on
SmolLM2 and on the generated Qwen3.5): exact counts against the server's own tokenizer,
streaming, cancel that stops the engine, and clear errors when the server is missing, too
small, or goes away mid-answer."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from context.ledger import Ledger
from models import LLM, ModelError, load_llm
from models.served import AGREEMENT_SAMPLE, ServedLLM
from models.served_api import CallFigures, ServerInfo, completion_body, read_figures
from models.served_template import template_from_file
from testkit.llama_server import LlamaCppServer, free_port
from tests.conftest import served_settings
from tests.context.helpers import random_conversation

LONG = "Write a very long story about a dragon, a knight and a castle, with many chapters."


def served(llm: LLM) -> ServedLLM:
    assert isinstance(llm, ServedLLM)
    return llm


def test_the_engine_is_recognised_and_counts_stay_local_when_they_agree(
    served_llm: LLM,
) -> None:
    llm = served(served_llm)
    assert llm.backend == "server" and llm.info.kind == "llama-cpp-python"
    # llama-cpp-python's server offers neither its template nor its context length.
    assert llm.info.template is None and llm.info.n_ctx is None
    assert llm.counts_locally
    assert llm.tokenize(AGREEMENT_SAMPLE) == llm.server_tokenize(AGREEMENT_SAMPLE)


@pytest.mark.parametrize("seed", range(6))
def test_the_ledger_total_equals_the_servers_count_for_many_shapes(
    served_llm: LLM, seed: int
) -> None:
    llm = served(served_llm)
    ledger = Ledger(llm, window=200_000)
    conv = random_conversation(700 + seed, items=24)
    prompt = ledger.prompt(conv)
    assert ledger.usage(conv).total == len(llm.server_tokenize(prompt))


async def test_the_engines_own_prompt_count_equals_the_ledgers(served_llm: LLM) -> None:
    llm = served(served_llm)
    ledger = Ledger(llm, window=200_000)
    conv = random_conversation(42, items=8)
    prompt = ledger.prompt(conv)
    async with httpx.AsyncClient(base_url=llm.url) as client:
        body = {"model": llm.info.model, "prompt": prompt, "max_tokens": 1}
        usage = (await client.post("/v1/completions", json=body, timeout=60)).json()["usage"]
    bos = len(llm._bos_prefix())  # what this engine adds before the text itself
    assert usage["prompt_tokens"] == ledger.usage(conv).total + bos


async def test_streaming_reports_what_the_engine_says_and_no_more(served_llm: LLM) -> None:
    llm = served(served_llm)
    prompt = llm.render([{"role": "user", "content": "Say hello."}])
    text = "".join([piece async for piece in llm.stream(prompt, max_tokens=12)])
    stats = llm.last_stats
    assert text and stats.generated_tokens >= 1 and stats.first_token_s > 0
    assert stats.prompt_tokens == llm.count(prompt)
    # This engine sends no cache figures: unknown, not zero evaluated.
    assert not stats.cache_reported


async def test_cancel_closes_the_stream_and_the_engine_stops(
    served_smollm2: LlamaCppServer, tmp_path: Path
) -> None:
    llm = served(load_llm(served_settings(served_smollm2, tmp_path, 4096)))
    prompt = llm.render([{"role": "user", "content": LONG}])
    cancel = asyncio.Event()
    pieces = 0
    async for _ in llm.stream(prompt, max_tokens=1500, cancel=cancel):
        pieces += 1
        if pieces == 3:
            cancel.set()
    assert llm.last_stats.cancelled and pieces == 3
    # The engine noticed the client leaving and stopped: it says so, and it is free at once.
    deadline = time.monotonic() + 10
    while "Disconnected from client" not in served_smollm2.log() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert "Disconnected from client" in served_smollm2.log()
    t0 = time.perf_counter()
    short = "".join([p async for p in llm.stream(prompt, max_tokens=2)])
    assert short and time.perf_counter() - t0 < 5.0  # 1,500 tokens would take far longer


async def test_two_streams_at_once_each_get_their_own_answer(served_llm: LLM) -> None:
    llm = served(served_llm)

    async def ask(word: str) -> tuple[str, int]:
        prompt = llm.render([{"role": "user", "content": f"Repeat the word {word}."}])
        text = "".join([p async for p in llm.stream(prompt, max_tokens=8)])
        return text, llm.last_stats.prompt_tokens

    (a, na), (b, nb) = await asyncio.gather(ask("apple"), ask("cathedral"))
    assert a and b
    # Each task sees the figures of its own call, not the other's.
    assert na == llm.count(llm.render([{"role": "user", "content": "Repeat the word apple."}]))
    assert nb == llm.count(llm.render([{"role": "user", "content": "Repeat the word cathedral."}]))


def test_a_server_that_is_not_there_names_the_address_and_the_fix(tmp_path: Path) -> None:
    from config import load_settings

    url = f"http://127.0.0.1:{free_port()}"
    settings = load_settings(models={"llm_backend": "server", "llm_url": url})
    with pytest.raises(ModelError, match=r"127\.0\.0\.1.*llm_backend") as info:
        load_llm(settings)
    assert url in str(info.value)
    with pytest.raises(ModelError, match="llm_url is empty"):
        load_llm(load_settings(models={"llm_backend": "server"}))


async def test_the_server_going_away_mid_answer_is_a_clear_model_error(
    qwen35_path: Path, tmp_path: Path
) -> None:
    with LlamaCppServer(qwen35_path, n_ctx=2048) as server:
        llm = served(load_llm(served_settings(server, tmp_path, 2048)))
        prompt = llm.render([{"role": "user", "content": LONG}])
        got: list[str] = []
        with pytest.raises(ModelError, match="stopped answering") as info:
            async for piece in llm.stream(prompt, max_tokens=1500):
                got.append(piece)
                if len(got) == 2:
                    server.kill()
        assert server.url in str(info.value) and len(got) >= 2


def test_a_template_file_serves_where_the_engine_offers_none(tmp_path: Path) -> None:
    config = tmp_path / "tokenizer_config.json"
    config.write_text(
        '{"chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\\n{{ m.content }}'
        '<|im_end|>\\n{% endfor %}", "eos_token": {"content": "<|im_end|>"}}'
    )
    template = template_from_file(config)
    assert template.eos_token == "<|im_end|>"
    assert template.render([{"role": "user", "content": "hi"}], None, False) == (
        "<|im_start|>user\nhi<|im_end|>\n"
    )
    with pytest.raises(ModelError, match="does not exist"):
        template_from_file(tmp_path / "missing.jinja")


def test_engine_figures_are_read_where_each_engine_puts_them() -> None:
    """The last chunk of llama-server's and vLLM's streams, as their servers write them."""
    llama = CallFigures()
    read_figures(
        {
            "choices": [{"text": "", "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": 900,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": 880},
            },
            "timings": {"cache_n": 880, "prompt_n": 20, "predicted_n": 7},
        },
        llama,
    )
    assert (llama.prompt_tokens, llama.cached_tokens, llama.evaluated_tokens) == (900, 880, 20)
    vllm = CallFigures()
    read_figures(
        {
            "choices": [],
            "usage": {
                "prompt_tokens": 900,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": 768},
            },
        },
        vllm,
    )
    assert (vllm.cached_tokens, vllm.evaluated_tokens) == (768, 132)
    silent = CallFigures()
    read_figures({"choices": [{"text": "hi"}]}, silent)
    assert silent.cached_tokens is None and silent.evaluated_tokens is None
    body = completion_body(
        ServerInfo("vllm", "qwen"),
        "p",
        max_tokens=4,
        stop=[],
        grammar='root ::= "a"',
        sampling={},
    )
    assert body["stream_options"] == {"include_usage": True}
    assert body["structured_outputs"] == {"grammar": 'root ::= "a"'}


def test_another_models_vocabulary_never_stands_in_for_the_served_one(
    served_qwen35: LlamaCppServer, tmp_path: Path
) -> None:
    from config import load_settings

    # No GGUF named: the local vocabulary found is the packaged SmolLM2, not the served model.
    bare = {"llm_backend": "server", "llm_url": served_qwen35.url}
    with pytest.raises(ModelError, match="does not offer its chat template"):
        load_llm(load_settings(models=bare, context={"window": 4096}))
    named = load_settings(
        models={**bare, "llm_template": str(served_qwen35.model)}, context={"window": 4096}
    )
    llm = served(load_llm(named))
    assert not llm.counts_locally  # counted by the server's own tokenizer
    assert llm.tool_dialect == "xml"
    prompt = llm.render([{"role": "user", "content": "Hi there."}])
    assert llm.count(prompt) == len(llm.server_tokenize(prompt))
