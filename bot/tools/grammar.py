"""GBNF grammars that make the model call one named tool (`tool_choice`), in its own dialect.

The only sentence a grammar admits is one call to the tool, spelled as the loaded model's
template writes an assistant's call (`LLM.tool_dialect`):
- "json" (Qwen3): `<tool_call>` NL `{"name": ..., "arguments": {...}}` NL `</tool_call>`
- "xml" (Qwen3.5): `<tool_call>` NL `<function=NAME>` NL, per argument `<parameter=ARG>` NL
  value NL `</parameter>` NL, then `</function>` NL `</tool_call>`. Strings are bare, other
  values JSON, as llama.cpp's own Qwen3.5 grammar writes them (`true` where the template's
  Jinja `string` filter writes `True`; the parser reads both).
The tool's required arguments are typed from its JSON schema; optional ones are left out.
Strings are bounded and hold no control character, and a bare XML string holds no `<`, so
it cannot open or close a tag: whatever the model samples reads back as exactly one call
whose arguments fit the schema. Used when a caller requires a specific tool, and by tests
that need even a very small model to emit a well-formed call.
"""

from __future__ import annotations

import json
from typing import Any

from bot.tools.base import Tool
from models.base import ToolDialect

# Control characters are C0, DEL and C1 (Unicode category Cc). JSON strings keep only the
# escapes that decode to printable text, so no decoded value holds a control character either.
# Numbers are spelled as JSON spells them (no leading zeros, no "-0"), or JSON cannot read them.
_RULES = r"""
string ::= "\"" char{1,80} "\""
char ::= [^"\\<>\x00-\x1f\x7f-\x9f] | "\\" ["\\/]
text ::= tchar{1,80}
tchar ::= [^<\x00-\x1f\x7f-\x9f]
integer ::= "0" | "-"? [1-9] [0-9]{0,8}
number ::= "-"? ("0" | [1-9] [0-9]{0,8}) ("." [0-9]{1,6})?
boolean ::= "true" | "false"
null ::= "null"
value ::= string | number | boolean | null | array | object
array ::= "[" (value (", " value){0,7})? "]"
object ::= "{" (string ": " value (", " string ": " value){0,7})? "}"
"""

_SCALARS = {"integer": "integer", "number": "number", "boolean": "boolean", "null": "null"}


def _literal(text: str) -> str:
    return json.dumps(text)


def _json_rule(spec: Any) -> str:
    """An expression for `spec`'s value written as JSON (the JSON dialect, nested values)."""
    if not isinstance(spec, dict):
        return "value"
    if "enum" in spec or "const" in spec:
        choices = spec["enum"] if "enum" in spec else [spec["const"]]
        return "(" + " | ".join(_literal(json.dumps(v)) for v in choices) + ")"
    alternatives = spec.get("anyOf", spec.get("oneOf"))
    if isinstance(alternatives, list) and alternatives:
        return "(" + " | ".join(_json_rule(a) for a in alternatives) + ")"
    kind = spec.get("type")
    if kind == "array" and isinstance(spec.get("items"), dict):
        item = _json_rule(spec["items"])
        # At most 8 items unless more are required: a forced call must close in its budget.
        low = int(spec.get("minItems", 0))
        high = max(low, min(int(spec.get("maxItems", 8)), 8))
        if high == 0:
            return '"[]"'
        more = f'(", " {item}){{{max(low - 1, 0)},{high - 1}}}'
        return f'("[" {item} {more} "]")' if low else f'("[" ({item} {more})? "]")'
    if kind == "string":
        return "string"
    # Objects, references and type-less schemas: any JSON value, checked by the coercion.
    return _SCALARS.get(str(kind), "value")


def _xml_rule(spec: Any) -> str:
    """An expression for `spec`'s value as the Qwen3.5 template writes it: strings bare."""
    if not isinstance(spec, dict):
        return "value"
    if "enum" in spec or "const" in spec:
        choices = spec["enum"] if "enum" in spec else [spec["const"]]
        bare = (v if isinstance(v, str) else json.dumps(v) for v in choices)
        return "(" + " | ".join(_literal(v) for v in bare) + ")"
    alternatives = spec.get("anyOf", spec.get("oneOf"))
    if isinstance(alternatives, list) and alternatives:
        return "(" + " | ".join(_xml_rule(a) for a in alternatives) + ")"
    return "text" if spec.get("type") == "string" else _json_rule(spec)


def tool_call_grammar(tool: Tool, dialect: ToolDialect = "json") -> str:
    """A GBNF grammar whose only sentences are one call to `tool` with its required arguments,
    in `dialect` (the loaded model's `LLM.tool_dialect`)."""
    params = tool.schema()["function"]["parameters"]
    props: dict[str, Any] = params.get("properties", {})
    required = [name for name in params.get("required", []) if name in props]
    parts: list[str] = []
    if dialect == "xml":
        for name in required:
            head = _literal(f"<parameter={name}>\n")
            parts.append(f'{head} {_xml_rule(props[name])} "\\n</parameter>\\n"')
        head = _literal(f"<tool_call>\n<function={tool.name}>\n")
        tail = _literal("</function>\n</tool_call>")
    else:
        for i, name in enumerate(required):
            sep = ", " if i else ""
            parts.append(f"{_literal(sep + json.dumps(name) + ': ')} {_json_rule(props[name])}")
        head = _literal('<tool_call>\n{"name": ' + json.dumps(tool.name) + ', "arguments": {')
        tail = _literal("}}\n</tool_call>")
    args = " ".join(parts) if parts else '""'
    return f"root ::= {head} {args} {tail}\n{_RULES}"
