"""Render chat messages to prompt text with the model's own Jinja chat template.

Two guarantees the incremental cache depends on:
- **Honest:** the text is what the model sees. A template without tool support (SmolLM2's
  plain ChatML) gets tools the way Qwen writes them: a `# Tools` block with `<tools>` JSON in
  the system message, calls as `<tool_call>` JSON in assistant turns, and results as user turns
  wrapped in `<tool_response>`.
- **Append-stable:** rendering `messages[:k]` is a prefix of rendering `messages`. Some
  templates re-render old turns once a newer one arrives (Qwen drops the empty think block of
  earlier assistant turns). Here each message keeps the text it had when it was the newest
  one, which is also the text the model evaluated and generated, so a conversation's prompt
  only ever grows and the evaluated tokens stay valid.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from jinja2 import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from models.base import ModelError

# ChatML, used when a model file carries no template (and by the tiktoken estimator).
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

TOOLS_PREAMBLE = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_POSTAMBLE = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)

_CACHE_SIZE = 8192
_SEPARATOR = {"role": "user", "content": "."}


def _raise(message: str) -> None:
    raise TemplateError(message)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def _tojson(value: Any, indent: int | None = None, ensure_ascii: bool = False) -> str:
    # Jinja's own tojson HTML-escapes '<' and '>', which chat templates must not do.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)


def _env() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = _strftime_now
    return env


def tool_call_text(call: dict[str, Any]) -> str:
    """One OpenAI-shaped tool call as Qwen's `<tool_call>` JSON block."""
    fn = call.get("function", call)
    args = fn.get("arguments", {})
    if isinstance(args, str):
        with contextlib.suppress(json.JSONDecodeError):
            args = json.loads(args)
    body = json.dumps({"name": fn.get("name", ""), "arguments": args}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def tools_block(tools: Sequence[dict[str, Any]]) -> str:
    lines = "".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools)
    return TOOLS_PREAMBLE + lines + TOOLS_POSTAMBLE


def _common_overlap(tail: str, head: str) -> int:
    """Length of the longest suffix of `tail` that is also a prefix of `head`."""
    for n in range(min(len(tail), len(head)), 0, -1):
        if head.startswith(tail[-n:]):
            return n
    return 0


class ChatTemplate:
    """A compiled chat template plus the special tokens it refers to."""

    def __init__(self, source: str | None, bos_token: str = "", eos_token: str = "") -> None:
        self.source = source or CHATML_TEMPLATE
        self.bos_token = bos_token
        self.eos_token = eos_token
        # A template that never mentions tools cannot show them; we render them Qwen's way.
        self.native_tools = "tools" in self.source
        try:
            self._template = _env().from_string(self.source)
        except TemplateError as exc:
            raise ModelError(f"the model's chat template does not compile: {exc}") from exc
        self._segments: OrderedDict[tuple[str, str], str] = OrderedDict()

    def _raw(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        add_generation_prompt: bool,
    ) -> str:
        try:
            return self._template.render(
                messages=list(messages),
                tools=list(tools) if tools else None,
                add_generation_prompt=add_generation_prompt,
                enable_thinking=False,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
            )
        except TemplateError as exc:
            raise ModelError(f"the model's chat template rejected the messages: {exc}") from exc

    def _prepare(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
        """Normalize messages; for a template without tools, rewrite them the Qwen way."""
        out: list[dict[str, Any]] = []
        for msg in messages:
            m = dict(msg)
            if m.get("content") is None:
                m["content"] = ""
            if self.native_tools:
                out.append(m)
                continue
            role = m.get("role")
            if role == "assistant" and m.get("tool_calls"):
                calls = "\n".join(tool_call_text(c) for c in m["tool_calls"])
                content = m["content"]
                m = {"role": "assistant", "content": f"{content}\n{calls}" if content else calls}
            elif role == "tool":
                m = {
                    "role": "user",
                    "content": f"<tool_response>\n{m['content']}\n</tool_response>",
                }
            else:
                m = {"role": role, "content": m["content"]}
            out.append(m)
        if self.native_tools or not tools:
            return out, list(tools) if tools else None
        block = tools_block(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{block}"}
        else:
            out.insert(0, {"role": "system", "content": block})
        return out, None

    def render(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> str:
        """Prompt text for `messages`; see the module docstring for what it guarantees."""
        prepared, tools_arg = self._prepare(messages, tools)
        tools_key = json.dumps(tools_arg, sort_keys=True, ensure_ascii=False) if tools_arg else ""
        chain = hashlib.sha256(tools_key.encode())
        parts: list[str] = []
        for i, msg in enumerate(prepared):
            chain.update(json.dumps(msg, sort_keys=True, ensure_ascii=False).encode())
            chain.update(b"\x00")
            key = (chain.hexdigest(), "m")
            seg = self._segments.get(key)
            if seg is None:
                seg = self._segment(prepared, i, tools_arg)
                self._remember(key, seg)
            parts.append(seg)
        if add_generation_prompt:
            key = (chain.hexdigest(), "g")
            seg = self._segments.get(key)
            if seg is None:
                base = self._raw(prepared, tools_arg, False)
                full = self._raw(prepared, tools_arg, True)
                seg = full[len(base) :] if full.startswith(base) else ""
                self._remember(key, seg)
            parts.append(seg)
        return "".join(parts)

    def _segment(
        self, prepared: list[dict[str, Any]], i: int, tools: list[dict[str, Any]] | None
    ) -> str:
        """The text message `i` adds, rendered as the newest message."""
        full = self._raw(prepared[: i + 1], tools, False)
        if i == 0:
            return full
        prev = self._raw(prepared[:i], tools, False)
        if full.startswith(prev):
            return full[len(prev) :]
        # The template re-rendered an earlier turn (dropped a think block, merged tool
        # results). Keep the earlier text as it was, and render this message fresh after a
        # neutral user turn, which closes whatever the template would have merged it into.
        base = self._raw([*prepared[:i], _SEPARATOR], tools, False)
        after = self._raw([*prepared[:i], _SEPARATOR, prepared[i]], tools, False)
        if after.startswith(base):
            return after[len(base) :]
        # Last resort: take what `full` adds beyond the text the two renders share.
        shared = 0
        for a, b in zip(prev, full, strict=False):
            if a != b:
                break
            shared += 1
        rest_prev, rest_full = prev[shared:], full[shared:]
        return rest_full[_common_overlap(rest_prev, rest_full) :]

    def _remember(self, key: tuple[str, str], seg: str) -> None:
        self._segments[key] = seg
        if len(self._segments) > _CACHE_SIZE:
            self._segments.popitem(last=False)
