"""The data channel to the page: events out as JSON, the page's messages in.

Events are held until the channel opens, then sent in order. The page sends typed text, a
request to stop speaking, or an answer to the approval it shows (`{"type": "approval",
"id": ..., "decision": "yes" | "no"}`). The page shows the approval a spoken yes would
answer (this conversation's newest open one) and its Approve and Deny buttons send exactly
that yes or no as typed text, through the same turn and the same resolution code; an
answer to an approval that is no longer the one waiting is refused, so a stale button can
never confirm something else. Other message types go to the handler a feature registered
for them in `handlers` (the knowledge panel's actions, `bot.knowledge`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from bot.events import ApprovalEvent, ErrorEvent, Event
from bot.voice_types import Channel
from memory.approvals import Approvals, describe
from memory.rows import ApprovalRow

WHERE = "data channel"


class PageChannel:
    """One page's data channel: `send` events, `handle` what the page sends."""

    def __init__(
        self,
        *,
        on_text: Callable[[str], Awaitable[None]],
        on_interrupt: Callable[[str], object],
        approvals: Approvals | None = None,
        session_id: str = "",
    ) -> None:
        self.on_text = on_text
        self.on_interrupt = on_interrupt
        self.approvals = approvals
        self.session_id = session_id
        # Called with each event's JSON object as it is sent (tests, the benchmark).
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        # Other message types by their "type" (the knowledge panel's actions, for one), so
        # features add messages without this class knowing them.
        self.handlers: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {}
        self._channel: Channel | None = None
        self._outbox: list[str] = []
        self._shown: str | None = None  # the approval id the page shows ("" none)

    def attach(self, channel: Any, spawn: Callable[[Awaitable[None]], object]) -> None:
        self._channel = channel

        @channel.on("open")
        def _open() -> None:
            self._flush()

        @channel.on("message")
        def _message(message: object) -> None:
            if isinstance(message, str):
                spawn(self.handle(message))

        self._flush()

    @property
    def is_open(self) -> bool:
        """A page is listening now (what Annie says first waits for one)."""
        return self._channel is not None and self._channel.readyState == "open"

    def send(self, event: Event | dict[str, Any]) -> None:
        payload = event.to_json() if isinstance(event, Event) else event
        for listener in self.listeners:
            listener(payload)
        self._outbox.append(json.dumps(payload, default=str))
        self._flush()

    def _flush(self) -> None:
        channel = self._channel
        if channel is None or channel.readyState != "open":
            return
        while self._outbox:
            channel.send(self._outbox.pop(0))

    async def handle(self, raw: str) -> None:
        """A message from the page: typed text, stop speaking, or an approval's answer."""
        try:
            message = json.loads(raw)
        except json.JSONDecodeError:
            self.send(ErrorEvent("a message from the page was not JSON", where=WHERE))
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "text" and isinstance(message.get("text"), str) and message["text"].strip():
            await self.on_text(message["text"].strip())
        elif kind == "interrupt":
            self.on_interrupt("button")
        elif kind == "approval":
            decision = self._decision(message)
            if decision is not None:
                await self.on_text(decision)
        elif isinstance(kind, str) and kind in self.handlers:
            await self.handlers[kind](message)
        else:
            self.send(ErrorEvent(f"unknown message type {kind!r}", where=WHERE))

    # --- the approval card ------------------------------------------------------------------

    def waiting(self) -> ApprovalRow | None:
        """The approval a yes in this conversation would answer, if it is still open."""
        if self.approvals is None or not self.session_id:
            return None
        row = self.approvals.latest_open(self.session_id)
        return row if row is not None and not row.expired() else None

    def show_approval(self) -> None:
        """Tell the page which approval to show (none: hide the buttons), when it changed."""
        row = self.waiting()
        shown = row.id if row is not None else ""
        if shown == self._shown or (not shown and self._shown is None):
            return
        self._shown = shown
        if row is None:
            self.send(ApprovalEvent(""))
            return
        self.send(ApprovalEvent(row.id, row.tool, row.params, describe(row), row.expires_at))

    def _decision(self, message: dict[str, Any]) -> str | None:
        decision = message.get("decision")
        if decision not in ("yes", "no"):
            self.send(ErrorEvent("an approval answer must be yes or no", where=WHERE))
            return None
        row = self.waiting()
        if row is None or row.id != message.get("id"):
            self.send(ErrorEvent("that approval is no longer waiting", where=WHERE))
            self.show_approval()
            return None
        return str(decision)
