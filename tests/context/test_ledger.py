"""The ledger counts exactly what the model sees, with the real SmolLM2 tokenizer and template."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import jinja2
import pytest

from context.conversation import Conversation, Item
from context.ledger import Ledger
from models.base import LLM, CallStats, Tokenizer
from models.chat_template import ChatTemplate
from tests.context.helpers import CountingTokenizer, prefix, random_conversation, random_item


def test_total_equals_tokenizer_count_for_many_shapes(tokenizer: Tokenizer) -> None:
    ledger = Ledger(tokenizer, window=32768)
    assert ledger.mode == "segment"
    for seed in range(25):
        conv = random_conversation(seed, items=seed * 2)
        total, counted = ledger.verify(conv)
        assert total == counted, f"seed {seed}"
        rendered = ledger.codec.render(conv.messages(), conv.prefix.tools, True)
        assert ledger.prompt(conv) == rendered
        usage = ledger.usage(conv)
        assert sum(usage.by_component.values()) == usage.total
        assert sum(usage.by_lane.values()) == usage.total


def test_total_is_exact_on_the_loaded_model(llm: LLM) -> None:
    ledger = Ledger(llm, window=4096)
    conv = random_conversation(7, items=30)
    rendered = llm.render(conv.messages(), conv.prefix.tools, True)
    assert ledger.usage(conv).total == len(llm.tokenize(rendered))
    assert ledger.prompt(conv) == rendered


def test_incremental_usage_matches_a_fresh_count_after_appends_and_edits(
    tokenizer: Tokenizer,
) -> None:
    ledger = Ledger(tokenizer, window=32768)
    rng = random.Random(1)
    conv = Conversation("sess-inc", prefix())
    for n in range(60):
        conv.turn = 1 + n // 4
        conv.append(random_item(rng, n, conv.turn))
        if n == 30:
            conv.clear([i for i in conv.items if i.kind == "tool_result"][:3])
        if n == 45:
            summary = Item("sum-x", "summary", "user", "[Earlier turns summarized]", turn=1)
            conv.replace(0, 10, [summary], "summarized")
        fresh = Ledger(tokenizer, window=32768).usage(conv)
        usage = ledger.usage(conv)
        assert usage.total == fresh.total
        assert usage.by_component == fresh.by_component
        assert usage.by_lane == fresh.by_lane
        assert usage.total == ledger.verify(conv)[1]


def test_a_turn_tokenizes_only_its_new_text(tokenizer: Tokenizer) -> None:
    counting = CountingTokenizer(tokenizer)
    ledger = Ledger(counting, window=32768)
    conv = random_conversation(3, items=80)
    ledger.usage(conv)
    ledger.prompt(conv)
    before = counting.calls
    ledger.usage(conv)
    ledger.prompt(conv)
    assert counting.calls == before  # nothing new, nothing tokenized
    conv.append(Item("ev-new", "user", "user", "A brand new question about tides?", turn=99))
    ledger.usage(conv)
    assert counting.calls - before == 1  # exactly one new segment


def test_prefix_components_add_up(tokenizer: Tokenizer) -> None:
    ledger = Ledger(tokenizer, window=32768)
    conv = Conversation(
        "s", prefix(notes="- the user likes tea", briefing="Last time: trip plans.")
    )
    cost = ledger.prefix_cost(conv.prefix)
    assert cost.system_prompt > 0 and cost.tool_schemas > 0
    assert cost.memory_briefing > 0 and cost.notes > 0
    assert cost.total == ledger.verify(conv)[1] - ledger.generation_tokens
    bare = Conversation("t", prefix())
    assert ledger.prefix_cost(bare.prefix).notes == 0


def test_lanes_put_the_current_request_in_its_own_lane(tokenizer: Tokenizer) -> None:
    ledger = Ledger(tokenizer, window=8192)
    conv = Conversation("s", prefix())
    conv.turn = 1
    conv.append(Item("ev-1", "user", "user", "first question", turn=1))
    conv.append(Item("ev-2", "assistant", "assistant", "first answer", turn=1))
    conv.turn = 2
    conv.append(Item("st", "state", "user", "[Current state] 2 tasks", turn=2, lane="state"))
    conv.append(Item("ev-3", "user", "user", "second question", turn=2))
    usage = ledger.usage(conv)
    request = ledger.item_tokens(conv.items[-1])
    assert usage.by_lane["request"] == request + ledger.generation_tokens
    assert usage.by_lane["state"] == ledger.item_tokens(conv.items[2])
    assert usage.by_turn[1] == ledger.item_tokens(conv.items[0]) + ledger.item_tokens(conv.items[1])
    assert usage.by_item["ev-3"] == request


def test_offset_is_the_tokens_before_an_item(tokenizer: Tokenizer) -> None:
    ledger = Ledger(tokenizer, window=32768)
    conv = random_conversation(5, items=20)
    prompt = ledger.prompt(conv, add_generation_prompt=False)
    head = ledger.prefix_cost(conv.prefix).text
    segments = [ledger.item_segment(i)[0] for i in conv.items]
    assert head + "".join(segments) == prompt
    assert ledger.offset(conv, 7) == len(tokenizer.tokenize(head + "".join(segments[:7])))


class _GroupingCodec:
    """A raw Jinja template that groups consecutive tool results into one turn, as Qwen's
    does: a message's text depends on its neighbours, so segments are not independent."""

    SOURCE = (
        "{% for m in messages %}"
        "{% if m['role'] == 'tool' %}"
        "{% if loop.first or messages[loop.index0 - 1]['role'] != 'tool' %}"
        "<|im_start|>user{% endif %}"
        "\n<tool_response>\n{{ m['content'] }}\n</tool_response>"
        "{% if loop.last or messages[loop.index0 + 1]['role'] != 'tool' %}<|im_end|>\n{% endif %}"
        "{% else %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endif %}"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.template = jinja2.Environment().from_string(self.SOURCE)

    def tokenize(self, text: str) -> list[int]:
        return self.tokenizer.tokenize(text)

    def render(
        self,
        messages: Any,
        tools: Any = None,
        add_generation_prompt: bool = True,
    ) -> str:
        return self.template.render(messages=messages, add_generation_prompt=add_generation_prompt)


class _NumberingCodec(_GroupingCodec):
    """A template whose every message shows its position: no message renders on its own."""

    SOURCE = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }} {{ loop.index }}\n"
        "{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )


@pytest.mark.parametrize(
    ("codec_type", "mode"), [(_GroupingCodec, "segment"), (_NumberingCodec, "chain")]
)
def test_neighbour_dependent_templates_count_exactly(
    tokenizer: Tokenizer, codec_type: type[_GroupingCodec], mode: str
) -> None:
    # Grouped tool results stay on the fast path (a result hands its closing text to the
    # next one); a template that numbers its messages falls back to chain counting.
    codec = codec_type(tokenizer)
    ledger = Ledger(codec, window=32768)
    assert ledger.mode == mode
    for seed in range(6):
        conv = random_conversation(100 + seed, items=24)
        rendered = codec.render(conv.messages(), conv.prefix.tools, True)
        assert ledger.prompt(conv) == rendered
        assert ledger.usage(conv).total == len(tokenizer.tokenize(rendered))


def test_calls_record_cached_and_evaluated_tokens(tokenizer: Tokenizer) -> None:
    ledger = Ledger(tokenizer, window=4096)
    stats = CallStats(
        prompt_tokens=900, reused_tokens=850, evaluated_tokens=50, generated_tokens=12
    )
    rec = ledger.record_call(stats, turn=3, label="round 0")
    assert ledger.calls == [rec]
    assert (rec.prompt_tokens, rec.reused_tokens, rec.evaluated_tokens) == (900, 850, 50)
    assert rec.turn == 3 and not rec.full_reprefill


class _QwenCodec:
    """The real tokenizer with a Qwen3-style template (tools block, think blocks after the
    last user query, grouped tool responses), rendered by the project's ChatTemplate."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        source = (Path(__file__).parent / "qwen3_template.jinja").read_text(encoding="utf-8")
        self.template = ChatTemplate(source)

    def tokenize(self, text: str) -> list[int]:
        return self.tokenizer.tokenize(text)

    def render(self, messages: Any, tools: Any = None, add_generation_prompt: bool = True) -> str:
        return self.template.render(messages, tools, add_generation_prompt)


def test_qwen_style_templates_stay_on_the_fast_exact_path(tokenizer: Tokenizer) -> None:
    codec = _QwenCodec(tokenizer)
    ledger = Ledger(codec, window=32768)
    assert ledger.mode == "segment"
    assert ledger.generation_prompt == "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    for seed in range(30):
        conv = random_conversation(200 + seed, items=30)
        # Every real conversation opens with a user-role item (request, state or summary).
        conv.items.insert(0, Item("ev-0", "user", "user", "Hello Annie", turn=1))
        rendered = codec.render(conv.messages(), conv.prefix.tools, True)
        assert ledger.prompt(conv) == rendered, seed
        assert ledger.usage(conv).total == len(tokenizer.tokenize(rendered)), seed
