"""Tool calls in both Qwen dialects: parsing (malformed calls are values, never exceptions),
the dialect each template teaches, typing by the tool's schema, and writing calls back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from models.base import Tokenizer, ToolCall
from models.chat_template import ChatTemplate
from models.toolcalls import (
    ArgumentError,
    call_example,
    coerce_arguments,
    parse_output,
    visible_prefix,
    write_call,
)
from testkit.qwen35 import QWEN35_TEMPLATE

QWEN3_TEMPLATE = (Path(__file__).parents[1] / "context" / "qwen3_template.jinja").read_text("utf-8")


def test_qwen3_json_call() -> None:
    out = parse_output(
        'Let me check.\n<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n</tool_call>'
    )
    assert out.calls == [ToolCall("get_time", {"tz": "UTC"}, "call_1")]
    assert out.errors == []
    assert out.text == "Let me check."


def test_qwen35_xml_call_keeps_text_until_the_schema_types_it() -> None:
    out = parse_output(
        "<tool_call>\n<function=set_reminder>\n<parameter=text>\ncall the dentist\n"
        "</parameter>\n<parameter=minutes>\n15\n</parameter>\n<parameter=tags>\n"
        '["health", "calls"]\n</parameter>\n</function>\n</tool_call>'
    )
    assert out.errors == []
    assert len(out.calls) == 1
    call = out.calls[0]
    assert call.name == "set_reminder"
    assert call.raw_args
    assert call.arguments == {
        "text": "call the dentist",
        "minutes": "15",
        "tags": '["health", "calls"]',
    }
    schema = {
        "properties": {
            "text": {"type": "string"},
            "minutes": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
        }
    }
    assert coerce_arguments(call.arguments, schema, call.raw_args) == {
        "text": "call the dentist",
        "minutes": 15,
        "tags": ["health", "calls"],
    }
    assert out.text == ""


def test_multiple_calls_in_both_dialects_get_distinct_ids() -> None:
    out = parse_output(
        'First <tool_call>{"name": "a", "arguments": {}}</tool_call> then '
        "<tool_call><function=b><parameter=x>1</parameter></function></tool_call> done"
    )
    assert [c.name for c in out.calls] == ["a", "b"]
    assert [c.raw_args for c in out.calls] == [False, True]
    assert out.calls[1].arguments == {"x": "1"}
    assert len({c.id for c in out.calls}) == 2
    assert out.text == "First  then  done"


def test_id_in_json_is_kept_and_string_arguments_are_decoded() -> None:
    out = parse_output(
        '<tool_call>{"id": "abc", "name": "f", "arguments": "{\\"q\\": \\"x\\"}"}</tool_call>'
    )
    assert out.calls == [ToolCall("f", {"q": "x"}, "abc")]


def test_malformed_calls_become_errors_with_reasons() -> None:
    out = parse_output(
        'ok <tool_call>{"name": "f", "arguments": {</tool_call>'
        '<tool_call>{"arguments": {}}</tool_call>'
        "<tool_call>just words</tool_call>"
        '<tool_call>{"name": "g", "arguments": [1]}</tool_call>'
        '<tool_call>{"name": "h", "arguments": {"a": 1}}</tool_call>'
        '<tool_call>{"name": "cut", "argu'
    )
    assert [c.name for c in out.calls] == ["h"]
    reasons = [e.reason for e in out.errors]
    assert len(reasons) == 5
    assert "not valid JSON" in reasons[0]
    assert "no function name" in reasons[1]
    assert "neither JSON" in reasons[2]
    assert "must be a JSON object" in reasons[3]
    assert "cut off" in reasons[4]
    assert out.errors[0].raw.startswith("<tool_call>")
    assert out.text == "ok"


def test_unclosed_xml_function_is_an_error() -> None:
    out = parse_output("<tool_call><function=f><parameter=a>1</parameter></tool_call>")
    assert out.calls == []
    assert "not closed" in out.errors[0].reason


def test_visible_prefix_hides_calls_and_partial_tags() -> None:
    assert visible_prefix("Sure. <tool_") == "Sure. "
    assert visible_prefix('Sure. <tool_call>{"name"') == "Sure. "
    assert visible_prefix('A <tool_call>{"name": "f"}</tool_call> B') == "A  B"
    assert visible_prefix("<think>\n\n</think>\n\nHello") == "Hello"


def test_the_dialect_comes_from_the_loaded_template(tokenizer: Tokenizer) -> None:
    assert ChatTemplate(QWEN35_TEMPLATE).dialect == "xml"
    assert ChatTemplate(QWEN3_TEMPLATE).dialect == "json"
    smollm2 = ChatTemplate(tokenizer.chat_template)
    assert not smollm2.native_tools  # no tool support: Annie renders tools the Qwen3 way
    assert smollm2.dialect == "json"
    assert ChatTemplate(None).dialect == "json"  # the ChatML fallback
    # Llama 3.1 writes `<function=NAME>{json}`: a function tag alone is not the XML dialect.
    assert ChatTemplate("{{ '<function=' + name + '>' + args + '</function>' }}").dialect == "json"


# Every kind of value a schema can ask for, including strings that look like something else.
ARGS: dict[str, Any] = {
    "year": "2026",
    "flag": "true",
    "nothing": "null",
    "spaced": " spaced ",
    "lines": "first line\n  second line\n",
    "empty": "",
    "count": 42,
    "negative": -7,
    "ratio": 2.5,
    "tiny": 1e-07,
    "on": True,
    "off": False,
    "tags": ["a", "b c"],
    "matrix": [[1, 2], [3.5, None]],
    "options": {"depth": 2, "mode": "fast", "nested": {"ok": True}},
}
_NUMBER_OR_NULL = {"anyOf": [{"type": "number"}, {"type": "null"}]}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{k: {"type": "string"} for k in ("year", "flag", "nothing", "spaced", "lines", "empty")},
        "count": {"type": "integer"},
        "negative": {"type": "integer"},
        "ratio": {"type": "number"},
        "tiny": {"type": "number"},
        "on": {"type": "boolean"},
        "off": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "matrix": {"type": "array", "items": {"type": "array", "items": _NUMBER_OR_NULL}},
        "options": {"type": "object"},
    },
}


def rendered_call(template: ChatTemplate, arguments: dict[str, Any]) -> str:
    """A user turn and an assistant turn with one call, as the template itself renders it."""
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "configure", "arguments": arguments},
    }
    messages = [
        {"role": "user", "content": "Configure it."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]
    return template.render(messages, add_generation_prompt=False)


@pytest.mark.parametrize(
    ("source", "dialect"),
    [(QWEN35_TEMPLATE, "xml"), (QWEN3_TEMPLATE, "json"), (None, "json")],
    ids=["qwen3.5", "qwen3", "chatml"],
)
def test_calls_rendered_by_the_template_read_back_exactly(source: str | None, dialect: str) -> None:
    template = ChatTemplate(source)
    assert template.dialect == dialect
    out = parse_output(rendered_call(template, ARGS))
    assert out.errors == [] and len(out.calls) == 1
    call = out.calls[0]
    assert call.name == "configure" and call.raw_args == (dialect == "xml")
    typed = coerce_arguments(call.arguments, SCHEMA, call.raw_args)
    assert typed == ARGS
    # == alone would let 1 pass for True and 2026 for "2026".
    assert {k: type(v) for k, v in typed.items()} == {k: type(v) for k, v in ARGS.items()}


def test_write_call_writes_what_the_templates_write() -> None:
    assert write_call("configure", ARGS, "json") in rendered_call(
        ChatTemplate(QWEN3_TEMPLATE), ARGS
    )
    # Jinja's `string` filter writes True/None where we write true/null; all else is the same.
    plain = {k: v for k, v in ARGS.items() if not isinstance(v, bool)}
    xml = write_call("configure", plain, "xml")
    assert xml in rendered_call(ChatTemplate(QWEN35_TEMPLATE), plain)
    for dialect in ("json", "xml"):
        out = parse_output(write_call("configure", ARGS, dialect))  # type: ignore[arg-type]
        assert coerce_arguments(out.calls[0].arguments, SCHEMA, out.calls[0].raw_args) == ARGS


@pytest.mark.parametrize("dialect", ["json", "xml"])
def test_the_recovery_example_is_a_readable_call_in_its_dialect(dialect: Any) -> None:
    example = call_example(dialect)
    out = parse_output(example)
    assert out.errors == [] and len(out.calls) == 1
    assert out.calls[0].raw_args == (dialect == "xml")
    assert ("<function=" in example) == (dialect == "xml")
    assert ('{"name"' in example) == (dialect == "json")


RULES_SCHEMA: dict[str, Any] = {
    "properties": {
        "label": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "loud": {"type": "boolean"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "level": {"enum": [1, 2, 3]},
        "mood": {"type": "string", "enum": ["calm", "busy"]},
        "when": {"$ref": "#/$defs/Slot"},
        "rows": {
            "type": "array",
            "items": {
                "type": "array",
                "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
        },
    },
    "$defs": {"Slot": {"type": "object", "properties": {"hour": {"type": "integer"}}}},
}


def test_xml_text_is_typed_by_the_schema() -> None:
    raw = {
        "label": "007",
        "count": " 12 ",
        "ratio": "-0.5",
        "loud": "False",  # Python's spelling, as the template's Jinja writes booleans
        "note": "null",  # a string alternative wins: text stays text
        "limit": "None",
        "level": "2",
        "mood": "busy",
        "when": '{"hour": "9"}',
        "rows": '[["a", 1], ["2"]]',
        "extra": "[1, 2]",  # no schema: JSON when it parses ...
        "free": "not json",  # ... else the text
    }
    assert coerce_arguments(raw, RULES_SCHEMA, raw=True) == {
        "label": "007",
        "count": 12,
        "ratio": -0.5,
        "loud": False,
        "note": "null",
        "limit": None,
        "level": 2,
        "mood": "busy",
        "when": {"hour": 9},
        "rows": [["a", 1], ["2"]],
        "extra": [1, 2],
        "free": "not json",
    }


def test_json_values_are_checked_and_text_is_read_for_other_types() -> None:
    args = {"count": "5", "ratio": 4, "loud": True, "level": 3, "limit": None, "extra": "[1]"}
    assert coerce_arguments(args, RULES_SCHEMA, raw=False) == {
        "count": 5,
        "ratio": 4,
        "loud": True,
        "level": 3,
        "limit": None,
        "extra": "[1]",  # JSON already typed it: a string with no schema stays a string
    }
    assert coerce_arguments({"count": 3.0}, RULES_SCHEMA, raw=False) == {"count": 3}


def test_values_that_do_not_fit_are_errors_naming_parameter_type_and_value() -> None:
    cases: list[tuple[dict[str, Any], bool, str]] = [
        ({"count": "abc"}, True, 'count: expected an integer, got "abc"'),
        ({"count": 3.5}, False, "count: expected an integer, got 3.5"),
        ({"count": "3.5"}, True, 'count: expected an integer, got "3.5"'),
        ({"count": True}, False, "count: expected an integer, got true"),
        ({"loud": "yes"}, True, 'loud: expected true or false, got "yes"'),
        ({"mood": "angry"}, True, 'mood: expected one of "calm", "busy", got "angry"'),
        ({"level": "7"}, True, 'level: expected one of 1, 2, 3, got "7"'),
        ({"level": True}, False, "level: expected one of 1, 2, 3, got true"),
        ({"label": 2026}, False, "label: expected a string, got 2026"),
        ({"ratio": "NaN"}, True, 'ratio: expected a number, got "NaN"'),
        ({"limit": "many"}, True, 'limit: expected an integer or null, got "many"'),
        ({"rows": '[["a", 1.5]]'}, True, "rows.0.1: expected a string or an integer, got 1.5"),
        ({"when": '{"hour": "nine"}'}, True, 'when.hour: expected an integer, got "nine"'),
    ]
    for args, raw, message in cases:
        with pytest.raises(ArgumentError) as info:
            coerce_arguments(args, RULES_SCHEMA, raw)
        assert str(info.value) == message, args
    with pytest.raises(ArgumentError) as info:
        coerce_arguments({"count": "x", "label": "fine", "loud": "maybe"}, RULES_SCHEMA, True)
    assert str(info.value) == (
        'count: expected an integer, got "x"; loud: expected true or false, got "maybe"'
    )
