"""Approvals in one place: the policy table, the ledger, one written form, and a yes or no
that resolves only the approval of the conversation that asked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.commands.ask import Asker
from bot.tools.approval import approved_runner, guarded
from bot.tools.base import Tool, ToolEnv
from bot.tools.memory_tools import memory_tools
from bot.tools.registry import ToolRegistry, default_registry
from bot.tools.web import web_tools
from bot.turn.answers import TO_MODEL, AnswerChain, Answered, Resume
from compaction.briefing import build_briefing
from compaction.checkpoint import Checkpoint
from compaction.guard import required_items
from config import Settings, load_settings
from context.snapshot import work_index_snapshot
from context.state import NOTHING_PENDING, NOTHING_TO_APPROVE, StateResolver
from memory.approvals import (
    POLICY,
    WEB_TOOLS,
    confirmation,
    describe,
    needs_approval,
    policy_sentence,
    render,
    standing,
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
# What the delete tool stores as an approval's target for the note "old gate code 4411".
TARGET = "delete the note 'old gate code 4411'"


def tools() -> dict[str, Tool]:
    return {t.name: t for t in [*memory_tools(), *web_tools()]}


def test_tools_have_schemas_and_group() -> None:
    found = memory_tools()
    assert [t.name for t in found] == NAMES
    assert all(t.group == "memory" for t in found)
    schema = found[2].schema()
    params = schema["function"]["parameters"]
    assert params["required"] == ["title"]
    assert params["properties"]["pending"]["enum"] == ["none", "user", "assistant", "external"]


async def test_task_tools_round_trip(store: Store, settings: Settings) -> None:
    ctx = ToolEnv(settings=settings, store=store, session_id="sess-1")
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
    ctx = ToolEnv(settings=settings, store=store, session_id="sess-1")
    asked = await guarded(tools()[name]).run(arguments, ctx)
    assert asked.ok and asked.content.startswith("Approval needed to ")
    assert f": {name} {{" in asked.content
    row = store.approvals.get(asked.data["approval_id"])
    assert row is not None and row.tool == name and row.requester == "sess-1"
    assert {k: row.params[k] for k in arguments} == arguments
    # What it touches, in words: the query as it would be sent, or the site by name.
    assert row.target in ("search the web for 'my gate code 4411'", "open a page on example.org")
    assert describe(row) == row.target
    # An ungated tool is returned as it is.
    plain = tools()["list_tasks"]
    assert guarded(plain) is plain


# --- asking, then yes or no -----------------------------------------------------------------


def chain(store: Store, settings: Settings) -> AnswerChain:
    """The answerers before the model, able to run approved calls with the shipped tools."""
    run = approved_runner(ToolRegistry([*memory_tools(), *web_tools()]), settings, store)
    return AnswerChain.standard(store, StateResolver(store, settings), run)


async def test_delete_asks_then_yes_runs_exactly_the_stored_parameters_once(
    store: Store, settings: Settings
) -> None:
    keep = store.notes.add("keep me: the wifi password is on the fridge")
    doomed = store.notes.add("delete me: old parking spot")
    ctx = ToolEnv(settings=settings, store=store, session_id="sess-1")
    asked = await guarded(tools()["delete_note"]).run({"note_id": doomed}, ctx)
    assert asked.ok
    assert asked.content.startswith(
        f"Approval needed to delete the note 'delete me: old parking spot': "
        f'delete_note {{"note_id": "{doomed}"}}'
    )
    assert store.notes.get(doomed) is not None  # nothing is deleted by the call itself
    row = store.approvals.get(asked.data["approval_id"])
    assert row is not None and row.params == {"note_id": doomed} and row.requester == "sess-1"

    answers = chain(store, settings)
    resumed = await answers.decide("yes please do it", "sess-1")
    # The yes resumes the model with the stored call and what it did.
    assert isinstance(resumed, Resume) and resumed.approval.id == row.id
    assert resumed.call.name == "delete_note" and resumed.call.arguments == {"note_id": doomed}
    assert resumed.output.ok and resumed.output.content.startswith(f"deleted {doomed}")
    assert not resumed.standing
    assert store.notes.get(doomed) is None and store.notes.get(keep) is not None
    final = store.approvals.get(row.id)
    assert final is not None and final.status == "executed"
    # With nothing left to confirm, "yes" is ordinary conversation for the model.
    assert await answers.decide("yes", "sess-1") is TO_MODEL


async def test_asking_to_delete_a_missing_note_stores_nothing(
    store: Store, settings: Settings
) -> None:
    ctx = ToolEnv(settings=settings, store=store, session_id="sess-1")
    asked = await guarded(tools()["delete_note"]).run({"note_id": "note-99"}, ctx)
    assert not asked.ok and "no note note-99" in asked.content
    assert store.approvals.pending() == []


async def test_yes_from_another_conversation_does_nothing_and_says_so(
    store: Store, settings: Settings
) -> None:
    note = store.notes.add("someone else's request")
    now = datetime.now().astimezone()
    approval_id = store.approvals.request("delete_note", {"note_id": note}, "sess-2", 300, now=now)
    answers = chain(store, settings)
    for session_id in ("sess-1", ""):  # another conversation, or one that gives no id
        mine = await answers.decide("yes", session_id, now=now)
        assert isinstance(mine, Answered) and mine.path == "approval"
        assert mine.result.text.startswith(NOT_HERE) and mine.result.sources == []
    assert isinstance(await answers.decide("no", "sess-1", now=now), Answered)
    assert store.notes.get(note) is not None
    row = store.approvals.get(approval_id)
    assert row is not None and row.status == "pending"
    theirs = await answers.decide("yes", "sess-2", now=now)
    assert isinstance(theirs, Resume) and theirs.approval.id == approval_id
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


async def test_spoken_no_declines_and_tells_the_model(store: Store, settings: Settings) -> None:
    note = store.notes.add("grocery list")
    now = datetime.now().astimezone()
    approval_id = store.approvals.request("delete_note", {"note_id": note}, "sess-1", 300, now=now)
    result = await chain(store, settings).decide("No, cancel", "sess-1", now=now)
    assert isinstance(result, Resume) and not result.output.ok
    assert result.output.content.startswith("The user declined: delete_note was not run")
    assert store.notes.get(note) is not None
    row = store.approvals.get(approval_id)
    assert row is not None and row.status == "declined"


async def test_spoken_yes_after_expiry_refuses(store: Store, settings: Settings) -> None:
    note = store.notes.add("expiring")
    now = datetime.now().astimezone()
    ttl = settings.tools.approval_ttl_s
    approval_id = store.approvals.request("delete_note", {"note_id": note}, "sess-1", ttl, now=now)
    later = now + timedelta(seconds=ttl + 1)
    result = await chain(store, settings).decide("yes", "sess-1", now=later)
    assert isinstance(result, Answered) and "expired, so I did nothing" in result.result.text
    assert store.notes.get(note) is not None
    row = store.approvals.get(approval_id)
    assert row is not None and row.status == "expired"


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
    ctx = ToolEnv(settings=settings, store=store, session_id="sess-1")
    asked = await guarded(tools()["web_search"]).run({"query": "gate code"}, ctx)
    assert asked.ok and asked.content.startswith("Approval needed to search the web for")
    assert queries == []  # nothing was sent
    result = await chain(store, settings).decide("yes, and don't ask again", "sess-1")
    assert isinstance(result, Resume) and result.standing
    assert result.output.ok and "Gate codes" in result.output.content
    assert len(queries) == 1 and "q=gate+code" in queries[0]
    # Allowed for the session: the tool runs at once, and the search is sent.
    allowed = ToolEnv(
        settings=settings, store=store, session_id="sess-1", allowed=frozenset(WEB_TOOLS)
    )
    again = await guarded(tools()["web_search"]).run({"query": "gate code 2"}, allowed)
    assert again.ok and "Gate codes" in again.content and len(queries) == 2


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
    approval_id = store.approvals.request(
        "delete_note", {"note_id": note}, "sess-1", 300, target=TARGET
    )
    result = state.resolve(question, session_id="sess-1")
    assert result is not None and result.intent == "approvals"
    assert result.text == (
        "One thing waits for your approval: delete the note 'old gate code 4411'. Say yes or no."
    )
    assert result.sources == [approval_id]
    elsewhere = state.resolve(question, session_id="sess-2")
    assert elsewhere is not None and "asked in another conversation" in elsewhere.text
    assert "Say yes or no" not in elsewhere.text


def test_pending_on_me_includes_approvals(store: Store, settings: Settings) -> None:
    state = StateResolver(store, settings)
    question = "Anything pending on me?"
    assert (r := state.resolve(question, session_id="sess-1")) and r.text == NOTHING_PENDING
    approval_id = store.approvals.request(
        "delete_note", {"note_id": "note-3"}, "sess-1", 300, target=TARGET
    )
    only = state.resolve(question, session_id="sess-1")
    assert only is not None and only.text != NOTHING_PENDING
    assert only.text.startswith(f"One thing waits for your approval: {TARGET}.")
    assert "Nothing is waiting on you" not in only.text and "note-3" not in only.text
    task = store.tasks.add("sign the lease", pending="user")
    both = state.resolve(question, session_id="sess-1")
    assert both is not None and "sign the lease" in both.text and TARGET in both.text
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
        ("yes, and don't ask again", "yes"),
        ("Yes. Don't ask me again.", "yes"),
        ("go ahead from now on", "yes"),
        ("don't ask again", "yes"),
        ("yes, and also add milk to my list", None),
        ("no idea what the weather is", None),
        ("what time is it", None),
        ("Is there anything waiting for my approval?", None),
    ],
)
def test_confirmation_words(text: str, decision: str | None) -> None:
    assert confirmation(text) == decision


@pytest.mark.parametrize(
    ("text", "allows"),
    [
        ("yes, and don't ask again", True),
        ("yes always", True),
        ("sure, for the rest of the session", True),
        ("yes", False),
        ("no, don't ask again", False),
        ("yes, and also add milk to my list", False),
    ],
)
def test_a_standing_yes_allows_the_tool_for_the_session(text: str, allows: bool) -> None:
    assert standing(text) is allows


def test_an_approval_without_words_is_said_by_its_kind_never_by_an_id(store: Store) -> None:
    """An approval stored before targets were kept (or by a tool with none) is said by what
    kind of action it is: no id and no raw parameter is read aloud."""
    older = store.approvals.request("delete_note", {"note_id": "note-3"}, "sess-1", 300)
    row = store.approvals.get(older)
    assert row is not None and row.target == ""
    assert describe(row) == "delete a saved note"
    assert "note-3" in render(row)  # the model still sees the exact call
