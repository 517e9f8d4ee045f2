"""Tool calls in the loaded model's own dialect: forced-call grammars sampled on the real
SmolLM2, arguments typed by the tool's schema before it runs, and the recovery example."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from bot.tools.base import Tool, ToolEnv, ToolOutput
from bot.tools.grammar import tool_call_grammar
from bot.tools.registry import default_registry, tool_schema
from bot.turn.events import ToolCallEvent, ToolResultEvent
from config import Settings
from models.base import LLM, Tokenizer, ToolDialect
from models.fakes import ScriptedLLM
from models.toolcalls import coerce_arguments, parse_output, write_call
from testkit.qwen35 import QWEN35_TEMPLATE
from tests.bot.conftest import collect, make_runtime

DIALECTS: list[ToolDialect] = ["json", "xml"]


class RecordArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="A label, kept exactly as given.")
    count: int
    loud: bool
    mood: Literal["calm", "busy"]
    note: str = ""


class SaveTextArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str


def recording_tool(seen: list[dict[str, Any]]) -> Tool:
    """A tool that records the arguments it ran with, so a test can tell it did not run."""

    async def record(args: RecordArgs, ctx: ToolEnv) -> ToolOutput:
        seen.append(args.model_dump())
        return ToolOutput(f"recorded {args.label}")

    return Tool("record", "Record a labelled count.", RecordArgs, record, group="core")


async def _save(args: SaveTextArgs, ctx: ToolEnv) -> ToolOutput:
    return ToolOutput("saved")


SAVE_TEXT = Tool("save_text", "Save a text exactly as given.", SaveTextArgs, _save)


class Qwen35Vocab(Tokenizer):
    """The real SmolLM2 vocabulary under the official Qwen3.5 template (the XML dialect)."""

    def __init__(self, inner: Tokenizer) -> None:
        self.inner = inner
        self.exact = inner.exact
        self.name = f"{inner.name} with the Qwen3.5 template"
        self.chat_template = QWEN35_TEMPLATE

    def tokenize(self, text: str) -> list[int]:
        return self.inner.tokenize(text)

    def detokenize(self, tokens: Sequence[int]) -> str:
        return self.inner.detokenize(tokens)


@pytest.fixture(scope="module")
def greedy_llm(model_settings: Settings) -> Iterator[LLM]:
    """SmolLM2 with greedy sampling, so each grammar's sentence is the model's best one."""
    from models import load_llm

    models = model_settings.models.model_copy(update={"llm_temperature": 0.0})
    llm = load_llm(model_settings.model_copy(update={"models": models}), n_ctx=2048)
    yield llm
    llm.close()  # type: ignore[attr-defined]


async def forced(llm: LLM, tool: Tool, request: str, dialect: ToolDialect) -> str:
    messages = [
        {"role": "system", "content": "You are Annie. Call the tool."},
        {"role": "user", "content": request},
    ]
    prompt = llm.render(messages, [tool_schema(tool)])
    grammar = tool_call_grammar(tool, dialect)
    return "".join([p async for p in llm.stream(prompt, max_tokens=200, grammar=grammar)])


def control_chars(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) == "Cc"]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_forced_call_is_one_call_in_the_dialect_that_fits_the_schema(
    greedy_llm: LLM, dialect: ToolDialect
) -> None:
    assert greedy_llm.tool_dialect == "json"  # SmolLM2's template has no tools of its own
    tool = recording_tool([])
    out = await forced(greedy_llm, tool, "Record 3 busy visitors, loudly, as 2026.", dialect)
    parsed = parse_output(out)
    assert parsed.errors == [] and len(parsed.calls) == 1, out
    call = parsed.calls[0]
    assert call.name == "record" and call.raw_args == (dialect == "xml")
    params = tool.schema()["function"]["parameters"]
    args = coerce_arguments(call.arguments, params, call.raw_args)
    assert sorted(args) == ["count", "label", "loud", "mood"]  # required ones only
    assert type(args["label"]) is str and args["label"] and not control_chars(args["label"])
    assert type(args["count"]) is int and type(args["loud"]) is bool
    assert args["mood"] in ("calm", "busy")
    # Spelled exactly as the dialect writes a call, framing newlines included.
    assert out == write_call("record", args, dialect)
    assert RecordArgs.model_validate(args)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_forced_string_never_holds_a_control_character(
    greedy_llm: LLM, dialect: ToolDialect
) -> None:
    """The model is asked to copy text full of line breaks and tabs: the string grammar is
    what keeps them out (the parser rejects a JSON string holding one)."""
    poem = "Roses\tare red,\nviolets\tare blue,\n\tsugar is sweet\n\nand so are you."
    out = await forced(greedy_llm, SAVE_TEXT, f"Save this poem exactly:\n{poem}", dialect)
    parsed = parse_output(out)
    assert parsed.errors == [] and len(parsed.calls) == 1, out
    call = parsed.calls[0]
    text = coerce_arguments(call.arguments, {"properties": {"text": {"type": "string"}}}, True)
    assert text["text"] and not control_chars(text["text"])
    framing = {"json": 2, "xml": 6}[dialect]  # the newlines the template itself writes
    assert out.count("\n") == framing and not control_chars(out.replace("\n", ""))


def test_the_grammars_exclude_every_control_character() -> None:
    for dialect in DIALECTS:
        rules = dict(
            line.split(" ::= ", 1)
            for line in tool_call_grammar(SAVE_TEXT, dialect).splitlines()
            if " ::= " in line
        )
        assert r"\x00-\x1f\x7f-\x9f" in rules["char"] and r"\x00-\x1f\x7f-\x9f" in rules["tchar"]
        assert "bnrt" not in rules["char"]  # no escape that decodes to a control character
        assert rules["tchar"].startswith("[^<")  # a bare XML string cannot open a tag
    head = tool_call_grammar(SAVE_TEXT, "xml").splitlines()[0]
    assert head == (
        r'root ::= "<tool_call>\n<function=save_text>\n" "<parameter=text>\n" text '
        r'"\n</parameter>\n" "</function>\n</tool_call>"'
    )


async def test_arguments_are_typed_by_the_schema_before_the_tool_runs(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    seen: list[dict[str, Any]] = []
    bad = {"label": "2026", "count": "abc", "loud": "yes", "mood": "angry"}
    good = {"label": "2026", "count": "7", "loud": "true", "mood": "calm", "note": "null"}
    llm = ScriptedLLM(
        Qwen35Vocab(tokenizer),
        [write_call("record", bad, "xml"), write_call("record", good, "xml"), "Recorded."],
    )
    assert llm.tool_dialect == "xml"
    runtime = make_runtime(llm, tmp_path, extra=[recording_tool(seen)])
    session = runtime.open_session()
    events = await collect(session, "Record it.")
    assert [e.ok for e in events if isinstance(e, ToolResultEvent)] == [False, True]
    # The year stays a string, the count and flag are typed: the tool ran once, like this.
    assert seen == [{"label": "2026", "count": 7, "loud": True, "mood": "calm", "note": "null"}]
    error = runtime.store.events.find(session.id, kinds=["tool_result"])[0].content
    assert error == (
        'error: bad arguments for record: count: expected an integer, got "abc"; '
        'loud: expected true or false, got "yes"; '
        'mood: expected one of "calm", "busy", got "angry"'
    )
    assert error in session.ledger.prompt(session.conv)  # the model reads why
    await runtime.close()


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_the_recovery_message_shows_the_models_own_dialect(
    tokenizer: Tokenizer, tmp_path: Path, dialect: ToolDialect
) -> None:
    vocab = Qwen35Vocab(tokenizer) if dialect == "xml" else tokenizer
    unclosed = "<tool_call>\n<function=record>\n<parameter=label>\nx\n</parameter>\n</tool_call>"
    llm = ScriptedLLM(vocab, [unclosed, "Sorry, I could not record it."])
    assert llm.tool_dialect == dialect
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    await collect(session, "Record it.")
    message = runtime.store.events.find(session.id, kinds=["tool_result"])[0].content
    assert message.startswith("error: your tool call could not be read (")
    assert ("<function=" in message) == (dialect == "xml")
    assert ('{"name"' in message) == (dialect == "json")
    await runtime.close()


async def test_a_forced_call_on_a_qwen35_model_is_written_in_xml(
    qwen35_llm: LLM, tmp_path: Path
) -> None:
    """The session hands the loaded model's dialect to the grammar: the generated Qwen3.5
    model (random weights, its real template) still writes one well-formed XML call."""
    assert qwen35_llm.tool_dialect == "xml"
    seen: list[dict[str, Any]] = []
    # Its vocabulary is mostly single bytes: an 80-character label can take 320 tokens.
    tool = recording_tool(seen)
    runtime = make_runtime(qwen35_llm, tmp_path, rounds=1, reserve=640, extra=[tool])
    session = runtime.open_session()
    events = await collect(session, "Record it.", tool_choice="record")
    assert [e.name for e in events if isinstance(e, ToolCallEvent)] == ["record"]
    assert [e.ok for e in events if isinstance(e, ToolResultEvent)] == [True]
    assert len(seen) == 1 and seen[0]["mood"] in ("calm", "busy")
    raw = runtime.store.events.find(session.id, kinds=["assistant"])[0].meta["raw"]
    assert raw.startswith("<tool_call>\n<function=record>\n<parameter=label>\n")
    await runtime.close()


@pytest.mark.slow  # every tool in both dialects on the real model: the full run only
async def test_every_registered_tool_can_be_forced_in_either_dialect(greedy_llm: LLM) -> None:
    """Each shipped tool's grammars parse in llama.cpp, and the call each forces reads back as
    one call whose arguments the tool accepts (enums, nested arrays, unions included)."""
    registry = default_registry()
    for tool in (t for group in registry.groups.values() for t in group.tools):
        params = tool.schema()["function"]["parameters"]
        for dialect in DIALECTS:  # one after the other: the second reuses the prompt's cache
            out = await forced(greedy_llm, tool, f"Use {tool.name}.", dialect)
            parsed = parse_output(out)
            assert parsed.errors == [] and len(parsed.calls) == 1, out
            call = parsed.calls[0]
            assert tool.args.model_validate(coerce_arguments(call.arguments, params, call.raw_args))
