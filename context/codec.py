"""What the ledger counts with: a model's tokenizer plus its chat template.

An LLM adapter is its own codec (it renders and tokenizes); a vocab-only `Tokenizer` gets the
chat template stored in the same GGUF, so counting never needs the model's weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Codec(Protocol):
    """What the ledger needs from a model: its tokenizer and its chat template."""

    def tokenize(self, text: str) -> list[int]: ...

    def render(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> str: ...


class TemplateCodec:
    """A vocab-only `models.base.Tokenizer` plus the chat template from the same GGUF."""

    def __init__(self, tokenizer: Any) -> None:
        from models.chat_template import ChatTemplate

        self.tokenizer = tokenizer
        self.exact = bool(getattr(tokenizer, "exact", True))
        self.name = str(getattr(tokenizer, "name", type(tokenizer).__name__))
        self._template = ChatTemplate(
            getattr(tokenizer, "chat_template", None),
            getattr(tokenizer, "bos_token", ""),
            getattr(tokenizer, "eos_token", ""),
            name=f"the chat template of {self.name}",
        )

    def tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer.tokenize(text))

    def render(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> str:
        return self._template.render(messages, tools, add_generation_prompt)


def codec_for(engine: Any) -> Codec:
    """An LLM is its own codec; a bare Tokenizer gets the chat template of its GGUF."""
    if isinstance(engine, Codec):
        return engine
    return TemplateCodec(engine)


# A conversation with every message shape, used to check whether a template renders each
# message independently of its neighbours (and whether token counts add up across them).
PROBE_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "probe",
            "description": "probe",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
]
_CALL = {"id": "c1", "type": "function", "function": {"name": "probe", "arguments": {}}}
PROBE_CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a probe.\n\nNotes."},
    {"role": "user", "content": "Hello there."},
    {"role": "assistant", "content": "Hi! How can I help?"},
    {"role": "user", "content": "State: 2 tasks."},
    {"role": "user", "content": "Search it."},
    {"role": "assistant", "content": "", "tool_calls": [_CALL]},
    {"role": "tool", "content": "result one", "tool_call_id": "c1", "name": "probe"},
    {"role": "tool", "content": "result two", "tool_call_id": "c2", "name": "probe"},
    {"role": "assistant", "content": 'Done. <tool_call>\n{"name": "probe"}\n</tool_call>'},
    {"role": "user", "content": "Thanks ☺ — ok?"},
    {"role": "assistant", "content": "You're welcome."},
    {"role": "user", "content": "Bye."},
]
