"""The pure parts: tier decisions, tier-1 planning, cache accounting, rules, checkpoint merge."""

from __future__ import annotations

from bot.tools.registry import default_registry
from compaction.checkpoint import Checkpoint, merge, missing_items, render
from compaction.monitor import Action, MonitorHistory, decide, due_tier
from compaction.protected import LogEntry, extract, find_ids, is_correction, sentences
from compaction.summarize import parse_summary
from compaction.tier1 import ItemView, plan_tier1
from config.settings import CompactionSettings

CFG = CompactionSettings()


def test_due_tier_follows_the_thresholds() -> None:
    assert due_tier(0.64, CFG) == 0
    assert due_tier(0.65, CFG) == 1
    assert due_tier(0.79, CFG) == 1
    assert due_tier(0.80, CFG) == 2


def test_tier1_only_when_it_gets_below_the_threshold_and_not_twice_in_a_row() -> None:
    monitored = MonitorHistory()
    assert decide(0.60, 5, monitored, CFG, tier1_fraction_after=0.40) is Action.NONE
    assert decide(0.70, 5, monitored, CFG, tier1_fraction_after=0.45) is Action.TIER1
    # A plan that cannot get below 65% would fire again next turn: not worth a re-prefill.
    assert decide(0.70, 5, monitored, CFG, tier1_fraction_after=0.66) is Action.NONE
    monitored.last_tier1_turn = 5
    assert decide(0.70, 6, monitored, CFG, tier1_fraction_after=0.40) is Action.NONE
    assert decide(0.70, 7, monitored, CFG, tier1_fraction_after=0.40) is Action.TIER1


def test_tier2_is_queued_at_80_percent_when_tier1_cannot_help() -> None:
    monitored = MonitorHistory()
    assert decide(0.81, 9, monitored, CFG, tier1_fraction_after=None) is Action.QUEUE_TIER2
    assert decide(0.81, 9, monitored, CFG, tier1_fraction_after=0.50) is Action.TIER1
    monitored.last_tier2_turn = 9
    assert decide(0.81, 10, monitored, CFG, tier1_fraction_after=None) is Action.NONE


def _items() -> list[ItemView]:
    out = []
    for turn in range(1, 7):
        out.append(ItemView(f"u{turn}", "user", 20, turn=turn))
        out.append(ItemView(f"c{turn}", "tool_call", 30, turn=turn))
        out.append(ItemView(f"r{turn}", "tool_result", 400, turn=turn))
        out.append(ItemView(f"a{turn}", "assistant", 50, turn=turn))
    return out


def test_tier1_clears_oldest_first_at_one_cut_and_keeps_the_newest() -> None:
    items = _items()
    used = 1000 + sum(i.tokens for i in items)  # 1,000 tokens of fixed head
    plan = plan_tier1(
        items,
        used=used,
        window=4000,
        target=0.45,
        keep_recent=2,
        placeholder_tokens=lambda _id: 25,
    )
    assert plan.clear_ids == ["r1", "r2", "r3", "r4"]
    assert plan.first_index == 2
    assert plan.used_after == used - 4 * 375
    assert "r5" not in plan.clear_ids and "r6" not in plan.clear_ids


def test_tier1_stops_at_the_target() -> None:
    items = _items()
    used = 1000 + sum(i.tokens for i in items)
    plan = plan_tier1(
        items, used=used, window=10000, target=0.33, keep_recent=2, placeholder_tokens=lambda _: 25
    )
    assert plan.clear_ids == ["r1", "r2"]
    assert plan.used_after == 3250


def test_corrections_facts_and_ids_come_from_the_words_not_the_model() -> None:
    text = "Thanks. Actually my sister's name is Ana, not Anna. See you."
    assert is_correction(text)
    assert not is_correction("Search for the latest on Netflix earnings.")
    entries = [
        LogEntry("ev-1", "user", "actually my sister's name is Ana, not Anna"),
        LogEntry("ev-2", "user", "My dentist is Dr. Okafor on Elm Street. The code is QX-7731."),
        LogEntry("ev-3", "assistant", "I'll remind you about it tomorrow."),
        LogEntry("ev-4", "tool_call", "", "save_note", {"text": "Garage code is 4471"}),
        LogEntry("ev-5", "tool_call", "", "create_task", {"title": "Call the plumber"}),
        LogEntry("ev-6", "tool_call", "", "fetch_webpage", {"url": "https://example.org/a-1"}),
    ]
    cp = extract(entries, default_registry().protects())
    assert cp.corrections == ["actually my sister's name is Ana, not Anna"]
    assert "My dentist is Dr. Okafor on Elm Street." in cp.facts
    assert cp.ids == ["QX-7731"]
    assert cp.notes == ["Garage code is 4471"]
    assert "Call the plumber" in cp.commitments
    assert "I'll remind you about it tomorrow." in cp.commitments
    assert sentences("Dr. Who is here. Bye.") == ["Dr. Who is here.", "Bye."]
    assert find_ids("order INV-2291, ticket #40213 and https://x.org/p?q=1.") == [
        "INV-2291",
        "#40213",
        "https://x.org/p?q=1",
    ]


def test_protected_kinds_come_from_each_tools_metadata() -> None:
    protects = default_registry().protects()
    assert protects == {
        "save_note": "note",
        "create_task": "task",
        "set_reminder": "reminder",
        "set_timer": "reminder",
    }
    # Only the metadata names what a call records: a tool without it protects nothing.
    entry = LogEntry("ev-1", "tool_call", "", "create_task", {"title": "Call the plumber"})
    assert extract([entry]).commitments == []
    assert extract([entry], protects).commitments == ["Call the plumber"]


def test_a_later_checkpoint_never_drops_an_earlier_ones_fields() -> None:
    first = Checkpoint(
        goal="plan the party",
        corrections=["actually my sister's name is Ana, not Anna"],
        ids=["QX-7731"],
        notes=["Garage code is 4471"],
        summary="We planned the party.",
        covers=["ev-1", "ev-40"],
        turns=10,
    )
    second = Checkpoint(
        goal="",
        corrections=["Correction: the party is on Saturday, not Friday."],
        ids=["INV-2291"],
        summary="Then we searched the news.",
        covers=["ev-41", "ev-90"],
        turns=12,
    )
    merged = merge(first, second)
    for item in first.protected_items() + second.protected_items():
        assert item in merged.protected_items()
    assert merged.goal == "plan the party"
    assert merged.covers == ["ev-1", "ev-90"]
    assert merged.turns == 22
    text = render(merged)
    assert missing_items(text, merged.protected_items()) == []
    assert "We planned the party." in merged.summary and "searched the news" in merged.summary
    assert Checkpoint.from_json(merged.to_json()) == merged


def test_model_output_is_parsed_or_kept_as_plain_text() -> None:
    ok = parse_summary('{"goal": "g", "decisions": ["d"], "open_questions": [], "summary": "s"}')
    assert ok.parsed and ok.goal == "g" and ok.decisions == ["d"] and ok.summary == "s"
    cut = parse_summary('{"goal": "g", "decisions": ["d1", "d2"], "open_questions": ["q')
    assert cut.parsed and cut.goal == "g" and cut.decisions == ["d1", "d2"]
    junk = parse_summary("the user talked about news")
    assert not junk.parsed and junk.summary == "the user talked about news"
