"""The data channel to the page: events out as JSON, the page's messages in as typed frames.

Events are held until the channel opens, then sent in order. The page sends typed text, a
request to stop speaking, or an answer to the approval it shows (`{"type": "approval",
"id": ..., "decision": "yes" | "no"}`). What the voice connection must act on goes out as
frames on one queue (`frames`), which it reads: `Typed` (text to answer as a turn) and
`StopPressed` (stop Annie now); the channel holds nothing of the connection. Typed text may
name a tool the answer must call first (`{"type": "text", "text": ..., "tool":
"create_task"}`), for a client that wants that action whatever the model would choose;
approval rules apply to it as to any call.

The page shows the approval a spoken yes would answer (this conversation's newest open
one) and its Approve and Deny buttons send exactly that yes or no as typed text, through
the same turn and the same resolution code; an answer to an approval that is no longer the
one waiting is refused, so a stale button can never confirm something else. Other message
types go to the handler a feature registered for them with `on` (the knowledge panel's
actions, `bot.server.knowledge`); a feature watches what is sent with `watch`, and learns the
page has gone from `closed`. That is all a feature sees of the connection.

Whatever the page (or anything posing as it) sends is bounded. A message over
`MAX_MESSAGE_CHARS` or typed text over `MAX_TEXT_CHARS` is refused unread; binary and
malformed messages get an error event naming what was wrong. "Stop speaking" is posted at once;
everything else waits its turn in a queue of at most `MAX_QUEUED`, handled one at a time (a
`Typed` frame counts as handled once the connection has begun its turn).
When messages come faster than that (each typed text interrupts the turn before it), the
oldest waiting one is dropped, so the newest is what gets answered, and the page gets one
error event per burst. Events for a page whose channel is not open yet are held up to
`MAX_HELD`, the oldest dropped first.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bot.turn.events import ApprovalEvent, ErrorEvent, Event
from bot.voice.types import Channel
from memory.approvals import Approvals, describe
from memory.rows import ApprovalRow

log = logging.getLogger(__name__)

WHERE = "data channel"
# The page's text box holds 4,000 characters; a typed message longer than that is not one.
MAX_TEXT_CHARS = 4000
# Any message, JSON and all; checked before parsing, so a 200 KB message costs nothing.
MAX_MESSAGE_CHARS = 16384
# Messages waiting to be handled (the one being handled not counted).
MAX_QUEUED = 8
# Events held for a channel that is not open yet.
MAX_HELD = 1000


@dataclass(frozen=True)
class Typed:
    """Text from the page to answer as a turn: typed, or an approval button's "yes" or "no".
    `tool` names a tool the answer must call first. The reader resolves `begun` once the turn
    has begun (or with the error that stopped it); the page's next message waits for that."""

    text: str
    tool: str | None = None
    begun: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future(), compare=False
    )


@dataclass(frozen=True)
class StopPressed:
    """The page's stop button: stop Annie now (never queued behind a turn)."""


PageFrame = Typed | StopPressed


class PageChannel:
    """One page's data channel: `send` events, `handle` what the page sends; what the voice
    connection acts on goes out as `frames`."""

    def __init__(
        self,
        *,
        tools: frozenset[str] = frozenset(),
        approvals: Approvals | None = None,
        session_id: str = "",
    ) -> None:
        self.tools = tools  # the tool names a typed message may require
        # What the voice connection acts on, in order (`Typed`, `StopPressed`).
        self.frames: asyncio.Queue[PageFrame] = asyncio.Queue()
        self.approvals = approvals
        self.session_id = session_id
        # Called with each event's JSON object as it is sent (`watch`).
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        # Other message types by their "type" (the knowledge panel's actions, for one), so
        # features add messages without this class knowing them (`on`).
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {}
        self._channel: Channel | None = None
        self.opened = asyncio.Event()  # set once a channel is open
        self.closed = asyncio.Event()  # set once the connection is closed for good
        self._outbox: list[str] = []
        self._shown: str | None = None  # the approval id the page shows ("" none)
        self._queue: deque[dict[str, Any]] = deque()
        self._draining = False
        self._flooded = False  # an error for the current burst of dropped messages was sent
        self.dropped = 0  # messages dropped because they came faster than they were handled

    def on(self, kind: str, handler: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        """Messages of type `kind` go to `handler` (a feature's own messages)."""
        self._handlers[kind] = handler

    def watch(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """`listener` is called with each event's JSON object as it is sent."""
        self._listeners.append(listener)

    def attach(self, channel: Any, spawn: Callable[[Awaitable[None]], object]) -> None:
        self._channel = channel

        @channel.on("open")
        def _open() -> None:
            self.opened.set()
            self._flush()

        @channel.on("message")
        def _message(message: object) -> None:
            self.receive(message, spawn)

        if self.is_open:
            self.opened.set()
        self._flush()

    def receive(self, message: object, spawn: Callable[[Awaitable[None]], object]) -> None:
        """One message off the channel: refuse what is malformed, queue the rest (bounded)."""
        if not isinstance(message, str):
            self.send(ErrorEvent("binary messages are not accepted; send JSON text", where=WHERE))
            return
        parsed = self.parse(message)
        if parsed is None:
            return
        if parsed["type"] == "interrupt":
            self.frames.put_nowait(StopPressed())  # never behind a queue: stopping is urgent
            return
        if len(self._queue) >= MAX_QUEUED:
            self._queue.popleft()
            self.dropped += 1
            if not self._flooded:
                self._flooded = True
                self.send(
                    ErrorEvent(
                        "messages are arriving faster than Annie can handle them; older "
                        "ones were dropped (wait for the answer before sending more)",
                        where=WHERE,
                    )
                )
        self._queue.append(parsed)
        if not self._draining:
            self._draining = True
            spawn(self._drain())

    async def _drain(self) -> None:
        try:
            while self._queue:
                message = self._queue.popleft()
                try:
                    await self.dispatch(message)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    # A message no check foresaw: the page hears that it failed, the log why.
                    log.exception("handling a %r message from the page failed", message["type"])
                    self.send(ErrorEvent("that message could not be handled", where=WHERE))
        finally:
            self._draining = False
            self._flooded = False  # the burst is over; the next one is reported again

    @property
    def is_open(self) -> bool:
        """A page is listening now (what Annie says first waits for one)."""
        return self._channel is not None and self._channel.readyState == "open"

    def send(self, event: Event | dict[str, Any]) -> None:
        payload = event.to_json() if isinstance(event, Event) else event
        for listener in self._listeners:
            listener(payload)
        self._outbox.append(json.dumps(payload, default=str))
        if len(self._outbox) > MAX_HELD:
            del self._outbox[: len(self._outbox) - MAX_HELD]
        self._flush()

    def _flush(self) -> None:
        channel = self._channel
        if channel is None or channel.readyState != "open":
            return
        while self._outbox:
            channel.send(self._outbox.pop(0))

    async def handle(self, raw: str) -> None:
        """A message from the page: typed text, stop speaking, or an approval's answer."""
        message = self.parse(raw)
        if message is not None:
            await self.dispatch(message)

    def parse(self, raw: str) -> dict[str, Any] | None:
        """The message as a JSON object with a "type" string; None (and an error event sent)
        for anything else."""
        if len(raw) > MAX_MESSAGE_CHARS:
            self.send(
                ErrorEvent(
                    f"a message of {len(raw)} characters was refused "
                    f"(the limit is {MAX_MESSAGE_CHARS})",
                    where=WHERE,
                )
            )
            return None
        try:
            message = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            self.send(ErrorEvent("a message from the page was not JSON", where=WHERE))
            return None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            self.send(
                ErrorEvent('a message must be a JSON object with a "type" string', where=WHERE)
            )
            return None
        return message

    async def dispatch(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "text":
            text = self._text(message)
            tool = self._tool(message)
            if text is not None and tool is not False:
                await self._typed(text, tool if isinstance(tool, str) else None)
        elif kind == "interrupt":
            self.frames.put_nowait(StopPressed())
        elif kind == "approval":
            decision = self._decision(message)
            if decision is not None:
                await self._typed(decision, None)
        elif kind in self._handlers:
            await self._handlers[kind](message)
        else:
            self.send(ErrorEvent(f"unknown message type {kind!r}", where=WHERE))

    async def _typed(self, text: str, tool: str | None) -> None:
        """Post a turn, and wait until the connection has begun it: a burst of messages backs
        up here, in the bounded queue, where the oldest are dropped."""
        frame = Typed(text, tool)
        self.frames.put_nowait(frame)
        await frame.begun

    def _text(self, message: dict[str, Any]) -> str | None:
        text = message.get("text")
        if not isinstance(text, str) or not text.strip():
            self.send(ErrorEvent('typed text must be a non-empty "text" string', where=WHERE))
            return None
        if len(text) > MAX_TEXT_CHARS:
            self.send(
                ErrorEvent(
                    f"typed text of {len(text)} characters was refused "
                    f"(the limit is {MAX_TEXT_CHARS})",
                    where=WHERE,
                )
            )
            return None
        return text.strip()

    def _tool(self, message: dict[str, Any]) -> str | bool | None:
        """The tool a typed message requires: None for none, False (error sent) if unknown."""
        tool = message.get("tool")
        if tool is None:
            return None
        if not isinstance(tool, str) or tool not in self.tools:
            shown = str(tool)[:60]
            self.send(ErrorEvent(f'"tool" names no tool Annie has: {shown!r}', where=WHERE))
            return False
        return tool

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
