"""Parse tool calls out of model output, in both Qwen dialects, without ever raising.

- Qwen3: `<tool_call>{"name": "...", "arguments": {...}}</tool_call>`
- Qwen3.5: `<tool_call><function=NAME><parameter=ARG>value</parameter></function></tool_call>`,
  where each value is JSON when it parses as JSON and a plain string otherwise.
Anything that looks like a call but cannot be read becomes a `ToolCallError` with the raw
text and the reason, so the caller can tell the model what went wrong and let it retry.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from models.base import ParsedOutput, ToolCall, ToolCallError

OPEN = "<tool_call>"
CLOSE = "</tool_call>"

_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\n]*)>(.*?)(?:</function>|$)", re.DOTALL)
_CALL_OR_THINK = re.compile(r"<tool_call>.*?(?:</tool_call>|$)|<think>.*?</think>\s*", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)(?:</parameter>|(?=<parameter=)|$)", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


def _value(raw: str) -> Any:
    # The template writes values on their own lines; the newlines are framing, not data.
    text = raw[1:] if raw.startswith("\n") else raw
    text = text[:-1] if text.endswith("\n") else text
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text


def _parse_json(body: str, raw: str, ids: Iterator[str]) -> ToolCall | ToolCallError:
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        return ToolCallError(raw, f"tool call is not valid JSON: {exc.msg} at char {exc.pos}")
    if not isinstance(data, dict):
        return ToolCallError(raw, "tool call JSON must be an object with name and arguments")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        return ToolCallError(raw, "tool call has no function name")
    args = data.get("arguments", data.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return ToolCallError(raw, "tool call arguments are a string that is not JSON")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return ToolCallError(raw, "tool call arguments must be a JSON object")
    call_id = data.get("id")
    return ToolCall(
        name.strip(), args, call_id if isinstance(call_id, str) and call_id else next(ids)
    )


def _parse_xml(body: str, raw: str, ids: Iterator[str]) -> list[ToolCall | ToolCallError]:
    out: list[ToolCall | ToolCallError] = []
    for match in _FUNCTION.finditer(body):
        name = match.group(1).strip()
        if not name:
            out.append(ToolCallError(raw, "tool call <function=...> has no name"))
            continue
        if not match.group(0).endswith("</function>"):
            out.append(ToolCallError(raw, f"tool call {name}: <function> is not closed"))
            continue
        args: dict[str, Any] = {}
        for param in _PARAMETER.finditer(match.group(2)):
            key = param.group(1).strip()
            if not key:
                out.append(ToolCallError(raw, f"tool call {name}: a parameter has no name"))
                break
            args[key] = _value(param.group(2))
        else:
            out.append(ToolCall(name, args, next(ids)))
    if not out:
        out.append(ToolCallError(raw, "tool call has neither JSON nor <function=NAME>"))
    return out


def parse_output(text: str, ids: Iterator[str] | None = None) -> ParsedOutput:
    """Split `text` into visible text, typed calls and recoverable errors."""
    ids = ids if ids is not None else (f"call_{n}" for n in itertools.count(1))
    calls: list[ToolCall] = []
    errors: list[ToolCallError] = []
    visible: list[str] = []
    pos = 0
    for match in _BLOCK.finditer(text):
        visible.append(text[pos : match.start()])
        pos = match.end()
        raw = match.group(0)
        body = match.group(1).strip()
        found: list[ToolCall | ToolCallError]
        if body.startswith("{"):
            found = [_parse_json(body, raw, ids)]
        elif "<function=" in body:
            found = _parse_xml(body, raw, ids)
        elif not body:
            found = [ToolCallError(raw, "empty tool call")]
        else:
            found = [ToolCallError(raw, "tool call has neither JSON nor <function=NAME>")]
        for item in found:
            if isinstance(item, ToolCall):
                calls.append(item)
            else:
                errors.append(item)
    rest = text[pos:]
    cut = rest.find(OPEN)
    if cut >= 0:
        # Output stopped inside a call (max tokens or a stop string): keep it as an error.
        errors.append(ToolCallError(rest[cut:], "tool call was cut off before </tool_call>"))
        rest = rest[:cut]
    visible.append(rest)
    joined = _THINK.sub("", "".join(visible)).replace(CLOSE, "")
    return ParsedOutput(text=joined.strip(), calls=calls, errors=errors)


def final_visible(raw: str) -> str:
    """Generated text minus tool-call blocks (complete or cut off) and think blocks."""
    return _CALL_OR_THINK.sub("", raw)


def visible_prefix(text: str) -> str:
    """The part of streamed text that is safe to show or speak now.

    Text inside a tool call is hidden, and so is a trailing fragment that could be the start
    of `<tool_call>`, so no caption or voice ever shows half a tag.
    """
    out: list[str] = []
    pos = 0
    while True:
        start = text.find(OPEN, pos)
        if start < 0:
            tail = text[pos:]
            for n in range(min(len(OPEN) - 1, len(tail)), 0, -1):
                if OPEN.startswith(tail[-n:]):
                    tail = tail[:-n]
                    break
            out.append(tail)
            break
        out.append(text[pos:start])
        end = text.find(CLOSE, start)
        if end < 0:
            break
        pos = end + len(CLOSE)
    return _THINK.sub("", "".join(out))
