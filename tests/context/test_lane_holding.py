"""Each lane is held to its budget where items are admitted, trimming only within itself.

Real assembler and ledger on the real tokenizer: a history lane over budget loses its oldest
reloadable tool output (never evidence, state or the newest results), an evidence lane over
budget loses its oldest evidence (never tool output), below `context.hold_lanes_above` nothing
moves, and the manifest names the lane and the reason of every item admitted or left out.
"""

from __future__ import annotations

from config import Settings, load_settings
from context.assembler import Assembler, Evidence, Request, StateSnapshot, manifest_json
from context.conversation import Conversation, Item
from context.holding import raw_tokens
from context.ledger import Ledger
from models.base import Tokenizer
from tests.context.helpers import SCHEMA, search_call

SYSTEM = "You are Annie, a voice assistant. Speak in short sentences."
WINDOW = 32768
RESULT = "Headline: the council approved the new tram line along the river. " * 40


def setup(
    tokenizer: Tokenizer, *, hold_above: int = 0, **budgets: int
) -> tuple[Settings, Assembler, Conversation]:
    settings = load_settings(
        context={"window": WINDOW, "hold_lanes_above": hold_above, "budgets": budgets}
    )
    ledger = Ledger(tokenizer, window=WINDOW, output_reserve_tokens=1024)
    assembler = Assembler(settings, ledger)
    prefix = assembler.build_prefix(SYSTEM, [SCHEMA], ["core"])
    return settings, assembler, Conversation("sess-1", prefix)


def play(
    assembler: Assembler,
    conv: Conversation,
    n: int,
    *,
    evidence: list[Evidence] | None = None,
    result: bool = True,
) -> Request:
    """One turn as a session plays it: admission (which holds the lanes), a search, an answer."""
    request = Request(f"What is new about topic {n}?", f"t{n}", f"ev-u{n}")
    state = StateSnapshot(f"Open tasks: {n}", observed_at=1_700_000_000.0 + n, id=f"st{n}")
    assembler.admit_turn(conv, request, state, evidence or [])
    if result:
        search_call(conv, assembler, n, f"topic {n}", f"({n}) {RESULT}")
    conv.append(Item(f"ev-a{n}", "assistant", "assistant", f"Here is topic {n}.", turn=conv.turn))
    return request


def evidence_for(n: int) -> list[Evidence]:
    text = f"Note {n}: the user keeps the spare key for locker {n} in the blue tin. " * 12
    return [Evidence(f"note-{n}", text, score=0.9, source_type="note")]


def test_a_history_lane_over_budget_trims_its_oldest_tool_output_and_nothing_else(
    tokenizer: Tokenizer,
) -> None:
    settings, assembler, conv = setup(tokenizer, history_tail=1500, evidence=8000)
    for n in range(1, 5):
        play(assembler, conv, n, evidence=evidence_for(n))
    budget = settings.context.budget("history_tail")
    results = [i for i in conv.items if i.kind == "tool_result"]
    # Admitting turn 5 found the history lane over its budget: the oldest results went first,
    # the newest `keep_recent` stayed, and no other lane lost anything.
    before = raw_tokens(conv, assembler.ledger, "history")
    assert before > budget
    lanes = {lane: raw_tokens(conv, assembler.ledger, lane) for lane in ("evidence", "state")}
    assembler.admit_turn(
        conv, Request("And now?", "t5", "ev-u5"), StateSnapshot("Open tasks: 4", id="st4")
    )
    # The newest results stay (the user may be asking about them); every older one went,
    # oldest first, since even then the lane was above half its budget.
    keep = settings.compaction.keep_recent_tool_results
    assert [i.id for i in results if i.cleared] == [i.id for i in results[:-keep]]
    cleared = [i.id for i in results if i.cleared]
    assert raw_tokens(conv, assembler.ledger, "history") < before
    assert not any(i.cleared for i in conv.items if i.kind in ("evidence", "state", "user"))
    assert {lane: raw_tokens(conv, assembler.ledger, lane) for lane in lanes} == lanes
    # Each cut is an omission of the history lane saying why, with the call that restores it.
    held = [o for o in conv.omitted if "held the history lane" in o.reason]
    assert sorted(s for o in held for s in o.source_ids) == sorted(cleared)
    assert all(o.lane == "history" and o.recover_with is not None for o in held)
    assert all(o.recover_with.name == "get_context" for o in held if o.recover_with)

    # The manifest names each item's lane and reason, the cut ones and the fixed head too.
    manifest = manifest_json(assembler.assemble(conv, Request("x", "t5", "ev-u5")).envelope)
    entries = {e["source_id"]: e for e in manifest["admitted"]}
    assert entries[cleared[0]]["lane"] == "history"
    assert "held the history lane" in entries[cleared[0]]["reason"]
    assert entries["note-4@t4"]["lane"] == "evidence"
    assert entries["note-4@t4"]["reason"].startswith("retrieved (score 0.90)")
    assert entries["system_prompt"]["lane"] == "policy"
    assert all(e["reason"] for e in manifest["admitted"])
    assert manifest["lane_limits"]["history"] == budget
    assert manifest["by_component"]["tool_results"] > 0
    assert manifest["by_lane"]["evidence"] > 0


def test_an_evidence_lane_over_budget_trims_its_oldest_evidence_and_no_tool_output(
    tokenizer: Tokenizer,
) -> None:
    settings, assembler, conv = setup(tokenizer, history_tail=6000, evidence=600)
    for n in range(1, 7):
        play(assembler, conv, n, evidence=evidence_for(n), result=n == 1)
    evidence = [i for i in conv.items if i.kind == "evidence"]
    cleared = [i for i in evidence if i.cleared]
    assert cleared and cleared == evidence[: len(cleared)]
    assert not evidence[-1].cleared  # this turn's evidence is never cut by the hold
    assert not any(i.cleared for i in conv.items if i.kind == "tool_result")
    assert raw_tokens(conv, assembler.ledger, "evidence") <= settings.context.budget("evidence")
    omission = next(o for o in conv.omitted if o.source_ids == [cleared[0].id])
    assert omission.lane == "evidence" and "oldest evidence" in omission.reason
    assert omission.recover_with is not None
    assert omission.recover_with.arguments == {"ids": [cleared[0].source_ids[0]]}
    # A cleared note is not "present" any more: recalled again, it comes back in full.
    play(assembler, conv, 7, evidence=evidence_for(1), result=False)
    again = conv.items[-3]
    assert again.kind == "evidence" and again.source_ids == ["note-1"] and not again.cleared


def test_below_the_hold_threshold_no_lane_is_trimmed(tokenizer: Tokenizer) -> None:
    _, assembler, conv = setup(tokenizer, hold_above=WINDOW, history_tail=600, evidence=300)
    for n in range(1, 7):
        play(assembler, conv, n, evidence=evidence_for(n))
    assert not any(i.cleared for i in conv.items)
    assert not any("held the" in o.reason for o in conv.omitted)


def test_a_prompt_that_would_not_fit_takes_each_lanes_excess_first(tokenizer: Tokenizer) -> None:
    # At 4,096 tokens the lanes are not held at admission (the threshold is above the window),
    # but a prompt that would not fit first trims the lanes over budget within themselves:
    # the evidence lane, within its own budget, keeps everything.
    settings = load_settings(context={"window": 4096, "reserve_output": 512})
    ledger = Ledger(tokenizer, window=4096, output_reserve_tokens=512)
    assembler = Assembler(settings, ledger)
    conv = Conversation("sess-1", assembler.build_prefix(SYSTEM, [SCHEMA], ["core"]))
    evidence = evidence_for(1)
    n = 0
    while True:
        n += 1
        request = play(assembler, conv, n, evidence=evidence if n == 1 else None)
        assembly = assembler.assemble(conv, request)
        if assembly.overflow:
            break
        assert n < 20, "the prompt never outgrew the window"
    assert assembly.usage.fits
    cleared = [i for i in conv.items if i.cleared]
    # Only lanes over their budgets lost anything, each within itself: old tool output in
    # history, superseded snapshots in state; never the evidence, never whole turns.
    assert {i.kind for i in cleared} <= {"tool_result", "state"}
    assert any(i.kind == "tool_result" for i in cleared)
    assert conv.last("state") not in cleared
    assert sorted(assembly.trimmed) == sorted(i.id for i in cleared)
    assert not any(i.cleared for i in conv.items if i.kind == "evidence")
    assert not any(i.meta.get("omission_marker") for i in conv.items)
    for item in cleared:
        why = [o for o in assembly.envelope.omissions if f"held the {item.lane} lane" in o.reason]
        assert any(o.source_ids == [item.id] and o.lane == item.lane for o in why)
