"""The assembler keeps every prompt inside the window and explains everything it leaves out."""

from __future__ import annotations

import pytest

from config import Settings, load_settings
from context.assembler import (
    Assembler,
    ContextOverflowError,
    Evidence,
    Request,
    StateSnapshot,
)
from context.conversation import Conversation, Item
from context.lanes import LANES
from context.ledger import Ledger
from models.base import Tokenizer, ToolCall
from tests.context.helpers import SCHEMA, search_call

SYSTEM = "You are Annie, a voice assistant. Speak in short sentences."


def setup(
    tokenizer: Tokenizer, window: int = 2048, notes: str = ""
) -> tuple[Settings, Assembler, Conversation]:
    settings = load_settings(context={"window": window, "reserve_output": 256})
    ledger = Ledger(tokenizer, window=window, output_reserve_tokens=256)
    assembler = Assembler(settings, ledger)
    prefix = assembler.build_prefix(SYSTEM, [SCHEMA], ["core"], notes=notes)
    return settings, assembler, Conversation("sess-1", prefix)


def fits(assembler: Assembler, conv: Conversation) -> bool:
    ledger = assembler.ledger
    total, counted = ledger.verify(conv)
    assert total == counted
    return total + ledger.output_reserve_tokens <= ledger.window


def explained(conv: Conversation, envelope_ids: set[str], all_ids: set[str]) -> None:
    """Every id ever admitted is visible, or an omission names it and how to recover it."""
    visible = {i.id for i in conv.items if not i.cleared}
    covered = {sid for o in conv.omitted if o.recover_with for sid in o.source_ids}
    missing = all_ids - visible - covered
    assert not missing, f"left out without an omission: {sorted(missing)[:5]}"
    assert envelope_ids >= covered


def turn(assembler: Assembler, conv: Conversation, n: int, text: str, answer: str) -> Request:
    request = Request(text, f"t{n}", f"ev-u{n}")
    assembler.admit_turn(conv, request)
    assembler.assemble(conv, request)
    conv.append(Item(f"ev-a{n}", "assistant", "assistant", answer, turn=conv.turn))
    return request


def test_a_one_megabyte_tool_result_becomes_a_preview_with_its_id(tokenizer: Tokenizer) -> None:
    settings, assembler, conv = setup(tokenizer)
    request = turn(assembler, conv, 1, "Fetch that page", "")
    conv.items.pop()
    call = ToolCall("fetch_webpage", {"url": "https://example.com"}, "c1")
    conv.append(
        Item(
            "ev-c1", "tool_call", "assistant", "", turn=1, tool_calls=[call], calls_in_content=False
        )
    )
    huge = ("All work and no play makes Jack a dull boy. " * 23_000)[:1_000_000]
    item = assembler.admit_tool_result(
        conv, id="ev-9", call_id="c1", name="fetch_webpage", content=huge
    )
    assert assembler.ledger.count(item.content) <= settings.context.budget("tool_result")
    assert 'get_context(ids=["ev-9"]' in item.content
    result = assembler.assemble(conv, request)
    assert fits(assembler, conv)
    rest = [o for o in result.envelope.omissions if "ev-9" in o.source_ids]
    assert rest and rest[0].recover_with is not None and rest[0].recover_with.name == "get_context"


def test_five_hundred_turns_never_exceed_the_window(tokenizer: Tokenizer) -> None:
    _, assembler, conv = setup(tokenizer)
    all_ids: set[str] = set()
    pinned = Item(
        "appr-1",
        "state",
        "user",
        "Awaiting approval: appr-1 delete_note note-3",
        turn=0,
        lane="state",
    )
    pinned.pinned = True
    conv.append(pinned)
    all_ids.add(pinned.id)
    overflows = 0
    for n in range(1, 501):
        request = Request(f"Question number {n}: what about item {n * 7}?", f"t{n}", f"ev-u{n}")
        assembler.admit_turn(conv, request)
        if n % 3 == 0:
            search_call(conv, assembler, n, f"item {n}", f"result {n} " * 60)
            all_ids.update({f"ev-c{n}", f"ev-r{n}"})
        result = assembler.assemble(conv, request)
        overflows += result.overflow
        assert result.usage.total + result.usage.output_reserve_tokens <= result.usage.window
        assert result.prompt.count(f"Question number {n}:") == 1  # the request is never dropped
        conv.append(
            Item(
                f"ev-a{n}",
                "assistant",
                "assistant",
                f"Answer {n} is about item {n * 7}.",
                turn=conv.turn,
            )
        )
        all_ids.update({f"ev-u{n}", f"ev-a{n}"})
        conv.mark_sent()
    assert overflows > 0  # the window really was under pressure
    assert fits(assembler, conv)
    assert conv.items.count(pinned) == 1 and not pinned.cleared  # pinned state survives
    result = assembler.assemble(conv)
    ids = {sid for o in result.envelope.omissions for sid in o.source_ids}
    explained(conv, ids, all_ids)
    assert all(o.recover_with is not None for o in result.envelope.omissions)


def test_overflow_clears_old_tool_output_before_dropping_history(tokenizer: Tokenizer) -> None:
    _, assembler, conv = setup(tokenizer)
    for n in range(1, 40):
        request = Request(f"Search {n}", f"t{n}", f"ev-u{n}")
        assembler.admit_turn(conv, request)
        search_call(conv, assembler, n, str(n), "news " * 120)
        result = assembler.assemble(conv, request)
        conv.append(Item(f"ev-a{n}", "assistant", "assistant", f"Done {n}.", turn=conv.turn))
        if result.trimmed:
            first = result.trimmed
            kinds = {i.kind for i in conv.items if i.id in first}
            assert kinds == {"tool_result"}  # the first trims are reloadable tool output only
            assert any(i.id == "ev-u1" for i in conv.items)  # history still whole
            return
    pytest.fail("the window never filled")


def test_a_huge_note_is_capped_to_the_briefing_budget(tokenizer: Tokenizer) -> None:
    huge = "\n".join(
        f"- the user mentioned fact number {n} about their garden" for n in range(20_000)
    )
    settings, assembler, conv = setup(tokenizer, notes=huge)
    ledger = assembler.ledger
    cost = ledger.prefix_cost(conv.prefix)
    assert cost.notes + cost.memory_briefing <= settings.context.budget("briefing") + 16
    assert "search_memory finds them" in conv.prefix.notes
    result = assembler.assemble(conv)
    assert result.usage.total + 256 <= 2048


def test_a_huge_request_is_kept_as_a_preview_never_dropped(tokenizer: Tokenizer) -> None:
    _, assembler, conv = setup(tokenizer)
    text = "Please read this: " + "lorem ipsum dolor sit amet " * 8000
    request = Request(text, "t1", "ev-1")
    assembler.admit_turn(conv, request)
    result = assembler.assemble(conv, request)
    assert fits(assembler, conv)
    item = conv.get("ev-1")
    assert item is not None and item.content.startswith("Please read this:")
    assert any(o.lane == "request" and o.recover_with for o in result.envelope.omissions)


def test_state_is_admitted_only_when_it_changes_and_collapses_to_budget(
    tokenizer: Tokenizer,
) -> None:
    settings, assembler, conv = setup(tokenizer)
    state = StateSnapshot(
        "Waiting on the user (1): task-1 call the bank", ["task-1"], observed_at=1_700_000_000
    )
    assembler.admit_turn(conv, Request("hi", "t1", "ev-1"), state)
    assembler.admit_turn(conv, Request("and?", "t2", "ev-2"), state)
    assert [i.id for i in conv.items if i.kind == "state"] == ["state-t1"]
    rows = "\n".join(f"Open: task-{n} water plant number {n}" for n in range(400))
    assembler.admit_turn(
        conv, Request("now?", "t3", "ev-3"), StateSnapshot(rows, observed_at=1_700_000_500)
    )
    latest = conv.last("state")
    assert latest is not None and latest.turn == 3
    assert assembler.ledger.count(latest.meta["body"]) <= settings.context.budget("state")
    result = assembler.assemble(conv)
    assert any(o.lane == "state" and o.recover_with for o in result.envelope.omissions)
    assert [c.source_id for c in result.envelope.current_state] == ["state-t1", "state-t3"]


def test_evidence_is_deduplicated_ranked_and_budgeted(tokenizer: Tokenizer) -> None:
    settings, assembler, conv = setup(tokenizer)
    # The lane's budget is what this checks: one turn's share of it is left wide.
    settings.context.evidence_turn_tokens = 1_000_000
    budget = settings.context.budget("evidence")
    big = "the garden plan " * (budget // 2)
    evidence = [
        Evidence("note-1", "The user's sister is Ana.", score=0.9),
        Evidence("note-2", big, score=0.5),
        Evidence("note-1", "The user's sister is Ana.", score=0.9),
        Evidence("note-3", "Likes long evening walks.", score=0.7),
    ]
    assembler.admit_turn(conv, Request("tell me", "t1", "ev-1"), None, evidence)
    admitted = [i.source_ids[0] for i in conv.items if i.kind == "evidence"]
    assert admitted == ["note-1", "note-3"]
    result = assembler.assemble(conv)
    left = [o for o in result.envelope.omissions if o.lane == "evidence"]
    assert [o.source_ids for o in left] == [["note-2"]]
    assembler.admit_turn(conv, Request("again", "t2", "ev-2"), None, evidence[:1])
    assert [i.source_ids[0] for i in conv.items if i.kind == "evidence"] == ["note-1", "note-3"]


def test_one_turn_adds_evidence_up_to_its_share_scaled_with_the_window(
    tokenizer: Tokenizer,
) -> None:
    settings, assembler, conv = setup(tokenizer, window=4096)
    share = settings.context.turn_evidence()
    assert share == settings.context.evidence_turn_tokens * 4096 // 32768
    evidence = [
        Evidence(f"note-{i}", f"Walk {i} went along the river past the old mill.", score=1 - i / 9)
        for i in range(1, 9)
    ]
    assembler.admit_turn(conv, Request("tell me", "t1", "ev-1"), None, evidence)
    admitted = [i for i in conv.items if i.kind == "evidence"]
    # The best first, as many as fit the share; the rest omitted, each recoverable.
    assert 1 <= len(admitted) < len(evidence)
    assert [i.source_ids[0] for i in admitted] == [e.id for e in evidence[: len(admitted)]]
    assert sum(assembler.ledger.item_tokens(i) for i in admitted) <= share
    left = [o for o in assembler.assemble(conv).envelope.omissions if o.lane == "evidence"]
    assert len(left) == len(evidence) - len(admitted)
    assert all("this turn's evidence share" in o.reason for o in left)


def test_the_manifest_lists_admitted_items_and_unloaded_groups(tokenizer: Tokenizer) -> None:
    _, assembler, conv = setup(tokenizer)
    request = turn(assembler, conv, 1, "hello", "hi there")
    result = assembler.assemble(
        conv, request, active_groups=["core"], available_groups=["core", "web"]
    )
    manifest = result.envelope.manifest()
    ids = [e.source_id for e in manifest.admitted]
    assert ids[:2] == ["system_prompt", "tool_schemas"] and "ev-u1" in ids and "ev-a1" in ids
    assert all(e.reason for e in manifest.admitted)
    web = [o for o in manifest.omissions if o.lane == "tools"]
    assert web and web[0].recover_with is not None
    assert web[0].recover_with.name == "load_tool_group" and web[0].recover_with.arguments == {
        "group": "web"
    }
    assert manifest.used == result.usage.total
    assert "load_tool_group(group='web')" in manifest.text()


def test_a_protected_core_larger_than_the_window_is_a_clear_error(tokenizer: Tokenizer) -> None:
    settings = load_settings(context={"window": 512, "reserve_output": 256})
    ledger = Ledger(tokenizer, window=512, output_reserve_tokens=256)
    assembler = Assembler(settings, ledger)
    prefix = assembler.build_prefix("Be helpful. " * 200, [SCHEMA], ["core"])
    conv = Conversation("s", prefix)
    assembler.admit_turn(conv, Request("hi", "t1", "ev-1"))
    with pytest.raises(ContextOverflowError, match="does not fit"):
        assembler.assemble(conv)


def test_every_lane_is_reported_and_budgeted_from_the_one_lane_list(tokenizer: Tokenizer) -> None:
    settings, assembler, conv = setup(tokenizer)
    request = turn(assembler, conv, 1, "hello", "hi there")
    result = assembler.assemble(conv, request)
    assert list(result.usage.by_lane) == list(LANES)
    budget = result.envelope.budget
    assert list(budget.lane_limits) == list(LANES)
    assert budget.lane_limits["history"] == settings.context.budget("history_tail")
    assert sum(budget.by_lane.values()) == result.usage.total == budget.used
    assert budget.output_reserve_tokens == 256


def test_what_the_conversation_leaves_out_reaches_the_envelope_as_recorded(
    tokenizer: Tokenizer,
) -> None:
    _, assembler, conv = setup(tokenizer)
    turn(assembler, conv, 1, "first", "one")
    turn(assembler, conv, 2, "second", "two")
    conv.clear([conv.items[1]])
    conv.withdraw_turn(2, "turn 2 failed")
    result = assembler.assemble(conv)
    assert result.envelope.omissions[: len(conv.omitted)] == conv.omitted
    cleared, withdrawn = conv.omitted
    assert cleared.source_ids == ["ev-a1"] and cleared.recover_with is not None
    assert withdrawn.source_ids == ["ev-u2", "ev-a2"] and withdrawn.reason == "turn 2 failed"
