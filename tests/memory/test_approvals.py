"""Approvals in one place: the policy table, the ledger, one written form, and a yes or no
that resolves only the approval of the conversation that asked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.commands.ask import Asker
from bot.tools.approval import executor, guarded
from bot.tools.base import Tool, ToolContext
from bot.tools.memory_tools import memory_tools
from bot.tools.registry import ToolRegistry, default_registry
from bot.tools.web import web_tools
from compaction.briefing import build_briefing
from compaction.checkpoint import Checkpoint
from compaction.guard import required_items
from config import Settings, load_settings
from context.snapshot import work_index_snapshot
from context.state import NOTHING_PENDING, NOTHING_TO_APPROVE, StateResolver
from memory.approvals import (
    POLICY,
    REST_ON_PAGE,
    SPOKEN_RESULT_WORDS,
    confirmation,
    needs_approval,
    policy_sentence,
    render,
)
from memory.store import Store
from testkit.local_http import serve_page

NAMES = [
    "save_note",
    "search_memory",
    "create_task",
    "complete_task",
    "list_tasks",
    "set_reminder",
    "delete_note",
]
NOT_HERE = "Nothing is waiting for your yes in this conversation."


def tools() -> dict[str, Tool]:
    return {t.name: t for t in [*memory_tools(), *web_tools()]}


def resolver(store: Store, settings: Settings) -> StateResolver:
    """A state path that can carry out approved actions with the shipped tools."""
    run = executor(ToolRegistry([*memory_tools(), *web_tools()]), settings, store)
    return StateResolver(store, settings, executor=run)


def test_tools_have_schemas_and_group() -> None:
    found = memory_tools()
    assert [t.name for t in found] == NAMES
    assert all(t.group == "memory" for t in found)
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
    assert done.ok and store.tasks.pending() == []
    bad = await by_name["create_task"].run({"title": "x", "pending": "maybe"}, ctx)
    assert not bad.ok and "pending" in bad.content
    missing = await by_name["complete_task"].run({"task_id": "task-42"}, ctx)
    assert not missing.ok and "task-42" in missing.content
    reminder = await by_name["set_reminder"].run(
        {"text": "stretch", "due": "2026-09-01T17:00"}, ctx
    )
    assert reminder.ok and store.reminders.get(reminder.data["id"]) is not None


# --- the policy table ----------------------------------------------------------------------


def test_the_policy_table_decides_every_tool_and_the_prompt_says_what_it_says() -> None:
    # A new tool without a decision fails here, so nothing slips past the table.
    assert set(POLICY) == set(default_registry().names)
    gated = sorted(n for n in POLICY if needs_approval(n))
    assert gated == ["delete_note", "fetch_webpage", "web_search"]
    assert not needs_approval("complete_task") and not needs_approval("no_such_tool")
    sentence = policy_sentence()
    assert "delete a saved note, search the web or fetch a web page" in sentence
    prompt = (Path(__file__).parents[2] / "config" / "system_prompt.md").read_text()
    assert f"- {sentence}\n" in prompt


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("web_search", {"query": "my gate code 4411", "limit": 3}),
        ("fetch_webpage", {"url": "https://example.org/?q=secret"}),
    ],
)
async def test_a_gated_web_tool_only_asks(
    store: Store, settings: Settings, name: str, arguments: dict[str, object]
) -> None:
    ctx = ToolContext(settings=settings, store=store, session_id="sess-1")
    asked = await guarded(tools()[name]).run(arguments, ctx)
    assert asked.ok and asked.content.startswith(f"Approval needed: {name} ")
    row = store.approvals.get(asked.data["approval_id"])
    assert row is not None and row.tool == name and row.requester == "sess-1"
    assert {k: row.params[k] for k in arguments} == arguments
    # An ungated tool is returned as it is.
    plain = tools()["list_tasks"]
    assert guarded(plain) is plain


# --- asking, then yes or no -----------------------------------------------------------------


async def test_delete_asks_then_yes_runs_exactly_the_stored_parameters_once(
    store: Store, settings: Settings
) -> None:
    keep = store.notes.add("keep me: the wifi password is on the fridge")
    doomed = store.notes.add("delete me: old parking spot")
    ctx = ToolContext(settings=settings, store=store, session_id="sess-1")
    asked = await guarded(tools()["delete_note"]).run({"note_id": doomed}, ctx)
    assert asked.ok
    assert asked.content.startswith(f'Approval needed: delete_note {{"note_id": "{doomed}"}}')
    assert "delete me: old parking spot" in asked.content  # the user hears what goes
    assert store.notes.get(doomed) is not None  # nothing is deleted by the call itself
    row = store.approvals.get(asked.data["approval_id"])
    assert row is not None and row.params == {"note_id": doomed} and row.requester == "sess-1"

    state = resolver(store, settings)
    result = state.resolve("yes please do it", session_id="sess-1")
    assert result is not None and result.intent == "approval" and result.sources == [row.id]
    assert result.text.startswith(f"Done: deleted {doomed}")
    assert result.spoken == ""  # short: the voice says the text itself
    assert store.notes.get(doomed) is None and store.notes.get(keep) is not None
    final = store.approvals.get(row.id)
    assert final is not None and final.status == "executed"
    # With nothing left to confirm, "yes" is ordinary conversation for the model.
    assert state.resolve("yes", session_id="sess-1") is None


async def test_asking_to_delete_a_missing_note_stores_nothing(
    store: Store, settings: Settings
) -> None:
    ctx = ToolContext(settings=settings, store=store, session_id="sess-1")
    asked = await guarded(tools()["delete_note"]).run({"note_id": "note-99"}, ctx)
    assert not asked.ok and "no note note-99" in asked.content
    assert store.approvals.pending() == []


def test_yes_from_another_conversation_does_nothing_and_says_so(
    store: Store, settings: Settings
) -> None:
    note = store.notes.add("someone else's request")
    now = datetime.now().astimezone()
    approval_id = store.approvals.request("delete_note", {"note_id": note}, "sess-2", 300, now=now)
    state = resolver(store, settings)
    for session_id in ("sess-1", None):  # another conversation, or one that gives no id
        mine = state.resolve("yes", now, session_id=session_id)
        assert mine is not None and mine.text.startswith(NOT_HERE) and mine.sources == []
    assert state.resolve("no", now, session_id="sess-1") is not None
    assert store.notes.get(note) is not None
    row = store.approvals.get(approval_id)
    assert row is not None and row.status == "pending"
    theirs = state.resolve("yes", now, session_id="sess-2")
    assert theirs is not None and theirs.sources == [approval_id]
    assert store.notes.get(note) is None


def test_a_terminal_ask_yes_is_its_own_conversation(store: Store, settings: Settings) -> None:
    note = store.notes.add("the page asked to delete this")
    store.approvals.request("delete_note", {"note_id": note}, "sess-page", 300)
    asker = Asker(settings)
    try:
        answer = asker.ask("yes")
    finally:
        asker.close()
    assert answer.path == "state" and answer.answer.startswith(NOT_HERE)
    assert store.notes.get(note) is not None


def test_spoken_no_declines(store: Store, settings: Settings) -> None:
    note = store.notes.add("grocery list")
    now = datetime.now().astimezone()
    approval_id = store.approvals.request("delete_note", {"note_id": note}, "sess-1", 300, now=now)
    result = resolver(store, settings).resolve("No, cancel", now, session_id="sess-1")
    assert result is not None and result.text.startswith("Okay, I won't delete note")
    assert store.notes.get(note) is not None
    row = store.approvals.get(approval_id)
    assert row is not None and row.status == "declined"


def test_spoken_yes_after_expiry_refuses(store: Store, settings: Settings) -> None:
    note = store.notes.add("expiring")
    now = datetime.now().astimezone()
    ttl = settings.tools.approval_ttl_s
    approval_id = store.approvals.request("delete_note", {"note_id": note}, "sess-1", ttl, now=now)
    later = now + timedelta(seconds=ttl + 1)
    result = resolver(store, settings).resolve("yes", later, session_id="sess-1")
    assert result is not None and "expired, so I did nothing" in result.text
    assert store.notes.get(note) is not None
    row = store.approvals.get(approval_id)
    assert row is not None and row.status == "expired"


def test_without_a_way_to_act_yes_keeps_the_approval_waiting(
    store: Store, settings: Settings
) -> None:
    note = store.notes.add("status-only front end")
    approval_id = store.approvals.request("delete_note", {"note_id": note}, "sess-1", 300)
    result = StateResolver(store, settings).resolve("yes", session_id="sess-1")
    assert result is not None and "did nothing" in result.text
    row = store.approvals.get(approval_id)
    assert row is not None and row.status == "pending" and store.notes.get(note) is not None


@pytest.fixture
def search_service() -> Iterator[tuple[str, list[str]]]:
    """A search endpoint on this machine that records every query it is sent."""
    body = json.dumps(
        {"results": [{"title": "Gate codes", "url": "https://x.test/", "content": "c"}]}
    ).encode()
    with serve_page("/search", body, "application/json") as served:
        yield served


async def test_a_web_search_leaves_the_machine_only_after_yes(
    store: Store, annie_home: Path, search_service: tuple[str, list[str]]
) -> None:
    url, queries = search_service
    settings = load_settings(tools={"web_search_url": url})
    ctx = ToolContext(settings=settings, store=store, session_id="sess-1")
    asked = await guarded(tools()["web_search"]).run({"query": "gate code"}, ctx)
    assert asked.ok and asked.content.startswith("Approval needed: web_search")
    assert queries == []  # nothing was sent
    # Answered from inside this running event loop, as the session's turn does.
    result = resolver(store, settings).resolve("yes", session_id="sess-1")
    assert result is not None and result.text.startswith("Done: 1. Gate codes")
    assert len(queries) == 1 and "q=gate+code" in queries[0]


async def test_an_approved_long_page_is_shown_whole_and_only_its_start_is_said(
    store: Store, annie_home: Path
) -> None:
    """A fetched page is the answer to the approved fetch: the page gets all of it, and the
    voice its first sentence and where the rest is (not minutes of reading aloud)."""
    para = " ".join(
        f"Sentence {i} says a little about mulching roses in the spring." for i in range(60)
    )
    body = f"<html><head><title>Rose care</title></head><body><p>{para}</p></body></html>"
    settings = load_settings(tools={"fetch_allow_private": True, "timeout_s": 5.0})
    with serve_page("/roses", body.encode(), "text/html; charset=utf-8") as (url, hits):
        ctx = ToolContext(settings=settings, store=store, session_id="sess-1")
        asked = await guarded(tools()["fetch_webpage"]).run({"url": url}, ctx)
        assert asked.ok and hits == []
        result = resolver(store, settings).resolve("yes", session_id="sess-1")
    assert result is not None and hits == ["/roses"]
    assert "Sentence 59" in result.text  # shown whole
    assert result.spoken.endswith(REST_ON_PAGE) and "Sentence 1 " not in result.spoken
    assert len(result.spoken.split()) <= SPOKEN_RESULT_WORDS + len(REST_ON_PAGE.split())
    assert "http" not in result.spoken or url in result.text


# --- one written form -------------------------------------------------------------------------


def test_snapshot_briefing_and_compaction_guard_write_an_approval_the_same_way(
    store: Store,
) -> None:
    earlier = store.sessions.start({"front_end": "test"})
    store.sessions.end(earlier)
    store.approvals.request("delete_note", {"note_id": "note-7", "why": "ü"}, earlier, 300)
    (row,) = store.approvals.pending()
    line = render(row)
    assert line.startswith(f'Awaiting approval: {row.id} delete_note {{"note_id": "note-7"')
    assert line in work_index_snapshot(store).text.splitlines()
    briefing = build_briefing(store, budget=2000, count=len)
    assert line in briefing.text
    needles = [needle for needle, _ in required_items(Checkpoint(), store)]
    assert line in needles


# --- the state path answers approval questions -----------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Is there anything waiting for my approval?",
        "What do I need to approve?",
        "Is there something I have to confirm?",
    ],
)
def test_approval_questions_name_the_exact_action(
    store: Store, settings: Settings, question: str
) -> None:
    state = StateResolver(store, settings)
    empty = state.resolve(question, session_id="sess-1")
    assert empty is not None and empty.text == NOTHING_TO_APPROVE
    note = store.notes.add("old gate code 4411")
    approval_id = store.approvals.request("delete_note", {"note_id": note}, "sess-1", 300)
    result = state.resolve(question, session_id="sess-1")
    assert result is not None and result.intent == "approvals"
    assert result.text == (
        f"One thing waits for your approval: delete note (note_id={note}). Say yes or no."
    )
    assert result.sources == [approval_id]
    elsewhere = state.resolve(question, session_id="sess-2")
    assert elsewhere is not None and "asked in another conversation" in elsewhere.text
    assert "Say yes or no" not in elsewhere.text


def test_pending_on_me_includes_approvals(store: Store, settings: Settings) -> None:
    state = StateResolver(store, settings)
    question = "Anything pending on me?"
    assert (r := state.resolve(question, session_id="sess-1")) and r.text == NOTHING_PENDING
    approval_id = store.approvals.request("delete_note", {"note_id": "note-3"}, "sess-1", 300)
    only = state.resolve(question, session_id="sess-1")
    assert only is not None and only.text != NOTHING_PENDING
    assert only.text.startswith("One thing waits for your approval: delete note (note_id=note-3)")
    assert "Nothing is waiting on you" not in only.text
    task = store.tasks.add("sign the lease", pending="user")
    both = state.resolve(question, session_id="sess-1")
    assert both is not None and "sign the lease" in both.text and "note_id=note-3" in both.text
    assert both.sources[:2] == [approval_id, task]


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
        ("deny", "no"),
        ("No, don't delete it", "no"),
        ("yes, delete the note", "yes"),
        ("yes, and also add milk to my list", None),
        ("no idea what the weather is", None),
        ("what time is it", None),
        ("Is there anything waiting for my approval?", None),
    ],
)
def test_confirmation_words(text: str, decision: str | None) -> None:
    assert confirmation(text) == decision
