"""The token ledger: exact token counts for everything the model sees, by component and lane.

Counts come from the loaded model's own tokenizer and chat template, per message *as the
template renders it* (role markers and end-of-message tokens included), so the ledger's
total equals `len(tokenize(render(messages, tools)))` to the token. Each message's rendered
segment and its count are cached on the message's render key, so a turn costs work in
proportion to what is new, not to the whole context.
Two modes, chosen once by probing the template with a sample conversation:
- `segment` (ChatML, Qwen and other templates that render each message on its own, with a
  special token at every message start): a message's text is rendered once, after a
  two-message probe (`context.segments`); the prompt is the concatenation of cached segments,
  a run of tool results joined into one turn as Qwen's templates write it. O(new text).
- `chain` (templates whose output for a message depends on its neighbours): segments come
  from renders of the growing prefix (`context.chain`) and the total from tokenizing the
  whole prompt. Exact, but O(context) per turn; the usage says which mode produced it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from context.chain import ChainTexts
from context.codec import Codec, TemplateCodec, codec_for
from context.conversation import Conversation, Item, Prefix
from context.lanes import FIXED_LANE, LANES
from context.segments import Segments
from context.usage import CallRecord, PrefixCost, Usage
from models.chat_template import common_prefix_len

__all__ = ["CallRecord", "Codec", "Ledger", "PrefixCost", "TemplateCodec", "Usage", "codec_for"]

if TYPE_CHECKING:
    from models.base import CallStats

FIXED_COMPONENTS = ("system_prompt", "tool_schemas", "memory_briefing", "notes")

_KIND_COMPONENT = {
    "user": "conversation",
    "assistant": "conversation",
    "tool_call": "tool_calls",
    "tool_result": "tool_results",
    "summary": "summary",
    "state": "state",
    "evidence": "evidence",
    "note": "notes",
}

_CACHE_LIMIT = 100_000


@dataclass(eq=False)
class _Tally:
    conv: Conversation
    generation: int
    count: int = 0
    total: int = 0
    first: Item | None = None
    last: Item | None = None
    by_component: dict[str, int] = field(default_factory=dict)
    by_lane: dict[str, int] = field(default_factory=dict)
    by_turn: dict[int, int] = field(default_factory=dict)
    by_item: dict[str, int] = field(default_factory=dict)
    # The rendered items, joined: the prompt minus its head and generation prompt.
    body: str = ""
    # The last item's text in `body`: a tool result that joins its turn edits its end.
    last_text: str = ""


def _state(item: Item) -> tuple[Any, ...]:
    """What can change an item's rendering (compared by identity-fast equality)."""
    return (
        item.content,
        item.cleared,
        item.placeholder,
        item.interrupted,
        item.role,
        item.calls_in_content,
        len(item.tool_calls),
        item.call_id,
        item.name,
    )


def _fixed_lanes(fixed: PrefixCost) -> dict[str, int]:
    """Tokens by lane with only the fixed head counted: every lane present, most at zero."""
    by_lane: dict[str, int] = dict.fromkeys(LANES, 0)
    for component, n in fixed.as_dict().items():
        by_lane[FIXED_LANE[component]] += n
    return by_lane


class Ledger:
    """Exact, cached token accounting over one model's tokenizer and chat template."""

    def __init__(self, engine: Any, *, window: int, output_reserve_tokens: int = 0) -> None:
        self.codec = codec_for(engine)
        self.window = window
        # Tokens kept free for the answer; the caller passes the effective value
        # (`ContextSettings.output_reserve_tokens`), not the configured one.
        self.output_reserve_tokens = output_reserve_tokens
        self.exact = bool(getattr(self.codec, "exact", getattr(engine, "exact", True)))
        self.calls: list[CallRecord] = []
        self._counts: dict[str, int] = {}
        self._segments: dict[tuple[Any, ...], tuple[str, int]] = {}
        self._prefix: dict[str, tuple[str, PrefixCost]] = {}
        self._chains = ChainTexts(self.codec)
        self._memo: dict[int, tuple[Item, tuple[Any, ...], tuple[str, int]]] = {}
        self._prefix_memo: dict[int, tuple[Prefix, tuple[Any, ...], PrefixCost]] = {}
        self._tallies: dict[str, _Tally] = {}
        self.segments = Segments(self.codec)
        self.generation_prompt = self.segments.generation_prompt
        self.generation_tokens = self.count(self.generation_prompt)
        self.mode = "segment" if self.segments.separable(self.count) else "chain"

    # --- counting -----------------------------------------------------------------------

    def count(self, text: str) -> int:
        """Exact tokens of `text` (cached on the text)."""
        n = self._counts.get(text)
        if n is None:
            if len(self._counts) > _CACHE_LIMIT:
                self._counts.clear()
            n = len(self.codec.tokenize(text))
            self._counts[text] = n
        return n

    def item_segment(self, item: Item) -> tuple[str, int]:
        """The item's rendered text and its exact token count (cached on its render key)."""
        state = _state(item)
        memo = self._memo.get(id(item))
        if memo is not None and memo[0] is item and memo[1] == state:
            return memo[2]
        key = item.render_key()
        hit = self._segments.get(key)
        if hit is None:
            if len(self._segments) > _CACHE_LIMIT:
                self._segments.clear()
            text = self.segments.segment(item.message())
            hit = (text, self.count(text))
            self._segments[key] = hit
        if len(self._memo) > _CACHE_LIMIT:
            self._memo.clear()
        # The item itself is kept in the memo so its id() cannot be reused by another object.
        self._memo[id(item)] = (item, state, hit)
        return hit

    def item_tokens(self, item: Item) -> int:
        return self.item_segment(item)[1]

    def message_tokens(self, message: dict[str, Any]) -> int:
        """Tokens a message would cost, template overhead included, before it is an item."""
        return self.count(self.segments.segment(message))

    def prefix_cost(self, prefix: Prefix) -> PrefixCost:
        fields = (
            prefix.system_prompt,
            prefix.briefing,
            prefix.notes,
            prefix.tools,
            len(prefix.tools),
        )
        memo = self._prefix_memo.get(id(prefix))
        if (
            memo is not None
            and memo[0] is prefix
            and all(a is b for a, b in zip(memo[1], fields, strict=True))
        ):
            return memo[2]
        cost = self._prefix_cost(prefix)
        self._prefix_memo[id(prefix)] = (prefix, fields, cost)
        return cost

    def shared_head(self, prefix: Prefix) -> str:
        """The start of `prefix`'s text that no session changes: the rendered head (system
        prompt and tool schemas) up to where a briefing or notes would begin. Every prompt on
        the same system prompt and schemas starts with it, whatever its briefing."""
        r, tools = self.codec.render, prefix.tools or None
        bare = r([replace(prefix, briefing="", notes="").message()], tools, False)
        briefed = r([replace(prefix, briefing="-", notes="").message()], tools, False)
        return bare[: common_prefix_len(bare, briefed)]

    def _prefix_cost(self, prefix: Prefix) -> PrefixCost:
        key = json.dumps([prefix.system_content(), prefix.tools], sort_keys=True)
        hit = self._prefix.get(key)
        if hit is not None:
            return hit[1]
        r = self.codec.render
        only = {"role": "system", "content": prefix.system_content(briefing=False, notes=False)}
        brief = {"role": "system", "content": prefix.system_content(notes=False)}
        tools = prefix.tools or None
        base = self.count(r([only], None, False))
        with_tools = self.count(r([only], tools, False))
        with_brief = self.count(r([brief], tools, False))
        text = r([prefix.message()], tools, False)
        total = self.count(text)
        cost = PrefixCost(
            system_prompt=base,
            tool_schemas=with_tools - base,
            memory_briefing=with_brief - with_tools,
            notes=total - with_brief,
            text=text,
        )
        self._prefix[key] = (text, cost)
        return cost

    # --- the whole prompt ---------------------------------------------------------------

    def prompt(self, conv: Conversation, *, add_generation_prompt: bool = True) -> str:
        """The prompt exactly as the model sees it."""
        if self.mode == "chain":
            return self.codec.render(
                conv.messages(), conv.prefix.tools or None, add_generation_prompt
            )
        head = self.prefix_cost(conv.prefix).text
        body = self._tally(conv).body
        return head + body + (self.generation_prompt if add_generation_prompt else "")

    def _tally(self, conv: Conversation) -> _Tally:
        """Per-item sums for `conv`, updated with only the items appended since last time."""
        tally = self._tallies.get(conv.session_id)
        items = conv.items
        if (
            tally is None
            or tally.conv is not conv
            or tally.generation != conv.generation
            or tally.count > len(items)
            or (tally.count and items[tally.count - 1] is not tally.last)
            or (tally.count and items[0] is not tally.first)
        ):
            tally = _Tally(conv=conv, generation=conv.generation)
            self._tallies[conv.session_id] = tally
        prev = items[tally.count - 1] if tally.count else None
        for item in items[tally.count :]:
            text, n = self.item_segment(item)
            if prev is not None and item.role == "tool" and prev.role == "tool":
                retract, joined = self.segments.joined(item.message())
                if retract and tally.last_text.endswith(retract):
                    # The previous result hands its end-of-turn text to this one.
                    trimmed = tally.last_text[: -len(retract)]
                    self._add(tally, prev, self.count(trimmed) - self.count(tally.last_text))
                    tally.body = tally.body[: -len(retract)]
                    text, n = joined, self.count(joined)
            self._add(tally, item, n)
            tally.body += text
            tally.last_text = text
            prev = item
        if items:
            tally.first, tally.last = items[0], items[-1]
        tally.count = len(items)
        return tally

    @staticmethod
    def _add(tally: _Tally, item: Item, n: int) -> None:
        comp = "cleared" if item.cleared else _KIND_COMPONENT.get(item.kind, item.kind)
        tally.by_component[comp] = tally.by_component.get(comp, 0) + n
        tally.by_lane[item.lane] = tally.by_lane.get(item.lane, 0) + n
        tally.by_turn[item.turn] = tally.by_turn.get(item.turn, 0) + n
        tally.by_item[item.id] = tally.by_item.get(item.id, 0) + n
        tally.total += n

    def usage(self, conv: Conversation) -> Usage:
        """Exact usage of the prompt for the next call (generation prompt included).

        Sums are kept per conversation and extended with appended items only, so the cost is
        proportional to what is new; an edit through `Conversation.clear`/`replace` (which
        bumps `generation`) or any change to the start of the list triggers a full recount.
        """
        fixed = self.prefix_cost(conv.prefix)
        if self.mode == "chain":
            return self._usage_chain(conv, fixed)
        tally = self._tally(conv)
        by_component = {**fixed.as_dict(), **tally.by_component}
        by_component["generation_prompt"] = self.generation_tokens
        by_lane = _fixed_lanes(fixed)
        by_lane["request"] += self.generation_tokens
        for lane, n in tally.by_lane.items():
            by_lane[lane] = by_lane.get(lane, 0) + n
        request = self._request_item(conv)
        if request is not None:
            n = self.item_segment(request)[1]
            by_lane[request.lane] -= n
            by_lane["request"] += n
        return Usage(
            window=self.window,
            output_reserve_tokens=self.output_reserve_tokens,
            total=fixed.total + tally.total + self.generation_tokens,
            fixed=fixed,
            by_component=by_component,
            by_lane=by_lane,
            by_turn=dict(tally.by_turn),
            by_item=dict(tally.by_item),
            exact=self.exact,
            mode=self.mode,
        )

    def _usage_chain(self, conv: Conversation, fixed: PrefixCost) -> Usage:
        by_component: dict[str, int] = dict(fixed.as_dict())
        by_lane = _fixed_lanes(fixed)
        by_turn: dict[int, int] = {}
        by_item: dict[str, int] = {}
        request = self._request_item(conv)
        chain = self._chains.texts(conv)
        for i, item in enumerate(conv.items):
            n = self.count(chain[i])
            comp = "cleared" if item.cleared else _KIND_COMPONENT.get(item.kind, item.kind)
            by_component[comp] = by_component.get(comp, 0) + n
            lane = "request" if item is request else item.lane
            by_lane[lane] = by_lane.get(lane, 0) + n
            by_turn[item.turn] = by_turn.get(item.turn, 0) + n
            by_item[item.id] = by_item.get(item.id, 0) + n
        by_component["generation_prompt"] = self.generation_tokens
        by_lane["request"] += self.generation_tokens
        total = sum(by_component.values())
        exact_total = self.count(self.prompt(conv))
        if exact_total != total:
            # Token merges across message boundaries: attribute the difference openly.
            by_component["template"] = exact_total - total
            by_lane["history"] += exact_total - total
            total = exact_total
        return Usage(
            window=self.window,
            output_reserve_tokens=self.output_reserve_tokens,
            total=total,
            fixed=fixed,
            by_component=by_component,
            by_lane=by_lane,
            by_turn=by_turn,
            by_item=by_item,
            exact=self.exact,
            mode=self.mode,
        )

    def offset(self, conv: Conversation, index: int) -> int:
        """Prompt tokens before `conv.items[index]`: an edit there re-prefills the rest."""
        n = self.prefix_cost(conv.prefix).total
        if self.mode == "chain":
            texts = self._chains.texts(conv)
            return n + sum(self.count(t) for t in texts[:index])
        return n + sum(self.item_segment(item)[1] for item in conv.items[:index])

    def verify(self, conv: Conversation) -> tuple[int, int]:
        """(ledger total, tokenizer count of the template's own render); equal when exact."""
        rendered = self.codec.render(conv.messages(), conv.prefix.tools or None, True)
        return self.usage(conv).total, len(self.codec.tokenize(rendered))

    @staticmethod
    def _request_item(conv: Conversation) -> Item | None:
        for item in reversed(conv.items):
            if item.kind == "user":
                return item if item.turn == conv.turn else None
        return None

    # --- per-call cache accounting ------------------------------------------------------

    def record_call(self, stats: CallStats, *, turn: int, label: str = "answer") -> CallRecord:
        rec = CallRecord(
            turn=turn,
            label=label,
            prompt_tokens=stats.prompt_tokens,
            reused_tokens=stats.reused_tokens,
            evaluated_tokens=stats.evaluated_tokens,
            generated_tokens=stats.generated_tokens,
            full_reprefill=stats.full_reprefill,
            prefill_s=stats.prefill_s,
            cache_reported=stats.cache_reported,
            cancelled=stats.cancelled,
        )
        self.calls.append(rec)
        return rec
