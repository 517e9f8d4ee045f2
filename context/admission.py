"""Admission: what each lane lets in, within its budget, before the prompt is fitted.

The fixed head is built once per session (briefing and notes capped to the briefing budget).
Each turn appends its state snapshot only when it changed, its evidence deduplicated, ranked
and within budget, and the request (a preview with its id if it is huge). Tool results over
the tool_result budget are admitted as a preview naming their id; the whole result stays in
the event log. Everything cut short is recorded as an omission with its recovery call.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from context.conversation import Conversation, Item, Omission, Prefix, neutralize
from context.envelope import OmissionRecord, RecoverCall
from context.fitting import cap_lines, preview, token_count_bounded
from context.inputs import Evidence, Request, StateSnapshot
from context.ledger import Ledger

if TYPE_CHECKING:
    from config import Settings


class AssemblerPart:
    """Shared state of the assembler's parts: settings, ledger and this turn's omissions."""

    settings: Settings
    ledger: Ledger
    _turn_omissions: list[OmissionRecord]

    def budget(self, lane: str) -> int:
        return self.settings.context.budget(lane)


class Admission(AssemblerPart):
    # --- the fixed head -----------------------------------------------------------------

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
        limit = self.budget("briefing")
        briefing, _ = cap_lines(
            self.ledger, neutralize(briefing), limit, "(+{n} more lines: search_memory finds them)"
        )
        left = max(0, limit - self.ledger.count(briefing)) if briefing else limit
        notes, _ = cap_lines(
            self.ledger, neutralize(notes), left, "(+{n} more notes: search_memory finds them)"
        )
        return Prefix(
            system_prompt,
            list(tools),
            list(tool_groups),
            briefing,
            notes if left else "",
            tuple(source_ids),
        )

    # --- admission ----------------------------------------------------------------------

    def admit_turn(
        self,
        conv: Conversation,
        request: Request,
        state: StateSnapshot | None = None,
        evidence: Sequence[Evidence] = (),
    ) -> list[Item]:
        """Start a turn: append its state snapshot, evidence and request; returns the new items."""
        turn = conv.new_turn()
        self._turn_omissions = []
        added: list[Item] = []
        if state is not None:
            item = self._admit_state(conv, state, turn)
            if item is not None:
                added.append(conv.append(item))
        added += [conv.append(i) for i in self._admit_evidence(conv, evidence, state, turn)]
        text = neutralize(request.text)
        limit = max(256, self.budget("history_tail"))
        reason = "the user's request"
        total, _ = token_count_bounded(self.ledger, text)
        if total > limit:
            text = preview(self.ledger, text, limit, request.id, total)
            reason = f"the user's request (a preview: {total:,} tokens in all)"
            self._turn_omissions.append(_omit_rest("request", request.id, total))
        item = Item(request.id, "user", "user", text, turn=turn, lane="history", reason=reason)
        item.original_tokens = total
        added.append(conv.append(item))
        return added

    def _admit_state(self, conv: Conversation, state: StateSnapshot, turn: int) -> Item | None:
        text, dropped = cap_lines(
            self.ledger,
            neutralize(state.text),
            self.budget("state"),
            '(+{n} more rows: get_context(type="tasks") lists them)',
        )
        if dropped:
            self._turn_omissions.append(
                OmissionRecord(
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
        return item

    def _admit_evidence(
        self,
        conv: Conversation,
        evidence: Sequence[Evidence],
        state: StateSnapshot | None,
        turn: int,
    ) -> list[Item]:
        if not evidence:
            return []
        present = {sid for i in conv.items if not i.cleared for sid in i.source_ids}
        present.update(conv.prefix.source_ids)
        if state is not None:
            present.update(state.source_ids)
        left = self.budget("evidence")
        out: list[Item] = []
        for ev in sorted(evidence, key=lambda e: -e.score):
            if ev.id in present:
                continue
            present.add(ev.id)
            stamp = time.strftime("%Y-%m-%d", time.localtime(ev.observed_at or time.time()))
            content = (
                f"[Retrieved from memory: {ev.source_type} {ev.id}, {stamp}]\n{neutralize(ev.text)}"
            )
            n = self.ledger.message_tokens({"role": "user", "content": content})
            if n > left:
                self._turn_omissions.append(
                    OmissionRecord(
                        lane="evidence",
                        reason=f"evidence {ev.id} (score {ev.score:.2f}) over the evidence budget",
                        source_ids=[ev.id],
                        recover_with=RecoverCall(name="get_context", arguments={"ids": [ev.id]}),
                    )
                )
                continue
            left -= n
            item = Item(f"{ev.id}@t{turn}", "evidence", "user", content, turn=turn, lane="evidence")
            item.source_ids = [ev.id]
            item.reason = f"retrieved (score {ev.score:.2f}) for {ev.query or 'this request'!r}"
            out.append(item)
        return out

    def admit_tool_result(
        self, conv: Conversation, *, id: str, call_id: str, name: str, content: str, ok: bool = True
    ) -> Item:
        """Append a tool result; one over the tool_result budget becomes a preview with its id."""
        text = neutralize(content)
        limit = self.budget("tool_result")
        total, exact = token_count_bounded(self.ledger, text)
        reason = f"result of {name} ({'ok' if ok else 'error'})"
        if total > limit:
            text = preview(self.ledger, text, limit, id, total)
            reason += f", a preview: {total:,} tokens in all"
            omission = _omit_rest("history", id, total)
            conv.omitted.append(
                Omission(
                    omission.lane,
                    omission.reason,
                    (id,),
                    {"name": "get_context", "arguments": {"ids": [id]}},
                )
            )
        item = Item(id, "tool_result", "tool", text, turn=conv.turn, call_id=call_id, name=name)
        item.reason = reason
        item.original_tokens = total if total > limit else 0
        item.meta["ok"] = ok
        if not exact:
            item.meta["original_tokens_estimated"] = True
        if name == "load_tool_group":
            item.lane = "tools"
        return conv.append(item)


def _omit_rest(lane: str, item_id: str, total: int) -> OmissionRecord:
    return OmissionRecord(
        lane=lane,
        reason=f"the rest of {item_id} ({total:,} tokens in all) is stored, not shown",
        source_ids=[item_id],
        recover_with=RecoverCall(name="get_context", arguments={"ids": [item_id], "offset": 0}),
    )
