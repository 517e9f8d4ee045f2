"""One spec per intent: every intent has one, the router and the state path read it, and each
intent is placed, answered, and answered with its fallback when its records cannot be read."""

from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest

from config import Settings
from context.intent_examples import LABELS
from context.intent_specs import BY_NAME, SPECS
from context.state import StateResolver
from context.state_rules import route
from context.state_vocab import INTENTS
from memory.store import Store

NOW = datetime(2026, 3, 10, 9, 30).astimezone()
# One question each intent answers, and the slots it fills: a new intent adds its line here.
ASKED: dict[str, tuple[str, dict[str, object]]] = {
    "approvals": ("what needs my approval?", {}),
    "blocked": ("what's blocked?", {}),
    "pending": ("anything pending on me?", {}),
    "list": ("what's on my to-do list?", {}),
    "schedule": ("what's on my schedule tomorrow?", {"day": "tomorrow"}),
    "time": ("what time is it?", {}),
    "date": ("what's the date today?", {}),
    "context": ("how full is your context?", {}),
    "remember": ("what have I told you about my sister?", {"subject": "my sister"}),
    "find": ("is laundry on my list?", {"item": "laundry", "within": "list"}),
    "timers": ("how long is left on the pasta timer?", {"item": "pasta"}),
    "clock": ("what time is it in Tokyo?", {"place": "tokyo"}),
    "dates": ("what's the date in five days?", {}),
    # The day's words, read against the time asked when answered.
    "agenda": ("anything on my calendar for the 21st?", {"item": "the 21st"}),
}


def test_every_intent_has_one_spec_and_one_question_here() -> None:
    assert [s.name for s in SPECS].count("find") == 1
    assert set(BY_NAME) == set(INTENTS) == set(ASKED)
    for spec in SPECS:
        # An intent the classifier places has its examples file; the others have none.
        assert spec.examples.is_file() == (spec.name in LABELS), spec.name
        # Keywords without rules would propose an intent nothing can place, and the reverse.
        assert bool(spec.keywords) == bool(spec.rules), spec.name
        assert spec.answers and spec.fallback


@pytest.mark.parametrize("intent", sorted(ASKED))
def test_each_intent_is_placed_with_its_slots_and_answered(
    intent: str, store: Store, settings: Settings
) -> None:
    text, slots = ASKED[intent]
    routed = route(text)
    assert routed.match is not None and routed.match.intent == intent, routed
    found = routed.match.slots()
    assert found.keys() == slots.keys()
    assert all(str(found[k]).endswith(str(v)) for k, v in slots.items()), found
    assert set(routed.match.slots()) <= set(BY_NAME[intent].slots)
    store.tasks.add("laundry")
    store.reminders.add("pasta timer", "2026-03-10T09:40:00")
    answer = StateResolver(store, settings).resolve(text, NOW)
    assert answer is not None and answer.text, intent


@pytest.mark.parametrize("intent", sorted(i for i in ASKED if BY_NAME[i].reads_store))
def test_an_intent_that_reads_the_store_says_its_fallback_when_it_cannot(
    intent: str, store: Store, settings: Settings
) -> None:
    text = ASKED[intent][0]
    # No store at all (its file could not be opened).
    answer = StateResolver(None, settings).resolve(text, NOW)
    assert answer is not None and answer.text == BY_NAME[intent].fallback
    # A store whose tables another connection broke, as a bad copy would.
    assert store.path is not None
    other = sqlite3.connect(store.path)
    for table in ("tasks", "reminders", "approvals", "notes"):
        other.execute(f"ALTER TABLE {table} RENAME TO {table}_damaged")
    other.commit()
    other.close()
    said = StateResolver(store, settings).resolve(text, NOW)
    assert said is not None and said.text == BY_NAME[intent].fallback, said.text
