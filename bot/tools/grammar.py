"""GBNF grammars that make the model call one named tool (`tool_choice`).

The grammar spells the Qwen3 JSON dialect exactly (`<tool_call>` + {"name", "arguments"} +
`</tool_call>`), with the tool's required arguments typed from its JSON schema; optional
arguments are left out. Used when a caller requires a specific tool, and by tests that need
even a very small model to emit a well-formed call.
"""

from __future__ import annotations

import json
from typing import Any

from bot.tools.base import Tool

_RULES = r"""
string ::= "\"" char{1,80} "\""
char ::= [^"\\\n<>] | "\\" ["\\/bnrt]
integer ::= "-"? [0-9]{1,9}
number ::= integer ("." [0-9]{1,6})?
boolean ::= "true" | "false"
"""


def _literal(text: str) -> str:
    return json.dumps(text)


def _value_rule(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return " | ".join(_literal(json.dumps(v)) for v in spec["enum"])
    kind = spec.get("type", "string")
    return {"integer": "integer", "number": "number", "boolean": "boolean"}.get(kind, "string")


def tool_call_grammar(tool: Tool) -> str:
    """A GBNF grammar whose only sentence is one call to `tool` with its required arguments."""
    params = tool.schema()["function"]["parameters"]
    props: dict[str, Any] = params.get("properties", {})
    required = [name for name in params.get("required", []) if name in props]
    parts: list[str] = []
    for i, name in enumerate(required):
        sep = ", " if i else ""
        parts.append(f"{_literal(sep + json.dumps(name) + ': ')} ({_value_rule(props[name])})")
    args = " ".join(parts) if parts else '""'
    head = _literal('<tool_call>\n{"name": ' + json.dumps(tool.name) + ', "arguments": {')
    tail = _literal("}}\n</tool_call>")
    return f"root ::= {head} {args} {tail}\n{_RULES}"
