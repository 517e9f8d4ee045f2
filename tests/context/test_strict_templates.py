"""Exact counts on both model families, the strict Qwen3.5 template included.

Qwen3.5's template raises "No user query found in messages." on any list without a user
turn, so Annie's head (system prompt, tools, briefing), its per-item counts and the warm-up
prompt are derived from renders it accepts. Over many random message shapes the ledger's
total equals the tokenizer's count of the prompt, and the prompt equals the template's own
rendering of the same conversation, except for the empty think blocks of earlier assistant
turns: the template drops them once a newer user turn arrives, Annie keeps each turn as it
was generated so the prompt only grows.
"""

from __future__ import annotations

import pytest

from config import Settings
from context.conversation import Conversation
from context.ledger import Ledger
from models import Tokenizer, load_tokenizer
from models.chat_template import ChatTemplate
from tests.context.helpers import prefix, random_conversation

EMPTY_THINK = "<think>\n\n</think>\n\n"


@pytest.fixture(scope="module")
def qwen35_tokenizer(qwen35_settings: Settings) -> Tokenizer:
    return load_tokenizer(qwen35_settings)


@pytest.fixture(params=["smollm2", "qwen35"])
def family(request: pytest.FixtureRequest) -> Tokenizer:
    name = "tokenizer" if request.param == "smollm2" else "qwen35_tokenizer"
    tok: Tokenizer = request.getfixturevalue(name)
    return tok


def template_of(tok: Tokenizer) -> ChatTemplate:
    return ChatTemplate(tok.chat_template, tok.bos_token, tok.eos_token)


def test_the_generated_model_carries_the_strict_template(qwen35_tokenizer: Tokenizer) -> None:
    template = template_of(qwen35_tokenizer)
    system = [{"role": "system", "content": "You are Annie."}]
    with pytest.raises(Exception, match="No user query found in messages"):
        template._render(system, None, False)
    # Annie's render of the same list is the head the template writes before a user turn.
    head = template.render(system, None, add_generation_prompt=False)
    assert head == "<|im_start|>system\nYou are Annie.<|im_end|>\n"
    with_user = template._render([*system, {"role": "user", "content": "hi"}], None, True)
    assert with_user.startswith(head)


def test_the_head_render_equals_the_direct_render_where_a_template_accepts_both(
    tokenizer: Tokenizer,
) -> None:
    # SmolLM2's template renders a lone system message; the placeholder method must agree.
    template = template_of(tokenizer)
    system = [{"role": "system", "content": "You are Annie."}]
    tools = prefix().tools
    direct = template._render(template._prepare(system, tools)[0], None, False)
    assert template._without_query(template._prepare(system, tools)[0], None, False) == direct
    assert template.render(system, tools, add_generation_prompt=False) == direct


@pytest.mark.parametrize("seed", range(12))
def test_ledger_total_equals_the_tokenizer_count_on_both_families(
    family: Tokenizer, seed: int
) -> None:
    ledger = Ledger(family, window=200_000)
    conv = random_conversation(300 + seed, items=30)
    prompt = ledger.prompt(conv)
    usage = ledger.usage(conv)
    assert usage.total == len(family.tokenize(prompt))
    assert sum(usage.by_lane.values()) == usage.total
    # Item by item, too: every prefix of the conversation counts exactly.
    for k in (0, 1, 7, 19):
        part = Conversation(conv.session_id + f"-{k}", conv.prefix, conv.items[:k])
        assert ledger.usage(part).total == len(family.tokenize(ledger.prompt(part)))


@pytest.mark.parametrize("seed", range(12))
def test_the_prompt_is_the_templates_own_rendering_but_for_kept_think_blocks(
    family: Tokenizer, seed: int
) -> None:
    ledger = Ledger(family, window=200_000)
    template = template_of(family)
    conv = random_conversation(500 + seed, items=24)
    if not any(item.role == "user" for item in conv.items):
        pytest.fail("the random conversation needs a user turn to compare with the template")
    prompt = ledger.prompt(conv)
    prepared, tools = template._prepare(conv.messages(), conv.prefix.tools or None)
    own = template._raw(prepared, tools, True)
    assert prompt.replace(EMPTY_THINK, "") == own.replace(EMPTY_THINK, "")
    # Token for token, not only text: no merge across the kept segments.
    assert len(family.tokenize(prompt.replace(EMPTY_THINK, ""))) == len(
        family.tokenize(own.replace(EMPTY_THINK, ""))
    )


def test_the_warm_up_prompt_renders_on_the_strict_template(qwen35_tokenizer: Tokenizer) -> None:
    ledger = Ledger(qwen35_tokenizer, window=200_000)
    conv = Conversation("warm", prefix(notes="- likes tea", briefing="Booked a table."))
    head = ledger.prompt(conv, add_generation_prompt=False)
    assert head.startswith("<|im_start|>system\n# Tools\n")
    assert head.endswith("- likes tea<|im_end|>\n")
    assert ledger.usage(conv).total == len(qwen35_tokenizer.tokenize(ledger.prompt(conv)))
    fixed = ledger.prefix_cost(conv.prefix)
    assert fixed.total == len(qwen35_tokenizer.tokenize(head))
    assert fixed.system_prompt > 0 and fixed.tool_schemas > 0 and fixed.memory_briefing > 0
