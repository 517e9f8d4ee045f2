"""Prompt rendering: the model's own template, honest tools, and append-stable output."""

from __future__ import annotations

from typing import Any

from models.base import Tokenizer
from models.chat_template import ChatTemplate

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Current time in a time zone",
            "parameters": {
                "type": "object",
                "properties": {"tz": {"type": "string"}},
                "required": ["tz"],
            },
        },
    }
]

CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are Annie."},
    {"role": "user", "content": "What time is it in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_time", "arguments": {"tz": "Europe/Paris"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "name": "get_time", "content": "14:05"},
    {"role": "assistant", "content": "It is 14:05 in Paris."},
    {"role": "user", "content": "Thanks!"},
]

# A Qwen-like template that drops the empty think block of earlier assistant turns and
# merges consecutive tool results: the cases that break naive append-stability.
QWEN_LIKE = """
{%- if tools %}<|im_start|>system
{{ messages[0].content if messages[0].role == 'system' else '' }}
# Tools
{% for t in tools %}{{ t | tojson }}
{% endfor %}<|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- set ns = namespace(last_user=-1) %}
{%- for m in messages %}{% if m.role == 'user' %}
{%- set ns.last_user = loop.index0 %}{% endif %}{% endfor %}
{%- for m in messages %}
{%- if m.role == 'user' %}<|im_start|>user
{{ m.content }}<|im_end|>
{% elif m.role == 'assistant' %}<|im_start|>assistant
{% if loop.index0 > ns.last_user %}<think>

</think>

{% endif %}{{ m.content }}<|im_end|>
{% elif m.role == 'tool' %}
{%- set opens = loop.first or messages[loop.index0 - 1].role != 'tool' %}
{%- set closes = loop.last or messages[loop.index0 + 1].role != 'tool' %}
{%- if opens %}<|im_start|>user{% endif %}
<tool_response>{{ m.content }}</tool_response>{% if closes %}<|im_end|>
{% endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
<think>

</think>

{% endif %}
"""


def assert_append_stable(template: ChatTemplate, messages: list[dict[str, Any]]) -> None:
    """Every prompt the model could be asked to continue is a prefix of every later one.

    Inside a run of tool results (which Qwen templates group into one user turn) the model is
    never called, so the split there is exempt.
    """
    full = template.render(messages, TOOLS, add_generation_prompt=False)
    for k in range(1, len(messages)):
        if messages[k - 1]["role"] == "tool" and messages[k]["role"] == "tool":
            continue
        head = template.render(messages[:k], TOOLS, add_generation_prompt=False)
        assert full.startswith(head), k
        with_prompt = template.render(messages[:k], TOOLS, add_generation_prompt=True)
        assert with_prompt.startswith(head)


def test_smollm_template_gets_tools_the_qwen_way(tokenizer: Tokenizer) -> None:
    template = ChatTemplate(tokenizer.chat_template, tokenizer.bos_token, tokenizer.eos_token)
    assert not template.native_tools
    text = template.render(CONVERSATION, TOOLS)
    # The schemas open the system message, as in Qwen3.5's template: the system prompt then
    # ends the part of the head that no session's briefing changes.
    assert text.startswith("<|im_start|>system\n# Tools\n")
    assert "</tool_call>\n\nYou are Annie.<|im_end|>\n" in text
    assert '<tools>\n{"type": "function", "function": {"name": "get_time"' in text
    assert (
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_time", "arguments": '
        '{"tz": "Europe/Paris"}}\n</tool_call><|im_end|>\n'
    ) in text
    assert "<|im_start|>user\n<tool_response>\n14:05\n</tool_response><|im_end|>\n" in text
    assert "<|im_start|>tool" not in text
    assert text.endswith("<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n")
    assert_append_stable(template, CONVERSATION)


def test_rendering_is_deterministic(tokenizer: Tokenizer) -> None:
    a = ChatTemplate(tokenizer.chat_template).render(CONVERSATION, TOOLS)
    b = ChatTemplate(tokenizer.chat_template).render(CONVERSATION, TOOLS)
    assert a == b


def test_native_template_keeps_each_turn_as_it_was_generated() -> None:
    template = ChatTemplate(QWEN_LIKE)
    assert template.native_tools
    turn1 = CONVERSATION[:2]
    prompt1 = template.render(turn1, TOOLS)
    assert prompt1.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    # The model's answer is appended to prompt1; the next render must extend that exactly,
    # although the template itself would drop the think block from an earlier turn.
    answered = [*turn1, {"role": "assistant", "content": "Let me look."}]
    later = [*answered, {"role": "user", "content": "Quickly please."}]
    assert template.render(later, TOOLS).startswith(prompt1 + "Let me look.<|im_end|>\n")
    assert_append_stable(template, later)


def test_native_template_groups_consecutive_tool_results_like_the_template() -> None:
    template = ChatTemplate(QWEN_LIKE)
    messages = [
        {"role": "user", "content": "Two lookups"},
        {"role": "tool", "content": "A"},
        {"role": "tool", "content": "B"},
        {"role": "user", "content": "ok"},
    ]
    assert_append_stable(template, messages)
    text = template.render(messages, TOOLS, add_generation_prompt=False)
    # Grouped into one turn, exactly as the template itself renders the whole list.
    grouped = "<|im_start|>user<tool_response>A</tool_response><tool_response>B</tool_response>"
    assert grouped in text
    assert text == template._render(messages, TOOLS, False)
    assert text.endswith("<|im_start|>user\nok<|im_end|>\n")
