"""Render chat messages to prompt text with the model's own Jinja chat template.

Two guarantees the incremental cache depends on:
- **Honest:** the text is what the model sees. A template without tool support (SmolLM2's
  plain ChatML) gets tools the way Qwen writes them: a `# Tools` block with `<tools>` JSON at
  the start of the system message, calls as `<tool_call>` JSON in assistant turns, and
  results as user turns wrapped in `<tool_response>`.
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

from models.base import ModelError, ToolDialect

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
PLACEHOLDER = "ANNIE_PLACEHOLDER_USER_TURN"
# The longest closing text a tool result may give back when the next one joins its turn.
_MAX_RETRACT = 32
_TOOL_RESPONSE = ("<tool_response>", "</tool_response>")


def has_user_query(messages: Sequence[dict[str, Any]]) -> bool:
    """Does the list hold a user message that is not a wrapped tool result?

    Qwen3.5's template raises "No user query found in messages." otherwise; it is the same
    test that template makes.
    """
    for msg in messages:
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        text = content.strip() if isinstance(content, str) else ""
        if not (text.startswith(_TOOL_RESPONSE[0]) and text.endswith(_TOOL_RESPONSE[1])):
            return True
    return False


def message_shape(
    messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None
) -> str:
    """The roles of a message list, for errors: `system, user, assistant+calls, tool`."""
    roles = [str(m.get("role", "?")) + ("+calls" if m.get("tool_calls") else "") for m in messages]
    shown = ", ".join(roles) if len(roles) <= 12 else ", ".join([*roles[:5], "…", *roles[-5:]])
    return f"{len(roles)} messages: {shown}" + (f"; {len(tools)} tools" if tools else "")


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


def common_prefix_len(a: str, b: str) -> int:
    """Length of the longest common prefix of two texts."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_overlap(tail: str, head: str) -> int:
    """Length of the longest suffix of `tail` that is also a prefix of `head`."""
    for n in range(min(len(tail), len(head)), 0, -1):
        if head.startswith(tail[-n:]):
            return n
    return 0


def template_dialect(source: str) -> ToolDialect:
    """The tool-call dialect a template teaches: "xml" when it writes calls as
    `<function=NAME><parameter=ARG>` (Qwen3.5, Qwen3-Coder; llama.cpp's test too, which
    needs both tags: Llama 3.1 writes `<function=NAME>{json}`), else "json" (Qwen3). A
    template without tool support gets "json": `ChatTemplate` renders tools the Qwen3 way."""
    return "xml" if "<function=" in source and "<parameter=" in source else "json"


class ChatTemplate:
    """A compiled chat template plus the special tokens it refers to."""

    @property
    def dialect(self) -> ToolDialect:
        """The tool-call dialect the model was taught by this template."""
        return template_dialect(self.source)

    def __init__(
        self,
        source: str | None,
        bos_token: str = "",
        eos_token: str = "",
        name: str = "the model's chat template",
    ) -> None:
        self.source = source or CHATML_TEMPLATE
        self.bos_token = bos_token
        self.eos_token = eos_token
        self.name = name
        # A template that never mentions tools cannot show them; we render them Qwen's way.
        self.native_tools = "tools" in self.source
        try:
            self._template = _env().from_string(self.source)
        except TemplateError as exc:
            raise ModelError(f"{self.name} does not compile: {exc}") from exc
        self._segments: OrderedDict[tuple[str, str], tuple[str, str]] = OrderedDict()
        # Found once, at load: how a user turn opens, so a head can be cut out of a render
        # that ends in a placeholder user turn (see `_without_query`).
        self._opener: str | None = None
        self._opener_error = ""
        try:
            self._opener = self._user_opener()
        except ModelError as exc:
            self._opener_error = str(exc)

    def _render(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        add_generation_prompt: bool,
    ) -> str:
        """The template's own output, or a ModelError naming the template and the shape."""
        try:
            return self._template.render(
                messages=list(messages),
                tools=list(tools) if tools else None,
                add_generation_prompt=add_generation_prompt,
                enable_thinking=False,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
            )
        except (TemplateError, TypeError, ValueError, KeyError, AttributeError) as exc:
            shape = message_shape(messages, tools)
            raise ModelError(f"{self.name} rejected the messages ({shape}): {exc}") from exc

    def _raw(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        add_generation_prompt: bool,
    ) -> str:
        """Render `messages`; a list without a user query is never handed to the template."""
        if messages and not has_user_query(messages):
            return self._without_query(messages, tools, add_generation_prompt)
        return self._render(messages, tools, add_generation_prompt)

    @property
    def message_mark(self) -> str:
        """The text every message starts with (ChatML: `<|im_start|>`); "" when unknown."""
        opener = self._opener or ""
        return opener[: opener.index("user")] if "user" in opener else ""

    def _user_opener(self) -> str:
        """The text a user turn starts with (for ChatML: `<|im_start|>user\n`).

        Read from two renders the strictest templates accept: a user turn appended after
        another one (or, for templates that insist on alternation, after an assistant turn).
        """
        base = [{"role": "system", "content": "."}, {"role": "user", "content": "."}]
        probe = {"role": "user", "content": PLACEHOLDER}
        candidates = [base, [*base, {"role": "assistant", "content": "."}]]
        for shape in candidates:
            try:
                before = self._render(shape, None, False)
                after = self._render([*shape, probe], None, False)
            except ModelError:
                continue
            seg = after[len(before) :] if after.startswith(before) else ""
            if PLACEHOLDER in seg:
                return seg[: seg.index(PLACEHOLDER)]
        raise ModelError(
            f"{self.name} does not render a user turn as an appended segment, so Annie "
            "cannot render the system prefix on its own"
        )

    def _without_query(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        add_generation_prompt: bool,
    ) -> str:
        """Render a list that holds no user query, for templates that refuse one (Qwen3.5).

        The list is rendered with a placeholder user turn after it and cut where that turn
        opens; for templates that accept the list as it is, the result is the same text
        (tests check it). A generation prompt is taken from the same render with one.
        """
        if self._opener is None:
            raise ModelError(self._opener_error)
        probe = [*messages, {"role": "user", "content": PLACEHOLDER}]
        text = self._render(probe, tools, False)
        cut = text.rfind(self._opener + PLACEHOLDER)
        if cut < 0:
            shape = message_shape(messages, tools)
            raise ModelError(f"{self.name}: cannot cut a placeholder user turn out ({shape})")
        head = text[:cut]
        if not add_generation_prompt:
            return head
        with_prompt = self._render(probe, tools, True)
        return head + with_prompt[len(text) :]

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
            # Schemas first, as Qwen3.5's own template has them: the part of the head that no
            # session changes then runs on to the end of the system prompt (the briefing
            # follows it), so one saved state of it serves every session.
            out[0] = {"role": "system", "content": f"{block}\n\n{out[0]['content']}"}
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
            hit = self._segments.get(key)
            if hit is None:
                hit = self._segment(prepared, i, tools_arg)
                self._remember(key, hit)
            retract, seg = hit
            if retract and parts and parts[-1].endswith(retract):
                parts[-1] = parts[-1][: -len(retract)]
            parts.append(seg)
        if add_generation_prompt:
            key = (chain.hexdigest(), "g")
            hit = self._segments.get(key)
            if hit is None:
                base = self._raw(prepared, tools_arg, False)
                full = self._raw(prepared, tools_arg, True)
                hit = ("", full[len(base) :] if full.startswith(base) else "")
                self._remember(key, hit)
            parts.append(hit[1])
        return "".join(parts)

    def _segment(
        self, prepared: list[dict[str, Any]], i: int, tools: list[dict[str, Any]] | None
    ) -> tuple[str, str]:
        """(text to take back from the previous message, text message `i` adds as newest).

        The first is empty except inside a run of tool results, which templates like
        Qwen's group into one user turn: the previous result gives back its closing text.
        """
        full = self._raw(prepared[: i + 1], tools, False)
        if i == 0:
            return "", full
        prev = self._raw(prepared[:i], tools, False)
        if full.startswith(prev):
            return "", full[len(prev) :]
        shared = common_prefix_len(prev, full)
        rest_prev, rest_full = prev[shared:], full[shared:]
        # In a run of tool results only the previous result's own tail may change (its
        # end-of-turn marker); `render` checks that the previous segment ends with it.
        run = prepared[i].get("role") == "tool" and prepared[i - 1].get("role") == "tool"
        if run and len(rest_prev) <= _MAX_RETRACT:
            return rest_prev, rest_full
        # The template re-rendered an earlier turn (Qwen drops the think block of assistant
        # turns before the last user query). Keep the earlier text as it was generated, which
        # is what keeps the prompt append-only, and render this message fresh after a
        # neutral user turn, which closes whatever the template would have merged it into.
        base = self._raw([*prepared[:i], _SEPARATOR], tools, False)
        after = self._raw([*prepared[:i], _SEPARATOR, prepared[i]], tools, False)
        if after.startswith(base):
            return "", after[len(base) :]
        # Last resort: take what `full` adds beyond the text the two renders share.
        return "", rest_full[_common_overlap(rest_prev, rest_full) :]

    def _remember(self, key: tuple[str, str], seg: tuple[str, str]) -> None:
        self._segments[key] = seg
        if len(self._segments) > _CACHE_SIZE:
            self._segments.popitem(last=False)
