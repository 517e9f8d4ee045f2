"""Reminder tools for the model, in the "reminders" group: timers, snooze, done, cancel.

The spoken forms of the same actions ("snooze it ten minutes", "done") are matched without
the model first (`bot.reminders.phrases`); these tools serve everything else the model
understands. A reminder id left empty means the one Annie last said in this conversation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from bot.reminders.announcement import clock_time
from bot.reminders.phrases import spoken_duration
from bot.tools.base import Tool, ToolEnv, ToolOutput
from memory.db import NotFoundError
from memory.rows import ReminderRow

if TYPE_CHECKING:
    from memory.store import Store

GROUP = "reminders"
LAST_SAID = "Empty: the reminder you last said."


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SetTimerArgs(_Args):
    minutes: float = Field(0, ge=0, description="Minutes (with seconds, the timer's length).")
    seconds: float = Field(0, ge=0)
    label: str = Field("", description="What the timer is for, if the user said.")


class SnoozeArgs(_Args):
    reminder_id: str = Field("", description=LAST_SAID)
    minutes: float = Field(10, gt=0)


class ReminderIdArgs(_Args):
    reminder_id: str = Field("", description=LAST_SAID)


class CancelArgs(_Args):
    reminder_id: str = Field("", description=LAST_SAID)
    about: str = Field("", description="Words from the reminder, when there is no id.")


def _store(ctx: ToolEnv) -> Store:
    if ctx.store is None:
        raise RuntimeError("no memory store is open")
    store: Store = ctx.store
    return store


def _target(store: Store, reminder_id: str, session_id: str) -> ReminderRow:
    if reminder_id.strip():
        row = store.reminders.get(reminder_id)
        if row is None:
            raise NotFoundError(f"no reminder {reminder_id}")
        return row
    last = store.reminders.last_announced(session_id)
    if last is None:
        raise NotFoundError("no reminder was said in this conversation; give its id")
    return last


async def _set_timer(args: SetTimerArgs, ctx: ToolEnv) -> ToolOutput:
    seconds = args.minutes * 60 + args.seconds
    reminder_id = _store(ctx).reminders.add_timer(seconds, args.label)
    return ToolOutput(
        f"Timer {reminder_id} set for {spoken_duration(seconds)}.", data={"id": reminder_id}
    )


async def _snooze(args: SnoozeArgs, ctx: ToolEnv) -> ToolOutput:
    store = _store(ctx)
    row = store.reminders.snooze(_target(store, args.reminder_id, ctx.session_id).id, args.minutes)
    return ToolOutput(
        f"Snoozed {row.id} ({row.text}) until {clock_time(row.due)}.", data={"id": row.id}
    )


async def _complete(args: ReminderIdArgs, ctx: ToolEnv) -> ToolOutput:
    store = _store(ctx)
    row = store.reminders.done(_target(store, args.reminder_id, ctx.session_id).id)
    return ToolOutput(f"Done: {row.id} {row.text}.", data={"id": row.id})


async def _cancel(args: CancelArgs, ctx: ToolEnv) -> ToolOutput:
    store = _store(ctx)
    if not args.reminder_id.strip() and args.about.strip():
        rows = store.reminders.matching(args.about)
        if len(rows) != 1:
            found = "; ".join(f"{r.id} {r.text}" for r in rows) or "none"
            return ToolOutput(
                f"{len(rows)} open reminders match '{args.about}' ({found}); give the id.",
                ok=False,
            )
        target = rows[0]
    else:
        target = _target(store, args.reminder_id, ctx.session_id)
    row = store.reminders.cancel(target.id)
    return ToolOutput(f"Cancelled {row.id} ({row.text}).", data={"id": row.id})


def reminder_tools() -> list[Tool]:
    """The reminders group (set_reminder itself is a memory tool, loaded from the start)."""
    return [
        Tool(
            "set_timer",
            "Start a timer; it is said aloud when it ends.",
            SetTimerArgs,
            _set_timer,
            GROUP,
            protects="reminder",
        ),
        Tool(
            "snooze_reminder",
            "Say a reminder again later.",
            SnoozeArgs,
            _snooze,
            GROUP,
        ),
        Tool("complete_reminder", "Mark a reminder done.", ReminderIdArgs, _complete, GROUP),
        Tool(
            "cancel_reminder",
            "Cancel a reminder by id or by words from it.",
            CancelArgs,
            _cancel,
            GROUP,
        ),
    ]
