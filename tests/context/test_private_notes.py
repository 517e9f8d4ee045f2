"""Provenance in the envelope and the private-note rule, through the real session loop.

A recalled note's freshness is its record's time, its sensitivity and expiry come from the
note; the state item carries the earliest expiry of the approvals it lists; the scope names
the conversation's pending approval and active task. A private note reaches the prompt only
while no tool that can send data off the machine is loaded or allowed, and is withheld from
view as soon as one is. Real SQLite, the real embedding model, and the scripted model on the
real tokenizer (its prompts are read back as the model received them).
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from bot.tools.memory_tools import memory_tools
from bot.turn.session import Session
from context.envelope import ContextItem
from memory.rows import from_iso, utc_now
from memory.store import Store
from models import Embedder, Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime

SECRET = "The user's bank PIN hint is the name of their first dog, Biscuit."
PLAIN = "The user's bank is Caixa Geral, the branch on Rua Augusta."
QUESTION = "What is my bank PIN hint?"


def _notes(store: Store, embedder: Embedder) -> tuple[str, str]:
    secret = store.notes.add(SECRET, embedding=embedder.embed([SECRET])[0])
    store.provenance.stamp(secret, sensitivity="private")
    plain = store.notes.add(PLAIN, embedding=embedder.embed([PLAIN])[0])
    return secret, plain


def _evidence(session: Session, note_id: str) -> ContextItem | None:
    assert session.last_assembly is not None
    items = session.last_assembly.envelope.retrieved_evidence
    return next((i for i in items if i.source_id.startswith(note_id + "@")), None)


async def test_a_private_note_is_recalled_only_while_nothing_can_send_it_out(
    tmp_path: Path, tokenizer: Tokenizer, embedder: Embedder
) -> None:
    prompts: list[str] = []
    llm = ScriptedLLM(tokenizer, lambda p: prompts.append(p) or "Okay.", n_ctx=8192)
    runtime = make_runtime(llm, tmp_path, window=8192, embedder=embedder)
    secret, _ = _notes(runtime.store, embedder)
    session = runtime.open_session()
    # Never in the fixed head, which lasts the whole session.
    assert "Biscuit" not in session.conv.prefix.notes + session.conv.prefix.briefing
    await collect(session, QUESTION)
    assert "Biscuit" in prompts[-1]  # nothing loaded or allowed can send it anywhere
    item = _evidence(session, secret)
    assert item is not None and item.sensitivity == "private"

    # The user allows the web tools for the session: the note is withheld from then on.
    session.allow("web_search")
    await collect(session, "And which branch is my bank?")
    assert "Biscuit" not in prompts[-1]
    assert f"private note {secret} withheld" in prompts[-1]
    await collect(session, QUESTION)
    assert "Biscuit" not in prompts[-1]
    await runtime.close()


async def test_with_web_tools_allowed_private_notes_never_enter_the_prompt(
    tmp_path: Path, tokenizer: Tokenizer, embedder: Embedder
) -> None:
    prompts: list[str] = []
    llm = ScriptedLLM(tokenizer, lambda p: prompts.append(p) or "Okay.", n_ctx=8192)
    runtime = make_runtime(
        llm, tmp_path, window=8192, embedder=embedder, tools={"web_approval": "never_ask"}
    )
    secret, plain = _notes(runtime.store, embedder)
    session = runtime.open_session()
    await collect(session, QUESTION)
    assert "Biscuit" not in prompts[-1] and "Rua Augusta" in prompts[-1]
    # The plain note is in the session's head already; the private one is nowhere.
    assert plain in session.conv.prefix.source_ids and _evidence(session, secret) is None
    await runtime.close()


async def test_the_envelope_carries_record_times_expiries_and_scope(
    tmp_path: Path, tokenizer: Tokenizer, embedder: Embedder
) -> None:
    llm = ScriptedLLM(tokenizer, lambda p: "Okay.", n_ctx=8192)
    runtime = make_runtime(llm, tmp_path, window=8192, embedder=embedder)
    store = runtime.store
    session = runtime.open_session()
    # Written after the session opened, so recall (not the head) brings it in.
    _, plain = _notes(store, embedder)
    # The note's record changed after it was written: that is its freshness.
    touched = utc_now() - timedelta(days=3)
    ends = utc_now() + timedelta(days=30)
    store.provenance.stamp(plain, expires_at=ends.isoformat(), now=touched)
    task = store.tasks.add("renew the passport", pending="user")
    approval = store.approvals.request("delete_note", {"note_id": plain}, session.id, 600)
    await collect(session, "Which branch is my bank?")
    envelope = session.last_assembly.envelope  # type: ignore[union-attr]
    item = _evidence(session, plain)
    assert item is not None and item.sensitivity == "normal"
    assert item.observed_at == from_iso(store.provenance.get(plain).updated_at).timestamp()
    assert abs(item.observed_at - touched.timestamp()) < 1e-3
    assert item.expires_at is not None and abs(item.expires_at - ends.timestamp()) < 1e-3
    (state,) = envelope.current_state
    expiry = from_iso(store.approvals.get(approval).expires_at).timestamp()  # type: ignore[union-attr]
    assert state.expires_at == expiry and approval in state.content
    assert envelope.scope.thread_id == session.id
    assert envelope.scope.approval_id == approval and envelope.scope.task_id == task

    # Declined: the scope no longer names it, and a task done is no longer active.
    store.approvals.resolve(approval, "declined")
    store.tasks.complete(task)
    await collect(session, "Thanks.")
    envelope = session.last_assembly.envelope  # type: ignore[union-attr]
    assert envelope.scope.approval_id is None and envelope.scope.task_id is None
    await runtime.close()


async def test_an_approval_request_carries_its_expiry_into_the_envelope(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    call = {"name": "delete_note", "arguments": {"note_id": "note-1"}}
    script = [f"<tool_call>\n{json.dumps(call)}\n</tool_call>", "Shall I delete it?"]
    llm = ScriptedLLM(tokenizer, script, n_ctx=8192)
    delete = [t for t in memory_tools() if t.name == "delete_note"]
    runtime = make_runtime(llm, tmp_path, window=8192, extra=delete)
    runtime.store.notes.add("The old gate code is 1234.")
    session = runtime.open_session()
    await collect(session, "Delete the note about the gate code.")
    (approval,) = runtime.store.approvals.pending()
    envelope = session.last_assembly.envelope  # type: ignore[union-attr]
    (result,) = [i for i in envelope.recent_history if i.kind == "tool_result"]
    assert approval.id in result.content
    assert result.expires_at == from_iso(approval.expires_at).timestamp()
    assert envelope.scope.approval_id == approval.id
    await runtime.close()
