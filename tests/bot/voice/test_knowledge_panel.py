"""The knowledge panel over a real WebRTC data channel (an aiortc peer against the server): the
snapshot it is sent on connect and after a turn (on every open page), each panel action,
refusals of malformed or unknown ones that change nothing, and the read-only snapshot a page
fetches before it connects."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import aiohttp

from bot.server.app import Engines
from config import Settings, load_settings
from memory.rows import from_iso, utc_now
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from models.toolcalls import write_call
from testkit.peer import VoiceClient
from tests.bot.voice.conftest import serve

WAIT_S = 30


def snapshots(client: VoiceClient) -> list[dict[str, Any]]:
    return client.of_type("knowledge")


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [item["id"] for item in items]


def silent_model(tokenizer: Tokenizer, replies: list[str]) -> ScriptedLLM:
    """A model that plays `replies` in order (the list empties as it is played), then says
    "Okay." (the summary written when a session closes, for one)."""
    return ScriptedLLM(tokenizer, lambda prompt: replies.pop(0) if replies else "Okay.")


def errors_after(n: int) -> Callable[[VoiceClient], list[dict[str, Any]]]:
    """The error events after the first `n` (the page's answer to one message at a time)."""
    return lambda client: client.of_type("error")[n:]


async def next_snapshot(client: VoiceClient, after: int, what: str) -> dict[str, Any]:
    """The first snapshot sent after the `after`-th one."""
    shown = await client.wait_for(lambda c: snapshots(c)[after:], WAIT_S, what)
    return dict(shown[0])


async def test_the_panel_lists_what_annie_knows_and_follows_a_turn(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    older = store.tasks.add("Water the plants")
    mine = store.tasks.add("Sign the lease", pending="user")
    finished = store.tasks.add("Book the flight", pending="user")
    store.tasks.complete(finished)
    later = store.reminders.add("Call the dentist", utc_now() + timedelta(hours=2))
    sooner = store.reminders.add("Take the bread out", utc_now() + timedelta(minutes=5))
    # No note: a turn with notes stored first loads the embedding model for recall (seconds).
    note = "note-7"
    elsewhere = store.approvals.request(
        "delete_note", {"note_id": note}, "sess-999", ttl_s=600, target="delete the note 'x'"
    )
    replies: list[str] = []
    llm = silent_model(tokenizer, replies)
    call = {"title": "Renew the passport", "pending": "user"}
    replies += [write_call("create_task", call, llm.tool_dialect), "Added."]
    async with serve(voice_settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        try:
            await client.connect()
            first = await next_snapshot(client, 0, "the snapshot on connect")
            # Open tasks only, those waiting on the user first; the count is exact.
            assert ids(first["tasks"]) == [mine, older]
            assert first["tasks"][0]["pending"] == "user" and first["tasks_total"] == 2
            assert ids(first["reminders"]) == [sooner, later]
            due = from_iso(first["reminders"][0]["due"])
            assert timedelta(minutes=4) < due - utc_now() <= timedelta(minutes=5)
            assert first["notes"] == []
            # Another conversation's approval is listed but cannot be answered from here.
            assert [(a["id"], a["here"]) for a in first["approvals"]] == [(elsewhere, False)]
            assert first["approvals"][0]["text"] == "delete the note 'x'"

            # A turn that adds a task: the page gets the new list without asking.
            count = len(snapshots(client))
            client.send_text("The passport needs renewing, and that one is on me.")
            fresh = await client.wait_for(
                lambda c: [s for s in snapshots(c)[count:] if len(s["tasks"]) == 3],
                WAIT_S,
                "a snapshot with the new task",
            )
            titles = [t["title"] for t in fresh[0]["tasks"]]
            assert titles == ["Sign the lease", "Renew the passport", "Water the plants"]
            assert fresh[0]["tasks_total"] == 3
            await client.wait_for(lambda c: c.of_type("assistant_done"), WAIT_S, "the turn's end")
            await client.wait_for(
                lambda c: c.of_type("voice_state")[-1]["state"] == "idle", WAIT_S, "idle"
            )
            # A round trip after the turn: any snapshot the turn's last events caused was
            # sent before this refusal (the channel is ordered). The turn's later events
            # changed nothing more, so no identical snapshot followed the first.
            client.send({"type": "panel", "action": "sync"})
            await client.wait_for(lambda c: c.of_type("error"), WAIT_S, "the refusal")
            assert snapshots(client)[count:] == fresh[:1] and replies == []
        finally:
            await client.close()


async def test_panel_actions_change_the_records_and_deleting_only_asks(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    task = store.tasks.add("Sign the lease", pending="user")
    snooze = store.reminders.add("Take the bread out", utc_now() + timedelta(minutes=1))
    finish = store.reminders.add("Call the dentist", utc_now() + timedelta(minutes=5))
    note = store.notes.add("The old gate code is 4411", kind="fact")
    long = store.notes.add("x" * 500)
    async with serve(voice_settings, engines, silent_model(tokenizer, []), store) as server:
        client = VoiceClient(server.url)
        other = VoiceClient(server.url)  # a second page open at the same time
        try:
            await client.connect()
            await other.connect()
            first = await next_snapshot(client, 0, "the snapshot on connect")
            assert ids(first["reminders"]) == [snooze, finish]
            # Newest note first; a long one is cut for the list.
            assert ids(first["notes"]) == [long, note]
            assert len(first["notes"][0]["text"]) == 280 and first["notes"][0]["text"][-1] == "…"
            assert first["notes"][1]["text"] == "The old gate code is 4411"
            assert first["notes"][1]["kind"] == "fact"

            count = len(snapshots(client))
            client.send({"type": "panel", "action": "task_done", "id": task})
            shown = await next_snapshot(client, count, "the list without the task")
            assert shown["tasks"] == [] and shown["tasks_total"] == 0
            row = store.tasks.get(task)
            assert row is not None and row.status == "done" and row.pending == "none"
            # The other page follows too: the records are the same.
            await other.wait_for(
                lambda c: [s for s in snapshots(c) if s["tasks"] == []],
                WAIT_S,
                "the other page's update",
            )
            assert (
                client.of_type("panel_result")[-1]["text"] == f"Marked {task} done: Sign the lease."
            )

            count = len(snapshots(client))
            before = utc_now()
            client.send({"type": "panel", "action": "reminder_snooze", "id": snooze, "minutes": 10})
            shown = await next_snapshot(client, count, "the snoozed reminder")
            snoozed = store.reminders.get(snooze)
            assert snoozed is not None and snoozed.status == "scheduled"
            assert timedelta(minutes=9) < from_iso(snoozed.due) - before <= timedelta(minutes=11)
            # Snoozed past the other one, so the list is re-ordered by time.
            assert ids(shown["reminders"]) == [finish, snooze]

            count = len(snapshots(client))
            client.send({"type": "panel", "action": "reminder_done", "id": finish})
            shown = await next_snapshot(client, count, "the list without the finished reminder")
            assert ids(shown["reminders"]) == [snooze]
            done = store.reminders.get(finish)
            assert done is not None and done.status == "done"

            # Deleting asks, exactly as the spoken request does: a pending approval for this
            # conversation, shown with its buttons; the note stays until the yes.
            client.send({"type": "panel", "action": "note_delete", "id": note})
            card = await client.wait_for(
                lambda c: [a for a in c.of_type("approval") if a["id"]], WAIT_S, "the approval"
            )
            assert card[0]["tool"] == "delete_note" and card[0]["params"] == {"note_id": note}
            approval = store.approvals.get(card[0]["id"])
            assert approval is not None and approval.status == "pending"
            assert approval.requester == client.session_id
            assert store.notes.get(note) is not None
            listed = await client.wait_for(
                lambda c: [s for s in snapshots(c) if s["approvals"]], WAIT_S, "it in the panel"
            )
            assert [(a["id"], a["here"]) for a in listed[0]["approvals"]] == [(approval.id, True)]
            assert client.of_type("panel_result")[-1]["approval_id"] == approval.id
            # The other page lists it too, but its yes would not answer it.
            seen = await other.wait_for(
                lambda c: [s for s in snapshots(c) if s["approvals"]], WAIT_S, "it elsewhere"
            )
            assert [(a["id"], a["here"]) for a in seen[0]["approvals"]] == [(approval.id, False)]
            assert other.of_type("panel_result") == []

            client.send({"type": "approval", "id": approval.id, "decision": "yes"})
            await client.wait_for(
                lambda c: [
                    s for s in snapshots(c) if ids(s["notes"]) == [long] and not s["approvals"]
                ],
                WAIT_S,
                "the note and the approval gone from the panel",
            )
            assert store.notes.get(note) is None
            resolved = store.approvals.get(approval.id)
            assert resolved is not None and resolved.status == "executed"
            assert client.of_type("error") == [] and other.of_type("error") == []
        finally:
            await client.close()
            await other.close()


async def test_malformed_or_unknown_panel_actions_are_refused_and_change_nothing(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    task = store.tasks.add("Sign the lease", pending="user")
    finished = store.tasks.add("Book the flight")
    store.tasks.complete(finished)
    reminder = store.reminders.add("Take the bread out", utc_now() + timedelta(minutes=5))
    said = store.reminders.add("Call the dentist", utc_now() + timedelta(minutes=9))
    store.reminders.done(said)
    note = store.notes.add("The gate code is 4411")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"type": "panel", "action": "explode", "id": task}, "unknown panel action 'explode'"),
        ({"type": "panel", "id": task}, "unknown panel action None"),
        ({"type": "panel", "action": "task_done"}, "needs the id of an item"),
        ({"type": "panel", "action": "task_done", "id": 7}, "needs the id of an item"),
        ({"type": "panel", "action": "task_done", "id": task, "force": True}, "no field 'force'"),
        ({"type": "panel", "action": "task_done", "id": "task-999"}, "no task task-999"),
        ({"type": "panel", "action": "task_done", "id": note}, f"'{note}' is not a task id"),
        ({"type": "panel", "action": "task_done", "id": finished}, f"{finished} is already done"),
        ({"type": "panel", "action": "reminder_done", "id": "rem-999"}, "no reminder rem-999"),
        ({"type": "panel", "action": "reminder_snooze", "id": said}, f"{said} is done already"),
        (
            {"type": "panel", "action": "reminder_done", "id": reminder, "minutes": 5},
            "reminder_done takes no minutes",
        ),
        (
            {"type": "panel", "action": "reminder_snooze", "id": reminder, "minutes": 0},
            "minutes must be from 1 to 1440, not 0",
        ),
        (
            {"type": "panel", "action": "reminder_snooze", "id": reminder, "minutes": "ten"},
            "minutes must be a number",
        ),
        (
            {"type": "panel", "action": "reminder_snooze", "id": reminder, "minutes": True},
            "minutes must be a number",
        ),
        ({"type": "panel", "action": "note_delete", "id": "note-999"}, "no note note-999"),
        ({"type": "panel", "action": "note_delete", "id": task}, f"'{task}' is not a note id"),
    ]
    async with serve(voice_settings, engines, silent_model(tokenizer, []), store) as server:
        client = VoiceClient(server.url)
        try:
            await client.connect()
            first = await next_snapshot(client, 0, "the snapshot on connect")
            for n, (message, reason) in enumerate(cases):
                client.send(message)
                errors = await client.wait_for(errors_after(n), WAIT_S, f"error {n + 1}")
                assert reason in errors[0]["message"], (message, errors[0])
                assert errors[0]["where"] == "panel"
            assert client.of_type("panel_result") == []
            assert len(snapshots(client)) == 1 and snapshots(client)[0] == first
        finally:
            await client.close()
    row = store.tasks.get(task)
    assert row is not None and row.status == "open"
    kept = store.reminders.get(reminder)
    assert (
        kept is not None and kept.status == "scheduled" and kept.due == first["reminders"][0]["due"]
    )
    assert store.notes.get(note) is not None
    assert store.approvals.pending() == []


async def test_the_page_reads_the_snapshot_before_connecting_with_its_token(
    annie_home: object, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    task = store.tasks.add("Sign the lease", pending="user")
    settings = load_settings(context={"window": 4096}, server={"token": "s3cret"})
    async with (
        serve(settings, engines, silent_model(tokenizer, []), store) as server,
        aiohttp.ClientSession() as http,
    ):
        url = f"{server.url}/api/knowledge"
        async with http.get(url) as refused:
            assert refused.status == 401 and "token" in (await refused.json())["reason"]
        async with http.get(url, headers={"X-Annie-Token": "s3cret"}) as read:
            assert read.status == 200
            body = await read.json()
        assert body["type"] == "knowledge" and ids(body["tasks"]) == [task]
        # Reading it opens no conversation.
        assert server.runtime.sessions == [] and store.approvals.pending() == []
