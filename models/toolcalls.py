"""Tool calls in both Qwen dialects: parse them (never raising), type them, write them.

- Qwen3 ("json"): `<tool_call>\n{"name": "...", "arguments": {...}}\n</tool_call>`
- Qwen3.5 ("xml"): `<tool_call>\n<function=NAME>\n<parameter=ARG>\nvalue\n</parameter>\n`
  `</function>\n</tool_call>`; strings are written bare, other values as JSON.
Anything that looks like a call but cannot be read becomes a `ToolCallError` with the raw
text and the reason, so the caller can tell the model what went wrong and let it retry.
An XML value is kept as its raw text (`ToolCall.raw_args`): "2026" may be a year or a
number, and only the tool's JSON schema can tell, so `coerce_arguments` types the values
against that schema before the tool runs, and says which parameter does not fit.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from models.base import ParsedOutput, ToolCall, ToolCallError, ToolDialect

OPEN = "<tool_call>"
CLOSE = "</tool_call>"

_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\n]*)>(.*?)(?:</function>|$)", re.DOTALL)
_CALL_OR_THINK = re.compile(r"<tool_call>.*?(?:</tool_call>|$)|<think>.*?</think>\s*", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)(?:</parameter>|(?=<parameter=)|$)", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


def _text(raw: str) -> str:
    # The template writes values on their own lines; the newlines are framing, not data.
    text = raw[1:] if raw.startswith("\n") else raw
    return text[:-1] if text.endswith("\n") else text


_SURROGATE = "tool call JSON has a \\u escape that is not a character (a lone surrogate)"


def _encodable(value: Any) -> bool:
    """Whether `value` holds only real characters: JSON's \\ud800 escapes decode to lone
    surrogates, which no UTF-8 write (the event log, SQLite) accepts."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse_json(body: str, raw: str, ids: Iterator[str]) -> ToolCall | ToolCallError:
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        return ToolCallError(raw, f"tool call is not valid JSON: {exc.msg} at char {exc.pos}")
    except RecursionError:  # the parser recurses per bracket
        return ToolCallError(raw, "tool call JSON is nested too deeply")
    if not _encodable(data):
        return ToolCallError(raw, _SURROGATE)
    if not isinstance(data, dict):
        return ToolCallError(raw, "tool call JSON must be an object with name and arguments")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        return ToolCallError(raw, "tool call has no function name")
    args = data.get("arguments", data.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            return ToolCallError(raw, "tool call arguments are a string that is not JSON")
        if not _encodable(args):
            return ToolCallError(raw, _SURROGATE)
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
            args[key] = _text(param.group(2))
        else:
            out.append(ToolCall(name, args, next(ids), raw_args=True))
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


def write_call(name: str, arguments: Mapping[str, Any], dialect: ToolDialect) -> str:
    """One call written the way the dialect's template writes an assistant's call.

    In XML a string is written bare and anything else as JSON. The Qwen3.5 template itself
    writes scalars with Jinja's `string` filter (Python spells `True`, `None`); both
    spellings read back the same (see `coerce_arguments`).
    """
    if dialect == "xml":
        params = "".join(
            f"<parameter={key}>\n{value if isinstance(value, str) else _json(value)}\n"
            "</parameter>\n"
            for key, value in arguments.items()
        )
        return f"{OPEN}\n<function={name}>\n{params}</function>\n{CLOSE}"
    return f"{OPEN}\n{_json({'name': name, 'arguments': dict(arguments)})}\n{CLOSE}"


def call_example(dialect: ToolDialect) -> str:
    """A short call in `dialect`, shown to a model whose call could not be read."""
    return write_call("tool_name", {"parameter": "value"}, dialect)


# -- typing arguments by the tool's JSON schema ----------------------------------------------


class ArgumentError(ValueError):
    """Arguments that do not fit the tool's schema; the message names each one that does not."""


class _Misfit(Exception):
    def __init__(self, path: str, expected: str, value: Any) -> None:
        super().__init__(f"{path}: expected {expected}, got {_shown(value)}")


_KINDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a JSON array",
    "object": "a JSON object",
    "null": "null",
}
# Python-Jinja renders booleans and None with the `string` filter as True, False and None,
# so a Qwen3.5 model sees those spellings in its own history and may write them back.
_WORDS: dict[str, Any] = {"true": True, "false": False, "True": True, "False": False}
_NULLS = ("null", "None")
_UNREADABLE = object()


def coerce_arguments(
    arguments: Mapping[str, Any], parameters: Mapping[str, Any], raw: bool
) -> dict[str, Any]:
    """`arguments` typed by the tool's `parameters` schema; `ArgumentError` when one misfits.

    The rules, the same for both dialects (`raw` only changes the last one):
    - A string parameter keeps its text as written, whatever it looks like ("2026", "true",
      "null", " spaced "). A non-string value for it is an error: text is never invented.
    - Text (an XML value, or a JSON string) given for an integer, number, boolean, null,
      array or object parameter is read as JSON of that type ("5" is 5, "true" is True, and
      Python's True/False/None too). NaN and Infinity are not numbers.
    - An integer takes a whole float (3.0 is 3), never 3.5; a boolean is never a number.
    - `enum` and `const` are checked after typing. `anyOf`, type lists and `$ref` into
      `$defs` are followed: the first alternative that fits the value as written wins, then
      the first that fits it read as JSON, so for text a string alternative always wins.
    - Array items and object properties are checked the same way, recursively.
    - A parameter the schema says nothing about is passed through, but raw XML text is read
      as JSON when it parses. Unknown and missing parameters, bounds and lengths are left to
      the tool's own validation (`Tool.run`), which already reports them.
    """
    props = parameters.get("properties")
    props = props if isinstance(props, Mapping) else {}
    out: dict[str, Any] = {}
    problems: list[str] = []
    for name, value in arguments.items():
        try:
            out[name] = _fit(value, _schema(props.get(name)), parameters, name, raw)
        except _Misfit as exc:
            problems.append(str(exc))
    if problems:
        raise ArgumentError("; ".join(problems))
    return out


def _fit(
    value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], path: str, raw: bool
) -> Any:
    schema = _resolve(schema, root)
    alternatives = _alternatives(schema)
    for read in (False, True) if alternatives else ():
        for alt in alternatives:
            try:
                return _fit_one(value, _resolve(alt, root), root, path, raw, read)
            except _Misfit:
                continue
    if alternatives:
        raise _Misfit(path, " or ".join(_describe(_resolve(a, root)) for a in alternatives), value)
    return _fit_one(value, schema, root, path, raw, read=True)


def _fit_one(
    value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], path: str, raw: bool, read: bool
) -> Any:
    if _alternatives(schema):
        return _fit(value, schema, root, path, raw)
    choices = [schema["const"]] if "const" in schema else schema.get("enum")
    kind = schema.get("type")
    if isinstance(kind, str):
        value = _typed(value, kind, schema, root, path, read)
    if not isinstance(choices, list):
        # No type and no choices: nothing to go by but the text itself.
        return value if isinstance(kind, str) or not raw else _guess(value)
    # A type-less enum of non-strings (e.g. [1, 2]) is matched by the text read as JSON too.
    reread = read and not isinstance(kind, str) and isinstance(value, str)
    for candidate in (value, _read(value, "") if reread else value):
        if any(_same(candidate, c) for c in choices):
            return candidate
    raise _Misfit(path, _describe(schema), value)


def _typed(
    value: Any, kind: str, schema: Mapping[str, Any], root: Mapping[str, Any], path: str, read: bool
) -> Any:
    given = value
    if kind not in _KINDS or (kind == "string" and isinstance(value, str)):
        return value  # an unknown type keyword is left to the tool's validation
    if read and isinstance(value, str) and kind != "string":
        value = _read(value, kind)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "integer" and number and (isinstance(value, int) or value.is_integer()):
        return int(value)
    if kind == "number" and number and (isinstance(value, int) or math.isfinite(value)):
        return value
    if (kind == "boolean" and isinstance(value, bool)) or (kind == "null" and value is None):
        return value
    if kind == "array" and isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, Mapping):
            return value
        return [_fit(v, items, root, f"{path}.{i}", False) for i, v in enumerate(value)]
    if kind == "object" and isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        return {
            k: _fit(v, _schema(props.get(k)), root, f"{path}.{k}", False) for k, v in value.items()
        }
    raise _Misfit(path, _KINDS[kind], given)


def _read(text: str, kind: str) -> Any:
    """Text read as a JSON value, or as Python's spelling of one; `_UNREADABLE` if neither."""
    stripped = text.strip()
    if kind in ("boolean", "") and stripped in _WORDS:
        return _WORDS[stripped]
    if kind in ("null", "") and stripped in _NULLS:
        return None
    try:
        return json.loads(stripped, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return _UNREADABLE


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _guess(value: Any) -> Any:
    """Raw text with no schema to go by: JSON when it parses as JSON, else the text."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _schema(node: Any) -> Mapping[str, Any]:
    # JSON Schema allows `true` as "anything"; it tells as little as a missing schema.
    return node if isinstance(node, Mapping) else {}


def _same(a: Any, b: Any) -> bool:
    # Python's True == 1 must not let a boolean pass for an enum's 1 (or the reverse).
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _alternatives(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    alts = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(alts, list) and alts:
        return [a for a in alts if isinstance(a, Mapping)]
    kinds = schema.get("type")
    return [{**schema, "type": k} for k in kinds] if isinstance(kinds, list) else []


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """`schema` with a local `$ref` (pydantic's `#/$defs/Name`) merged in."""
    for _ in range(16):  # references may be cyclic; a longer chain is left as it is
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part) if isinstance(node, Mapping) else None
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**node, **rest} if isinstance(node, Mapping) else rest
    return schema


def _describe(schema: Mapping[str, Any]) -> str:
    choices = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(choices, list):
        return "one of " + ", ".join(_json(c) for c in choices)
    return _KINDS.get(str(schema.get("type")), "a value its schema allows")


def _shown(value: Any) -> str:
    text = _json(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
