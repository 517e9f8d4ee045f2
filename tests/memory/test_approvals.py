"""Memory tools and approvals: destructive actions run the stored parameters, once, in time."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from bot.tools.base import ToolContext
from bot.tools.memory_tools import execute_approved, memory_tools
from config import Settings
from context.approvals import confirmation
from context.state import StateResolver
from memory.store import Store

NAMES = [
    "save_note",
    "search_memory",
    "create_task",
    "complete_task",
    "list_tasks",
    "set_reminder",
    "delete_note",
]


def tools() -> dict[str, object]:
    return {t.name: t for t in memory_tools()}


def test_tools_have_schemas_and_group() -> None:
    found = memory_tools()
    assert [t.name for t in found] == NAMES
    assert all(t.group == "memory" for t in found)
    assert [t.name for t in found if t.destructive] == ["delete_note"]
    schema = found[2].schema()
    params = schema["function"]["parameters"]
    assert params["required"] == ["title"]
    assert params["properties"]["pending"]["enum"] == ["none", "user", "assistant", "external"]


async def test_task_tools_round_trip(store: Store, settings: Settings) -> None:
    ctx = ToolContext(settings=settings, store=store, session_id="sess-1")
    by_name = {t.name: t for t in memory_tools()}
    created = await by_name["create_task"].run({"title": "call the bank", "pending": "user"}, ctx)
    assert created.ok and created.data["id"] == "task-1"
    listed = await by_name["list_tasks"].run({}, ctx)
    assert listed.data["rows"] == [["task-1", "call the bank", "open", "user", ""]]
    done = await by_name["complete_task"].run({"task_id": "task-1"}, ctx)
    assert done.ok and store.pending_tasks() == []
    bad = await by_name["create_task"].run({"title": "x", "pending": "maybe"}, ctx)
    assert not bad.ok and "pending" in bad.content
    missing = await by_name["complete_task"].run({"task_id": "task-42"}, ctx)
    assert not missing.ok and "task-42" in missing.content
    reminder = await by_name["set_reminder"].run(
        {"text": "stretch", "due": "2026-09-01T17:00"}, ctx
    )
    assert reminder.ok and store.get_reminder(reminder.data["id"]) is not None


async def test_delete_asks_then_executes_exactly_the_stored_parameters(
    store: Store, settings: Settings
) -> None:
    keep = store.add_note("keep me: the wifi password is on the fridge")
    doomed = store.add_note("delete me: old parking spot")
    ctx = ToolContext(settings=settings, store=store, session_id="sess-1")
    delete = {t.name: t for t in memory_tools()}["delete_note"]
    asked = await delete.run({"note_id": doomed}, ctx)
    assert asked.ok and asked.content.startswith("Approval needed: delete " + doomed)
    assert "Ask the user to confirm" in asked.content
    # Nothing is deleted by the call itself.
    assert store.get_note(doomed) is not None
    approval = store.get_approval(asked.data["approval_id"])
    assert approval is not None and approval.params == {"note_id": doomed}
    assert approval.expires_at > approval.created_at

    # The model "regenerates" different parameters: irrelevant, the stored ones run.
    out = await execute_approved(approval.id, ctx)
    assert out.ok
    assert store.get_note(doomed) is None
    assert store.get_note(keep) is not None
    final = store.get_approval(approval.id)
    assert final is not None and final.status == "executed"
    again = await execute_approved(approval.id, ctx)
    assert not again.ok and "already executed" in again.content


async def test_execute_refuses_after_expiry(store: Store, settings: Settings) -> None:
    note = store.add_note("temporary")
    past = datetime.now().astimezone() - timedelta(minutes=10)
    approval_id = store.request_approval("delete_note", {"note_id": note}, "sess-1", 60, now=past)
    out = await execute_approved(approval_id, ToolContext(settings=settings, store=store))
    assert not out.ok and "expired" in out.content
    assert store.get_note(note) is not None
    row = store.get_approval(approval_id)
    assert row is not None and row.status == "expired"


@pytest.mark.parametrize(
    ("text", "decision"),
    [
        ("yes", "yes"),
        ("Yes please do it", "yes"),
        ("yeah, go ahead", "yes"),
        ("OK, confirm.", "yes"),
        ("sure", "yes"),
        ("no", "no"),
        ("No, cancel.", "no"),
        ("don't do it", "no"),
        ("nope", "no"),
        ("never mind", "no"),
        ("No, don't delete it", "no"),
        ("yes, delete the note", "yes"),
        ("yes, and also add milk to my list", None),
        ("no idea what the weather is", None),
        ("what time is it", None),
    ],
)
def test_confirmation_words(text: str, decision: str | None) -> None:
    assert confirmation(text) == decision


def test_spoken_yes_runs_the_stored_action(store: Store, settings: Settings) -> None:
    note = store.add_note("old gate code 4411")
    other = store.add_note("new gate code 9922")
    now = datetime.now().astimezone()
    approval_id = store.request_approval("delete_note", {"note_id": note}, "sess-1", 300, now=now)
    resolver = StateResolver(store, settings)
    result = resolver.resolve("yes please do it", now + timedelta(seconds=5))
    assert result is not None and result.intent == "approval"
    assert result.sources == [approval_id]
    assert result.text.startswith(f"Done: deleted {note}")
    assert store.get_note(note) is None and store.get_note(other) is not None
    # With nothing left to confirm, "yes" is ordinary conversation for the model.
    assert resolver.resolve("yes", now + timedelta(seconds=6)) is None


def test_spoken_no_declines(store: Store, settings: Settings) -> None:
    note = store.add_note("grocery list")
    now = datetime.now().astimezone()
    approval_id = store.request_approval("delete_note", {"note_id": note}, "sess-1", 300, now=now)
    result = StateResolver(store, settings).resolve("No, cancel", now)
    assert result is not None and result.text.startswith("Okay, I won't delete note")
    assert store.get_note(note) is not None
    row = store.get_approval(approval_id)
    assert row is not None and row.status == "declined"


def test_spoken_yes_after_expiry_refuses(store: Store, settings: Settings) -> None:
    note = store.add_note("expiring")
    now = datetime.now().astimezone()
    approval_id = store.request_approval(
        "delete_note", {"note_id": note}, "sess-1", settings.tools.approval_ttl_s, now=now
    )
    later = now + timedelta(seconds=settings.tools.approval_ttl_s + 1)
    result = StateResolver(store, settings).resolve("yes", later)
    assert result is not None and "expired, so I did nothing" in result.text
    assert store.get_note(note) is not None
    row = store.get_approval(approval_id)
    assert row is not None and row.status == "expired"


def test_yes_only_confirms_this_sessions_approval(store: Store, settings: Settings) -> None:
    note = store.add_note("someone else's request")
    now = datetime.now().astimezone()
    approval_id = store.request_approval("delete_note", {"note_id": note}, "sess-2", 300, now=now)
    mine = StateResolver(store, settings, requester="sess-1")
    assert mine.resolve("yes", now) is None
    assert store.get_note(note) is not None
    theirs = StateResolver(store, settings, requester="sess-2").resolve("yes", now)
    assert theirs is not None and theirs.sources == [approval_id]
    assert store.get_note(note) is None
