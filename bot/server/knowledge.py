"""The knowledge panel: what Annie knows, as the page shows it, and what the page may do to it.

A snapshot (`KnowledgeEvent`, type "knowledge") lists open tasks (those pending on the user
first), open reminders with their times, approvals still waiting, and recent notes. Each
page gets one when it connects and a fresh one after any event that may have changed the
records (a finished turn, a tool result, an approval shown or answered, a reminder said),
on any open page: the records are shared, so a change seen on one page refreshes them all.
Building one is a handful of indexed, capped queries, and an unchanged snapshot is not sent
again.

Before the page connects it may read the same snapshot from `GET /api/knowledge` (token
checked like the offer), so the panel is filled on load without opening a conversation.

The page acts on an item with `{"type": "panel", "action": ..., "id": ...}`: a task marked
done, a reminder snoozed (`"minutes"`) or marked done, a note deleted. Deleting never
happens here: it runs the same approval-guarded `delete_note` tool a spoken request runs,
so it stores the same pending approval, and the page shows it with Approve and Deny like
any other. A malformed message or an unknown id gets an error event and changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from aiohttp import web

from bot.tools.approval import guarded
from bot.tools.base import ToolEnv
from bot.turn.events import ErrorEvent, Event
from memory.approvals import describe
from memory.db import NotFoundError, StoreError
from memory.rows import ApprovalRow, NoteRow, ReminderRow, TaskRow

if TYPE_CHECKING:
    from bot.tools.registry import ToolRegistry
    from bot.voice.page_channel import PageChannel
    from config import Settings
    from memory.store import Store

T = TypeVar("T")

WHERE = "panel"
# Events after which the records may differ from the page's last snapshot.
REFRESH_ON = frozenset({"assistant_done", "tool_result", "approval", "reminder"})
# How many items of each kind the page lists (counts of open tasks stay exact).
TASKS_SHOWN = 20
REMINDERS_SHOWN = 20
APPROVALS_SHOWN = 10
NOTES_SHOWN = 10
# A note is shown in full up to this many characters: the panel is a list, not a reader.
NOTE_CHARS = 280
# Snooze between one minute and one day; the page's default is ten minutes.
SNOOZE_MINUTES = (1, 24 * 60)
DEFAULT_SNOOZE = 10
ACTIONS = ("task_done", "reminder_done", "reminder_snooze", "note_delete")
_KEYS = {"type", "action", "id", "minutes"}
UNFINISHED = ["open", "blocked"]


@dataclass
class KnowledgeEvent(Event):
    """What Annie knows that the user may act on, newest state, for the page's panel."""

    type: ClassVar[str] = "knowledge"
    tasks: list[dict[str, Any]]
    tasks_total: int
    reminders: list[dict[str, Any]]
    approvals: list[dict[str, Any]]
    notes: list[dict[str, Any]]


@dataclass
class PanelResult(Event):
    """A panel action went through: what it did, in words."""

    type: ClassVar[str] = "panel_result"
    action: str
    id: str
    text: str
    approval_id: str = ""


def _task(t: TaskRow) -> dict[str, Any]:
    return {"id": t.id, "title": t.title, "status": t.status, "pending": t.pending, "due": t.due}


def _reminder(r: ReminderRow) -> dict[str, Any]:
    return {"id": r.id, "text": r.text, "due": r.due, "status": r.status, "kind": r.kind}


def _approval(a: ApprovalRow, here: str) -> dict[str, Any]:
    return {
        "id": a.id,
        "tool": a.tool,
        "params": a.params,
        "text": describe(a),
        "expires_at": a.expires_at,
        # Only this conversation's waiting approval can be answered from this page.
        "here": a.id == here,
    }


def _note(n: NoteRow) -> dict[str, Any]:
    text = n.text if len(n.text) <= NOTE_CHARS else n.text[: NOTE_CHARS - 1] + "…"
    return {
        "id": n.id,
        "kind": n.kind,
        "text": text,
        "created_at": n.created_at,
        # Provenance: the record's time, its version, and an open contradiction to settle.
        "updated_at": n.updated_at,
        "version": n.version,
        "private": n.private,
        "contradicts": n.contradicts,
    }


def open_tasks(store: Store, limit: int = TASKS_SHOWN) -> list[TaskRow]:
    """Unfinished tasks, those waiting on the user first, each group oldest first."""
    mine = store.tasks.find(status=UNFINISHED, pending="user", limit=limit)
    if len(mine) >= limit:
        return mine
    others = ["none", "assistant", "external"]
    return mine + store.tasks.find(status=UNFINISHED, pending=others, limit=limit - len(mine))


def snapshot(store: Store, here: str = "") -> KnowledgeEvent:
    """The panel's contents now; `here` is the approval this conversation's yes would answer."""
    counts = store.tasks.counts()
    return KnowledgeEvent(
        tasks=[_task(t) for t in open_tasks(store)],
        tasks_total=counts.get("open", 0) + counts.get("blocked", 0),
        reminders=[_reminder(r) for r in store.reminders.open(limit=REMINDERS_SHOWN)],
        approvals=[_approval(a, here) for a in store.approvals.pending()[:APPROVALS_SHOWN]],
        notes=[_note(n) for n in store.notes.recent(NOTES_SHOWN)],
    )


class ActionError(Exception):
    """A panel action refused, with the reason the page shows."""


@dataclass
class Panels:
    """Every open page's panel (the server's hook gives each new connection's page one)."""

    store: Store
    settings: Settings
    registry: ToolRegistry
    live: list[Panel] = field(default_factory=list)

    def __call__(self, page: PageChannel) -> None:
        panel = Panel(page, self)
        self.live.append(panel)
        # Dropped as its connection closes: a closed page's panel would keep the whole
        # connection alive (its audio input, resampler threads and buffers) until the next
        # change to the records, which a long run of status questions never makes.
        task = asyncio.ensure_future(page.closed.wait())
        task.add_done_callback(lambda _: self._drop(panel))

    def _drop(self, panel: Panel) -> None:
        self.live = [p for p in self.live if p is not panel and not p.page.closed.is_set()]

    def changed(self) -> None:
        """The records may have changed: every open page gets a fresh snapshot soon."""
        self.live = [p for p in self.live if not p.page.closed.is_set()]
        for panel in self.live:
            panel.schedule()


@dataclass
class Panel:
    """One page's panel: pushes snapshots over its data channel and runs its actions."""

    page: PageChannel
    group: Panels
    store: Store = field(init=False)
    _last: dict[str, Any] | None = field(default=None, init=False)
    _queued: bool = field(default=False, init=False)
    _actions: dict[str, Callable[[str, dict[str, Any]], Awaitable[PanelResult]]] = field(
        default_factory=dict, init=False
    )

    def __post_init__(self) -> None:
        self.store = self.group.store
        self._actions = {
            "task_done": self._task_done,
            "reminder_done": self._reminder_done,
            "reminder_snooze": self._reminder_snooze,
            "note_delete": self._note_delete,
        }
        self.page.on("panel", self.handle)
        self.page.watch(self._observe)
        self.push()  # held until the channel opens, so the panel fills on connect

    # --- snapshots ----------------------------------------------------------------------

    def _observe(self, payload: dict[str, Any]) -> None:
        if payload.get("type") in REFRESH_ON:
            self.group.changed()

    def schedule(self) -> None:
        """Push a snapshot once the current event has been sent."""
        if self._queued:
            return
        self._queued = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.push()
            return
        # After the event that triggered it (which is still being sent), and once for a
        # burst of events in the same tick.
        loop.call_soon(self.push)

    def push(self) -> None:
        """Send a fresh snapshot, unless it is the same as the last one sent."""
        self._queued = False
        waiting = self.page.waiting()
        try:
            event = snapshot(self.store, waiting.id if waiting is not None else "")
        except StoreError as exc:
            # Never an empty panel for records that could not be read.
            self.page.send(ErrorEvent(f"could not read what Annie knows: {exc}", where=WHERE))
            return
        payload = event.to_json()
        same = {k: v for k, v in payload.items() if k != "at"}  # `at`: when it was read
        if same == self._last:
            return
        self._last = same
        self.page.send(payload)

    # --- actions ------------------------------------------------------------------------

    async def handle(self, message: dict[str, Any]) -> None:
        """One action from the page; anything malformed or unknown changes nothing."""
        try:
            action, item = self._parse(message)
            result = await self._actions[action](item, message)
        except ActionError as exc:
            self.page.send(ErrorEvent(str(exc), where=WHERE))
            return
        except StoreError as exc:
            self.page.send(ErrorEvent(f"the panel action failed: {exc}", where=WHERE))
            return
        self.page.send(result)
        self.group.changed()

    def _parse(self, message: dict[str, Any]) -> tuple[str, str]:
        extra = sorted(set(message) - _KEYS)
        if extra:
            raise ActionError(f"a panel action has no field {', '.join(map(repr, extra))}")
        action = message.get("action")
        if action not in ACTIONS:
            raise ActionError(
                f"unknown panel action {action!r}; expected one of {', '.join(ACTIONS)}"
            )
        if "minutes" in message and action != "reminder_snooze":
            raise ActionError(f"the panel action {action} takes no minutes (only a snooze does)")
        item = message.get("id")
        if not isinstance(item, str) or not item.strip():
            raise ActionError(f"the panel action {action} needs the id of an item, like task-12")
        return str(action), item.strip()

    async def _task_done(self, item: str, message: dict[str, Any]) -> PanelResult:
        task = _found(lambda: self.store.tasks.get(item), f"no task {item}")
        if task.status == "done":
            raise ActionError(f"{task.id} is already done")
        row = self.store.tasks.complete(task.id)
        return PanelResult("task_done", row.id, f"Marked {row.id} done: {row.title}.")

    async def _reminder_done(self, item: str, message: dict[str, Any]) -> PanelResult:
        _found(lambda: self.store.reminders.get(item), f"no reminder {item}")
        row = _checked(lambda: self.store.reminders.done(item))
        return PanelResult("reminder_done", row.id, f"Marked {row.id} done: {row.text}.")

    async def _reminder_snooze(self, item: str, message: dict[str, Any]) -> PanelResult:
        minutes = message.get("minutes", DEFAULT_SNOOZE)
        low, high = SNOOZE_MINUTES
        # bool is an int in Python; true is not a number of minutes.
        if isinstance(minutes, bool) or not isinstance(minutes, int | float):
            raise ActionError(f"minutes must be a number from {low} to {high}")
        if not low <= minutes <= high:
            raise ActionError(f"minutes must be from {low} to {high}, not {minutes:g}")
        _found(lambda: self.store.reminders.get(item), f"no reminder {item}")
        row = _checked(lambda: self.store.reminders.snooze(item, float(minutes)))
        when = row.due[:16].replace("T", " ")
        return PanelResult("reminder_snooze", row.id, f"Snoozed {row.id} to {when} UTC.")

    async def _note_delete(self, item: str, message: dict[str, Any]) -> PanelResult:
        tool = self.group.registry.get("delete_note")
        if tool is None:
            raise ActionError("deleting notes is not available here")
        settings = self.group.settings
        ctx = ToolEnv(settings=settings, store=self.store, session_id=self.page.session_id)
        # The tool as the model calls it: it only stores the approval and describes it.
        out = await guarded(tool).run({"note_id": item}, ctx)
        approval_id = str(out.data.get("approval_id", ""))
        if not out.ok or not approval_id:
            raise ActionError(out.content.removeprefix("error: "))
        self.page.show_approval()
        return PanelResult(
            "note_delete",
            item,
            f"Delete {item}? Waiting for your approval ({approval_id}).",
            approval_id,
        )


def _found(read: Callable[[], T | None], missing: str) -> T:
    """`read()`'s row; a malformed id or a missing row is the page's error, not a crash."""
    row = _checked(read)
    if row is None:
        raise ActionError(missing)
    return row


def _checked(run: Callable[[], T]) -> T:
    try:
        return run()
    except (NotFoundError, ValueError) as exc:
        raise ActionError(str(exc)) from exc


def snapshot_route(
    store: Store, authorized: Callable[[web.Request], bool]
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """`GET /api/knowledge`: the snapshot, read-only, for a page not yet connected."""

    async def knowledge(request: web.Request) -> web.Response:
        if not authorized(request):
            raise web.HTTPUnauthorized(reason="missing or wrong token (send it as for the offer)")
        try:
            event = snapshot(store)
        except StoreError as exc:
            reason = f"could not read what Annie knows: {exc}"
            raise web.HTTPServiceUnavailable(reason=reason) from exc
        return web.json_response(event.to_json(), headers={"Cache-Control": "no-store"})

    return knowledge
