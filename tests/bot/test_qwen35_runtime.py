"""The front ends on the generated Qwen3.5 model: `ask`, `chat` and `replay` as a user runs them.

The model is configured the way a user configures one (`models.llm_path`), so the resolver,
the adapter, the strict template (it refuses a message list without a user turn) and the XML
tool-call dialect are all on the path. Random weights babble, so what is checked is the path,
the counts and the state, never the wording.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.cli import main
from bot.commands.chat import chat
from bot.turn.events import MODEL_FAILED, ErrorEvent, TurnDone
from models.base import LLM, Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime


@pytest.fixture
def qwen35_home(annie_home: Path, qwen35_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANNIE_MODELS__LLM_PATH", str(qwen35_path))
    # The generated tokenizer has few merges (about one token per character), so the real
    # system prompt and tool schemas need a larger window than SmolLM2's 4,096.
    monkeypatch.setenv("ANNIE_CONTEXT__WINDOW", "16384")
    monkeypatch.setenv("ANNIE_CONTEXT__RESERVE_OUTPUT", "64")
    return annie_home


def test_ask_json_answers_through_the_qwen35_model(
    qwen35_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "hello", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["path"] == "model"
    assert out["answer"] != MODEL_FAILED and out["latency_ms"] > 0
    # The status question still takes the state path on the same configuration.
    assert main(["ask", "What time is it?", "--json"]) == 0
    state = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert state["path"] == "state"


async def test_chat_on_the_qwen35_model_counts_exactly(qwen35_llm: LLM, tmp_path: Path) -> None:
    runtime = make_runtime(qwen35_llm, tmp_path, reserve=48)
    inp = io.StringIO("/context\nhello there\n/context\n/quit\n")
    out = io.StringIO()
    assert await chat(inp=inp, out=out, runtime=runtime) == 0
    text = out.getvalue()
    assert "annie>" in text
    # Random weights may babble a `<tool_call>` tag; a template or model failure must not be.
    assert "rejected the messages" not in text and MODEL_FAILED not in text
    assert "system_prompt" in text and "tool_schemas" in text
    assert "model calls (prompt / reused from cache / newly evaluated / generated):" in text


class _RefusingTokenizer(Tokenizer):
    """The real SmolLM2 tokenizer with a template that refuses one message shape."""

    TEMPLATE = (
        "{% for m in messages %}"
        "{% if 'FORBIDDEN' in m['content'] %}"
        "{{ raise_exception('This template refuses forbidden words.') }}{% endif %}"
        "<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )

    def __init__(self, inner: Tokenizer) -> None:
        self.inner = inner
        self.name = "refusing"
        self.chat_template = self.TEMPLATE

    def tokenize(self, text: str) -> list[int]:
        return self.inner.tokenize(text)

    def detokenize(self, tokens: Sequence[int]) -> str:
        return self.inner.detokenize(tokens)


async def test_a_template_error_is_a_clear_error_and_loses_no_turn(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    llm = ScriptedLLM(_RefusingTokenizer(tokenizer), ["Hello!", "Still here."])
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    await collect(session, "hi")
    events = await collect(session, "say FORBIDDEN things")
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert errors, events
    message = errors[0].message
    assert "the chat template of refusing" in message
    assert "This template refuses forbidden words." in message
    assert "messages: system, user" in message  # the shape that was refused
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.text == MODEL_FAILED
    # Every completed turn is on disk, and the refused request too.
    logged = [(e.kind, e.content) for e in runtime.store.events.find(session.id)]
    assert ("assistant", "Hello!") in logged and ("user", "say FORBIDDEN things") in logged
    # The refused turn is out of view, so the conversation goes on.
    events = await collect(session, "are you there?")
    assert next(e for e in events if isinstance(e, TurnDone)).text == "Still here."
    assert "FORBIDDEN" not in session.ledger.prompt(session.conv)
    assert any("failed" in o.reason for o in session.conv.omitted)
    await runtime.close()
