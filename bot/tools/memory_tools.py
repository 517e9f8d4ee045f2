"""Memory tools for the model: notes, search, tasks and reminders, in the "memory" group.

Each tool has typed pydantic arguments (their JSON schema is what the model sees) and a
handler over the store. Handlers do what they say; a tool the approval policy table marks
(`memory.approvals.POLICY`: delete_note here) is wrapped by `bot.tools.approval.guarded`
when the model calls it, so it only asks, and its handler runs on the user's yes with the
stored parameters. save_note writes a note with its provenance (`bot.tools.note_writes`);
search_memory leaves private notes out while a tool that can send data off the machine is
loaded or allowed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.tools.base import Tool, ToolEnv, ToolOutput
from bot.tools.note_writes import Origin, origin_of, write_note
from context.provenance import withheld_count
from context.wording import quoted
from memory.db import NotFoundError
from memory.rows import Hit, TaskRow, parse_when

if TYPE_CHECKING:
    from memory.store import Store

GROUP = "memory"


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SaveNoteArgs(_Args):
    text: str = Field(min_length=1, description="The fact or note to remember, in full.")
    kind: str = Field("note", description="A short category, e.g. note, preference, decision.")
    replaces: str | None = Field(
        None, description="Id of a saved note this one corrects, e.g. note-7."
    )
    private: bool = Field(False, description="True if the user wants it kept private.")
    expires: str | None = Field(None, description="ISO date it stops being true, if known.")


class SearchMemoryArgs(_Args):
    query: str = Field(min_length=1, description="Words or an exact id/number to look for.")
    kind: str | None = Field(None, description="Only notes of this category.")
    since: str | None = Field(None, description="ISO date/time: only notes written at or after.")
    until: str | None = Field(None, description="ISO date/time: only notes written before.")
    limit: int = Field(5, ge=1, le=20)


class CreateTaskArgs(_Args):
    title: str = Field(min_length=1)
    pending: Literal["none", "user", "assistant", "external"] = Field(
        "none", description="Who the next step waits on: none, user, assistant or external."
    )
    due: str | None = Field(None, description="ISO date or date-time it is due, if any.")


class TaskIdArgs(_Args):
    task_id: str = Field(description="The task id, e.g. task-12.")


class ListTasksArgs(_Args):
    status: Literal["open", "blocked", "done", "unfinished", "all"] = "unfinished"
    pending: Literal["none", "user", "assistant", "external"] | None = None
    limit: int = Field(20, ge=1, le=100)


class SetReminderArgs(_Args):
    text: str = Field(min_length=1)
    due: str = Field(description="ISO date-time, e.g. 2026-09-01T15:30.")


class DeleteNoteArgs(_Args):
    note_id: str = Field(description="The note id, e.g. note-12.")

    def approval_target(self, store: Store) -> str:
        """What the user is asked to approve, naming the note by its words (NotFoundError if
        it is missing)."""
        note = store.notes.get(self.note_id)
        if note is None:
            raise NotFoundError(f"no note {self.note_id}")
        return f"delete the note {quoted(note.text)}"


def _store(ctx: ToolEnv) -> Store:
    if ctx.store is None:
        raise RuntimeError("no memory store is open")
    store: Store = ctx.store
    return store


def _task_line(t: TaskRow) -> str:
    waits = "" if t.pending == "none" else f", waiting on {t.pending}"
    due = f", due {t.due}" if t.due else ""
    return f"{t.id} [{t.status}{waits}{due}] {t.title}"


def _hit_line(h: Hit) -> str:
    return f"{h.id} ({h.kind}, {h.timestamp[:10]}, source {h.source or '-'}): {h.text}"


def _when(value: str | None) -> datetime | None:
    stamp = parse_when(value)
    return datetime.fromisoformat(stamp).astimezone(UTC) if stamp else None


# --- the actions ----------------------------------------------------------------------


def save_note(
    args: SaveNoteArgs,
    store: Store,
    embedder: Any,
    source: str,
    said: str = "",
    origin: Origin | None = None,
) -> ToolOutput:
    """Save a note with its provenance (`bot.tools.note_writes`); one that corrects an earlier
    note supersedes it (`bot.tools.corrections`), one that contradicts a current note is kept
    beside it and flagged.

    `said` is the user's words this turn: a correction there finds the note it corrects when
    the model did not name it. `origin` (the turn and the user's event) makes the write a
    typed record of its own in the event log."""
    model = store.notes.embedder or embedder
    embedding = model.embed([args.text])[0] if model is not None else None
    return write_note(
        store,
        args.text,
        kind=args.kind,
        origin=origin or Origin(source, said),
        embedding=embedding,
        replaces=args.replaces,
        private=args.private,
        expires=args.expires,
    )


def search_memory(args: SearchMemoryArgs, store: Store, sends_out: bool = False) -> ToolOutput:
    """Notes matching the query; private ones are left out (and counted) when `sends_out`:
    a tool that can send data off the machine is loaded or allowed (`context.provenance`)."""
    kinds = [args.kind] if args.kind else None
    hits = store.notes.search(
        args.query, kinds=kinds, since=_when(args.since), until=_when(args.until), limit=args.limit
    )
    held = store.provenance.private_among(h.id for h in hits) if sends_out else set()
    hits = [h for h in hits if h.id not in held]
    if held:
        withheld = withheld_count(len(held))
        if not hits:
            return ToolOutput(withheld, data={"hits": [], "withheld": sorted(held)})
    if not hits:
        # A scoped inability, not a confident negative (seed 000, retrieval miss).
        return ToolOutput(
            f"No notes matched '{args.query}'. Try exact keywords, another kind, or a wider "
            "time range; this does not prove nothing was ever said.",
            data={"hits": []},
        )
    lines = [_hit_line(h) for h in hits] + ([withheld] if held else [])
    return ToolOutput("\n".join(lines), data={"hits": [h.__dict__ for h in hits]})


def create_task(args: CreateTaskArgs, store: Store, source: str) -> ToolOutput:
    task_id = store.tasks.add(args.title, pending=args.pending, due=args.due, source=source)
    row = store.tasks.get(task_id)
    return ToolOutput(f"Created {_task_line(row) if row else task_id}.", data={"id": task_id})


def complete_task(args: TaskIdArgs, store: Store) -> ToolOutput:
    row = store.tasks.complete(args.task_id)
    return ToolOutput(f"Done: {row.id} {row.title}.", data={"id": row.id})


def list_tasks(args: ListTasksArgs, store: Store) -> ToolOutput:
    status: list[str] | None
    status = {"unfinished": ["open", "blocked"], "all": None}.get(args.status, [args.status])
    rows = store.tasks.find(status=status, pending=args.pending, limit=args.limit)
    table = {
        "columns": ["id", "title", "status", "pending", "due"],
        "rows": [[t.id, t.title, t.status, t.pending, t.due or ""] for t in rows],
    }
    if not rows:
        return ToolOutput(f"No {args.status} tasks.", data=table)
    return ToolOutput("\n".join(_task_line(t) for t in rows), data=table)


def set_reminder(args: SetReminderArgs, store: Store) -> ToolOutput:
    reminder_id = store.reminders.add(args.text, args.due)
    row = store.reminders.get(reminder_id)
    return ToolOutput(
        f"Reminder {reminder_id} set for {row.due if row else args.due}: {args.text}.",
        data={"id": reminder_id},
    )


def delete_note(args: DeleteNoteArgs, store: Store) -> ToolOutput:
    note = store.notes.get(args.note_id)
    if note is None:
        raise NotFoundError(f"no note {args.note_id}")
    store.notes.delete(note.id)
    return ToolOutput(f"deleted {note.id} ({note.text[:60]})", data={"id": note.id})


# --- tool handlers ---------------------------------------------------------------------


def _source(ctx: ToolEnv) -> str:
    return f"session {ctx.session_id}" if ctx.session_id else "assistant"


async def _save_note(args: SaveNoteArgs, ctx: ToolEnv) -> ToolOutput:
    store = _store(ctx)
    origin = origin_of(store, ctx.session_id, ctx.turn_id, _source(ctx))
    return save_note(args, store, ctx.embedder, origin.source, origin.said, origin)


async def _search_memory(args: SearchMemoryArgs, ctx: ToolEnv) -> ToolOutput:
    return search_memory(args, _store(ctx), ctx.sends_out)


async def _create_task(args: CreateTaskArgs, ctx: ToolEnv) -> ToolOutput:
    return create_task(args, _store(ctx), "assistant")


async def _complete_task(args: TaskIdArgs, ctx: ToolEnv) -> ToolOutput:
    return complete_task(args, _store(ctx))


async def _list_tasks(args: ListTasksArgs, ctx: ToolEnv) -> ToolOutput:
    return list_tasks(args, _store(ctx))


async def _set_reminder(args: SetReminderArgs, ctx: ToolEnv) -> ToolOutput:
    return set_reminder(args, _store(ctx))


async def _delete_note(args: DeleteNoteArgs, ctx: ToolEnv) -> ToolOutput:
    return delete_note(args, _store(ctx))


def memory_tools() -> list[Tool]:
    """The memory group, in the order the model sees them."""
    return [
        Tool(
            "save_note",
            "Remember a fact, preference or decision for later sessions.",
            SaveNoteArgs,
            _save_note,
            GROUP,
            needs_embedder=True,
            protects="note",
        ),
        Tool(
            "search_memory",
            "Search saved notes by meaning and by exact words (ids, numbers, names).",
            SearchMemoryArgs,
            _search_memory,
            GROUP,
            needs_embedder=True,
        ),
        Tool(
            "create_task",
            "Add a task; say who it waits on with `pending`.",
            CreateTaskArgs,
            _create_task,
            GROUP,
            protects="task",
        ),
        Tool("complete_task", "Mark a task done by id.", TaskIdArgs, _complete_task, GROUP),
        Tool(
            "list_tasks",
            "List tasks by status and by who they wait on.",
            ListTasksArgs,
            _list_tasks,
            GROUP,
        ),
        Tool(
            "set_reminder",
            "Set a reminder at an ISO date-time.",
            SetReminderArgs,
            _set_reminder,
            GROUP,
            protects="reminder",
        ),
        Tool(
            "delete_note",
            "Delete a saved note by id. Needs the user's confirmation.",
            DeleteNoteArgs,
            _delete_note,
            GROUP,
        ),
    ]
