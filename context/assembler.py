"""The bounded context assembler: admits each turn's items by lane and keeps the prompt in budget.

Lanes: `context.lanes`. The fixed head (policy, schemas, briefing, notes) is built once per
session by `build_prefix`; each turn `admit_turn` appends that turn's state snapshot (only
when it changed), its evidence (deduplicated, ranked, within budget) and the request, and
`admit_tool_result` admits results (a preview with the id when too large): the functions of
`context.admission`. Past `context.hold_lanes_above` tokens each turn's admission holds every
lane to its budget, trimming within that lane only (`context.holding`). `assemble`
guarantees prompt + output reserve <= window; on overflow it trims in the fixed overflow order
(`context.overflow.fit`) and never drops the request, the policy, pinned items or the current
state. Every cut is a recorded omission with its recovery call,
and the envelope's manifest lists everything admitted and everything left out.

`Assembler` is the one owner of a session's assembly state: this turn's omissions and the
caches that keep building the envelope in proportion to what is new.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from context import admission, holding
from context.conversation import Conversation, Item, Prefix
from context.envelope import (
    Budget,
    ContextEnvelope,
    ContextItem,
    Omission,
    RecoverCall,
    Scope,
    UserRequest,
)
from context.inputs import Evidence, Request, StateSnapshot
from context.lanes import LANE_BUDGET
from context.ledger import Ledger, Usage
from context.overflow import ContextOverflowError, fit

__all__ = [
    "Assembler",
    "Assembly",
    "ContextOverflowError",
    "Evidence",
    "Request",
    "StateSnapshot",
    "manifest_json",
]

if TYPE_CHECKING:
    from config import Settings


@dataclass
class Assembly:
    """One model call's input: the prompt as rendered, its usage and its envelope."""

    conv: Conversation
    prompt: str
    usage: Usage
    envelope: ContextEnvelope
    trimmed: list[str]
    overflow: bool

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages (built on demand; the prompt string is what the model gets)."""
        return self.conv.messages()


@dataclass(eq=False)
class _Lanes:
    conv: Conversation
    generation: int
    count: int = 0
    first: Item | None = None
    last: Item | None = None
    states: list[Item] = field(default_factory=list)
    history: list[ContextItem] = field(default_factory=list)
    evidence: list[ContextItem] = field(default_factory=list)


_SOURCE = {
    "user": ("message", "user_claim"),
    "assistant": ("message", "derived"),
    "tool_call": ("message", "derived"),
    "tool_result": ("event", "live"),
    "summary": ("event", "derived"),
    "state": ("projection", "canonical"),
    "evidence": ("memory", "derived"),
    "note": ("memory", "derived"),
}


class Assembler:
    """One session's admission, fitting and envelopes, over its settings and ledger."""

    def __init__(self, settings: Settings, ledger: Ledger) -> None:
        self.settings = settings
        self.ledger = ledger
        # What this turn's admission left out (set by admit_turn, listed by every envelope).
        self.turn_omissions: list[Omission] = []
        self._items_cache: dict[tuple[Any, ...], ContextItem] = {}
        self._versions: dict[str, str] = {}
        self._lane_cache: _Lanes | None = None

    # --- admission (`context.admission`) ------------------------------------------------

    def build_prefix(
        self,
        system_prompt: str,
        tools: Sequence[dict[str, Any]],
        tool_groups: Sequence[str],
        briefing: str = "",
        notes: str = "",
        source_ids: Sequence[str] = (),
    ) -> Prefix:
        """The session's fixed head; briefing and notes together fit the briefing budget."""
        head = Prefix(
            system_prompt, list(tools), list(tool_groups), briefing, notes, tuple(source_ids)
        )
        return admission.fit_prefix(self.ledger, self.settings.context, head)

    def admit_turn(
        self,
        conv: Conversation,
        request: Request,
        state: StateSnapshot | None = None,
        evidence: Sequence[Evidence] = (),
    ) -> list[Item]:
        """Start a turn: append its state snapshot, evidence and request; returns the new items."""
        admitted = admission.admit_turn(
            conv, request, state, evidence, ledger=self.ledger, ctx=self.settings.context
        )
        self.turn_omissions = admitted.omissions
        self.hold_lanes(conv)
        return admitted.items

    def hold_lanes(self, conv: Conversation, *, always: bool = False) -> list[Item]:
        """Past `context.hold_lanes_above` (or `always`), trim each lane over its budget
        within itself."""
        return holding.hold_lanes(
            conv,
            self.ledger,
            self.settings.context,
            keep_recent=self.settings.compaction.keep_recent_tool_results,
            always=always,
        )

    def holding(self, conv: Conversation) -> bool:
        """Whether lanes are held now (the prompt is past `context.hold_lanes_above`)."""
        return holding.holding(conv, self.ledger, self.settings.context)

    def tools_over_budget(self, conv: Conversation) -> bool:
        """The tools lane (head schemas and groups loaded since) is over its budget."""
        limit = self.settings.context.budget("tools")
        return holding.tools_tokens(conv, self.ledger) > limit

    def unload_tool_group(self, conv: Conversation, group: str, why: str) -> bool:
        """Take a group loaded mid-session out of the tools lane (load_tool_group reloads it)."""
        return holding.unload_tools(conv, group, why)

    def admit_tool_result(
        self, conv: Conversation, *, id: str, call_id: str, name: str, content: str, ok: bool = True
    ) -> Item:
        """Append a tool result; one over the tool_result budget becomes a preview with its id."""
        return admission.admit_tool_result(
            conv,
            ledger=self.ledger,
            ctx=self.settings.context,
            id=id,
            call_id=call_id,
            name=name,
            content=content,
            ok=ok,
        )

    def admit_tool_schemas(self, conv: Conversation, group: str, text: str) -> Item:
        """Append a loaded group's schemas as a pinned tools-lane item (after its results)."""
        return admission.admit_tool_schemas(conv, group, text)

    # --- the envelope -------------------------------------------------------------------

    def assemble(
        self,
        conv: Conversation,
        request: Request | None = None,
        *,
        active_groups: Sequence[str] = (),
        available_groups: Sequence[str] = (),
    ) -> Assembly:
        """Fit the conversation to the window and describe the call; see the module docstring."""
        usage, trimmed = fit(conv, self.ledger, lambda: self.hold_lanes(conv, always=True))
        envelope = self.envelope(
            conv, usage, request, active_groups, available_groups, trimmed=trimmed
        )
        return Assembly(
            conv=conv,
            prompt=self.ledger.prompt(conv),
            usage=usage,
            envelope=envelope,
            trimmed=trimmed,
            overflow=bool(trimmed),
        )

    def policy_version(self, prefix: Prefix) -> str:
        key = prefix.system_prompt
        version = self._versions.get(key)
        if version is None:
            digest = hashlib.sha256(key.encode()).hexdigest()[:12]
            version = self._versions[key] = f"policy-{digest}"
        return version

    def envelope(
        self,
        conv: Conversation,
        usage: Usage,
        request: Request | None,
        active_groups: Sequence[str],
        available_groups: Sequence[str],
        *,
        trimmed: Sequence[str] = (),
    ) -> ContextEnvelope:
        lanes_cache = self._lanes(conv)
        latest_state = lanes_cache.states[-1] if lanes_cache.states else None
        state = [
            self._context_item(i, self.ledger.item_tokens(i), latest_state)
            for i in lanes_cache.states
        ]
        omissions = [*conv.omitted, *self.turn_omissions]
        omissions += [
            Omission(
                lane="tools",
                reason=f"tool group '{g}' not loaded",
                recover_with=RecoverCall(name="load_tool_group", arguments={"group": g}),
            )
            for g in available_groups
            if g not in active_groups
        ]
        req = None
        if request is not None:
            req = UserRequest(text=request.text, turn_id=request.turn_id, event_id=request.id)
        return ContextEnvelope.model_construct(
            request=req,
            scope=Scope(
                thread_id=conv.session_id,
                task_id=request.task_id if request is not None else None,
                approval_id=request.approval_id if request is not None else None,
            ),
            policy_version=self.policy_version(conv.prefix),
            current_state=state,
            recent_history=list(lanes_cache.history),
            retrieved_evidence=list(lanes_cache.evidence),
            active_tool_groups=list(active_groups),
            budget=Budget(
                limit=usage.window,
                used=usage.total,
                output_reserve_tokens=usage.output_reserve_tokens,
                by_lane=dict(usage.by_lane),
                by_component=dict(usage.by_component),
                lane_limits={
                    lane: self.settings.context.budget(key) for lane, key in LANE_BUDGET.items()
                },
            ),
            omissions=omissions,
            fixed=usage.fixed.as_dict(),
            trimmed=list(trimmed),
            overflow=bool(trimmed),
        )

    def _lanes(self, conv: Conversation) -> _Lanes:
        """The envelope's per-item lists, extended with appended items only (like the ledger)."""
        c = self._lane_cache
        items = conv.items
        if (
            c is None
            or c.conv is not conv
            or c.generation != conv.generation
            or c.count > len(items)
            or (c.count and (items[c.count - 1] is not c.last or items[0] is not c.first))
        ):
            c = self._lane_cache = _Lanes(conv=conv, generation=conv.generation)
        for item in items[c.count :]:
            if item.kind == "state":
                c.states.append(item)
                continue
            ci = self._context_item(item, self.ledger.item_tokens(item), None)
            (c.evidence if item.kind == "evidence" else c.history).append(ci)
        c.count = len(items)
        if items:
            c.first, c.last = items[0], items[-1]
        return c

    def _context_item(self, item: Item, tokens: int, latest_state: Item | None) -> ContextItem:
        key = (item.id, item.cleared, item.interrupted, tokens, item is latest_state)
        hit = self._items_cache.get(key)
        if hit is not None:
            return hit
        source_type, authority = _SOURCE.get(item.kind, ("message", "derived"))
        reason = item.reason or f"recent raw tail (turn {item.turn})"
        if item.cleared:
            reason = str(item.meta.get("left_out") or "placeholder for a cleared item")
        elif item.kind == "state" and item is not latest_state:
            reason = f"earlier state snapshot (turn {item.turn}), kept as rendered"
        ci = ContextItem.model_construct(
            source_type=source_type,
            source_id=item.id,
            authority=authority,
            # The record's time where the item stands for a record (a note, the state).
            observed_at=item.meta.get("observed_at") or item.created_at,
            expires_at=item.meta.get("expires_at"),
            sensitivity=item.meta.get("sensitivity") or "normal",
            token_estimate=tokens,
            admission_reason=reason,
            content=item.visible,
            lane=item.lane,
            kind=item.kind,
        )
        if len(self._items_cache) > 50_000:
            self._items_cache.clear()
        self._items_cache[key] = ci
        return ci


def manifest_json(envelope: ContextEnvelope) -> dict[str, Any]:
    """The manifest as plain JSON for the event log."""
    return json.loads(envelope.manifest().model_dump_json())
