"""Admission: what each lane lets in, within its budget, before the prompt is fitted.

Plain functions over the conversation, the ledger and the context settings. The fixed head is
built once per session (briefing and notes capped to the briefing budget). Each turn appends
its state snapshot only when it changed, its evidence deduplicated, ranked and within budget,
and the request (a preview with its id if it is huge); what was cut short comes back beside
the new items as omissions with their recovery calls. Tool results over the tool_result
budget are admitted as a preview naming their id (the whole result stays in the event log),
recorded as an omission on the conversation.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from context.conversation import Conversation, Item, Prefix, neutralize
from context.envelope import Omission, RecoverCall
from context.fitting import cap_lines, preview, token_count_bounded
from context.inputs import Evidence, Request, StateSnapshot
from context.lanes import Lane
from context.ledger import Ledger

if TYPE_CHECKING:
    from config.settings import ContextSettings

# Said in a recalled note's header when recall was not sure it holds what was asked; the
# system prompt tells the model what it means.
RELATED = "; only related"


@dataclass
class Admitted:
    """What admitting one turn appended to the conversation, and what it left out."""

    items: list[Item] = field(default_factory=list)
    omissions: list[Omission] = field(default_factory=list)


# --- the fixed head ---------------------------------------------------------------------


def fit_prefix(ledger: Ledger, ctx: ContextSettings, head: Prefix) -> Prefix:
    """The session's fixed head with briefing and notes together cut to the briefing budget."""
    limit = ctx.budget("briefing")
    briefing, _ = cap_lines(
        ledger, neutralize(head.briefing), limit, "(+{n} more lines: search_memory finds them)"
    )
    left = max(0, limit - ledger.count(briefing)) if briefing else limit
    notes, _ = cap_lines(
        ledger, neutralize(head.notes), left, "(+{n} more notes: search_memory finds them)"
    )
    return replace(head, briefing=briefing, notes=notes if left else "")


# --- each turn --------------------------------------------------------------------------


def admit_turn(
    conv: Conversation,
    request: Request,
    state: StateSnapshot | None,
    evidence: Sequence[Evidence],
    *,
    ledger: Ledger,
    ctx: ContextSettings,
) -> Admitted:
    """Start a turn: append its state snapshot, evidence and request."""
    turn = conv.new_turn()
    out = Admitted()
    if state is not None:
        item = _admit_state(conv, state, turn, ledger, ctx, out.omissions)
        if item is not None:
            out.items.append(conv.append(item))
    for item in _admit_evidence(conv, evidence, state, turn, ledger, ctx, out.omissions):
        out.items.append(conv.append(item))
    text = neutralize(request.text)
    limit = max(256, ctx.budget("history_tail"))
    reason = "the user's request"
    total, _ = token_count_bounded(ledger, text)
    if total > limit:
        text = preview(ledger, text, limit, request.id, total)
        reason = f"the user's request (a preview: {total:,} tokens in all)"
        out.omissions.append(_omit_rest("request", request.id, total))
    item = Item(request.id, "user", "user", text, turn=turn, lane="history", reason=reason)
    item.original_tokens = total
    out.items.append(conv.append(item))
    return out


def _admit_state(
    conv: Conversation,
    state: StateSnapshot,
    turn: int,
    ledger: Ledger,
    ctx: ContextSettings,
    omissions: list[Omission],
) -> Item | None:
    text, dropped = cap_lines(
        ledger,
        neutralize(state.text),
        ctx.budget("state"),
        '(+{n} more rows: get_context(type="tasks") lists them)',
    )
    if dropped:
        omissions.append(
            Omission(
                lane="state",
                reason=f"{dropped} Work Index rows collapsed to fit the state budget",
                recover_with=RecoverCall(name="get_context", arguments={"type": "tasks"}),
            )
        )
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(state.observed_at))
    content = f"[Current state from Annie's records, {stamp}; not said by the user]\n{text}"
    last = conv.last("state")
    if last is not None and not last.cleared and last.meta.get("body") == text:
        return None
    item_id = state.id or f"state-t{turn}"
    item = Item(item_id, "state", "user", content, turn=turn, lane="state")
    item.source_ids = list(state.source_ids)
    item.reason = "mandatory current state (Work Index), changed since last shown"
    item.meta["body"] = text
    # Provenance for the envelope: the records' time and when what it lists stops holding.
    item.meta["observed_at"] = state.observed_at
    item.meta["expires_at"] = state.expires_at
    return item


def _admit_evidence(
    conv: Conversation,
    evidence: Sequence[Evidence],
    state: StateSnapshot | None,
    turn: int,
    ledger: Ledger,
    ctx: ContextSettings,
    omissions: list[Omission],
) -> list[Item]:
    if not evidence:
        return []
    present = {sid for i in conv.items if not i.cleared for sid in i.source_ids}
    # A note shown as only related to an earlier question is shown again when it is now the
    # answer recall is sure of: the old header would tell the model not to trust it.
    hedged = {
        sid
        for i in conv.items
        if not i.cleared and i.lane == "evidence" and not i.meta.get("certain", True)
        for sid in i.source_ids
    }
    present.update(conv.prefix.source_ids)
    if state is not None:
        present.update(state.source_ids)
    left = ctx.budget("evidence")
    # One turn's share: the lane holds earlier turns' evidence too.
    turn_left = ctx.turn_evidence()
    out: list[Item] = []
    for ev in sorted(evidence, key=lambda e: -e.score):
        if ev.id in present and not (ev.certain and ev.id in hedged):
            continue
        present.add(ev.id)
        stamp = time.strftime("%Y-%m-%d", time.localtime(ev.observed_at or time.time()))
        # A note from a recall that found only notes near the question says so, where the
        # model reads it (`context.certainty`).
        hedge = "" if ev.certain else RELATED
        content = (
            f"[Retrieved from memory: {ev.source_type} {ev.id}, {stamp}{hedge}]\n"
            f"{neutralize(ev.text)}"
        )
        n = ledger.message_tokens({"role": "user", "content": content})
        if n > left or n > turn_left:
            over = "the evidence budget" if n > left else "this turn's evidence share"
            omissions.append(
                Omission(
                    lane="evidence",
                    reason=f"evidence {ev.id} (score {ev.score:.2f}) over {over}",
                    source_ids=[ev.id],
                    recover_with=RecoverCall(name="get_context", arguments={"ids": [ev.id]}),
                )
            )
            continue
        left -= n
        turn_left -= n
        item = Item(f"{ev.id}@t{turn}", "evidence", "user", content, turn=turn, lane="evidence")
        item.source_ids = [ev.id, *(i for i in ev.shows if i != ev.id)]
        match = "" if ev.certain else ", only related"
        item.reason = f"retrieved (score {ev.score:.2f}{match}) for {ev.query or 'this request'!r}"
        item.meta["certain"] = ev.certain
        if ev.observed_at:
            item.meta["observed_at"] = ev.observed_at
        item.meta["sensitivity"] = ev.sensitivity
        item.meta["expires_at"] = ev.expires_at
        out.append(item)
    return out


def admit_tool_result(
    conv: Conversation,
    *,
    ledger: Ledger,
    ctx: ContextSettings,
    id: str,
    call_id: str,
    name: str,
    content: str,
    ok: bool = True,
) -> Item:
    """Append a tool result; one over the tool_result budget becomes a preview with its id."""
    text = neutralize(content)
    limit = ctx.budget("tool_result")
    total, exact = token_count_bounded(ledger, text)
    reason = f"result of {name} ({'ok' if ok else 'error'})"
    if total > limit:
        text = preview(ledger, text, limit, id, total)
        reason += f", a preview: {total:,} tokens in all"
        conv.omitted.append(_omit_rest("history", id, total))
    item = Item(id, "tool_result", "tool", text, turn=conv.turn, call_id=call_id, name=name)
    item.reason = reason
    item.original_tokens = total if total > limit else 0
    item.meta["ok"] = ok
    if not exact:
        item.meta["original_tokens_estimated"] = True
    return conv.append(item)


def admit_tool_schemas(conv: Conversation, group: str, text: str) -> Item:
    """Append a group's schemas to the tools lane: pinned, so no compaction tier removes them.

    Appended (never spliced into the prefix), so every earlier token stays cached; it goes
    after the round's tool results, which the chat templates group into one turn."""
    item_id = f"tools-{group}"
    if conv.get(item_id) is not None:  # loaded again after it was unloaded
        item_id = f"tools-{group}@t{conv.turn}-{len(conv.items)}"
    item = Item(item_id, "tools", "user", neutralize(text), turn=conv.turn, lane="tools")
    item.pinned = True
    item.reason = f"schemas of the {group} tools, loaded on demand in turn {conv.turn}"
    item.meta["group"] = group
    return conv.append(item)


def _omit_rest(lane: Lane, item_id: str, total: int) -> Omission:
    return Omission(
        lane=lane,
        reason=f"the rest of {item_id} ({total:,} tokens in all) is stored, not shown",
        source_ids=[item_id],
        recover_with=RecoverCall(name="get_context", arguments={"ids": [item_id], "offset": 0}),
    )
