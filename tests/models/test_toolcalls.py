"""Tool-call parsing in both Qwen dialects; malformed calls are values, never exceptions."""

from __future__ import annotations

from models.base import ToolCall
from models.toolcalls import parse_output, visible_prefix


def test_qwen3_json_call() -> None:
    out = parse_output(
        'Let me check.\n<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n</tool_call>'
    )
    assert out.calls == [ToolCall("get_time", {"tz": "UTC"}, "call_1")]
    assert out.errors == []
    assert out.text == "Let me check."


def test_qwen35_xml_call_with_typed_values() -> None:
    out = parse_output(
        "<tool_call>\n<function=set_reminder>\n<parameter=text>\ncall the dentist\n"
        "</parameter>\n<parameter=minutes>\n15\n</parameter>\n<parameter=tags>\n"
        '["health", "calls"]\n</parameter>\n</function>\n</tool_call>'
    )
    assert out.errors == []
    assert len(out.calls) == 1
    call = out.calls[0]
    assert call.name == "set_reminder"
    assert call.arguments == {
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
    assert out.calls[1].arguments == {"x": 1}
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
