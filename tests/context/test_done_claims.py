"""What counts as the user saying an open task is already done, and which tasks it fits."""

from __future__ import annotations

import pytest

from context.done_claims import claim

TITLES = [
    "pay the gas bill",
    "pay the water bill",
    "do the laundry",
    "file the taxes",
    "renew passport",
    "book the dentist",
    "send the forms to Ann",
    "buy milk",
    "stop the newspaper delivery",
    "empty the dishwasher",
]


@pytest.mark.parametrize(
    ("said", "fits"),
    [
        ("I already paid the gas bill", ["pay the gas bill"]),
        ("I paid the gas bill.", ["pay the gas bill"]),
        ("The gas bill is paid", ["pay the gas bill"]),
        ("the water bill's paid", ["pay the water bill"]),
        ("I did the laundry", ["do the laundry"]),
        ("We finally filed the taxes", ["file the taxes"]),
        ("I renewed my passport yesterday", ["renew passport"]),
        ("Oh, I booked the dentist", ["book the dentist"]),
        ("I've sent the forms to Ann", ["send the forms to Ann"]),
        ("okay I bought milk already", ["buy milk"]),
        ("I stopped the newspaper delivery", ["stop the newspaper delivery"]),
        ("I emptied the dishwasher", ["empty the dishwasher"]),
        # Said, but of nothing on the list.
        ("I went to the gym", []),
        ("I paid the electricity bill", []),
    ],
)
def test_a_claim_fits_the_tasks_it_names(said: str, fits: list[str]) -> None:
    found = claim(said)
    assert found is not None, said
    assert [t for t in TITLES if found.fits(t)] == fits


@pytest.mark.parametrize(
    "said",
    [
        "Did I pay the gas bill?",
        "I will pay the gas bill",
        "I haven't paid the gas bill",
        "I didn't do the laundry",
        "I'm going to file the taxes",
        "I call the plumber on Fridays",
        "I paid the gas bill what's next",
        "I paid the gas bill, can you remind me about the water bill",
        "pay the gas bill",
        "the gas bill is due tomorrow",
    ],
)
def test_questions_plans_negations_and_more_are_not_claims(said: str) -> None:
    found = claim(said)
    assert found is None or not any(found.fits(t) for t in TITLES), said


@pytest.mark.parametrize(
    ("said", "fits"),
    [
        ("mark the taxes done", ["file the taxes"]),
        ("please mark the dentist task as done", ["book the dentist"]),
        ("tick off the laundry", ["do the laundry"]),
        ("cross off the bills", ["pay the gas bill", "pay the water bill"]),
        ("mark the car done", []),
    ],
)
def test_being_told_to_mark_a_task_names_it_by_its_words(said: str, fits: list[str]) -> None:
    found = claim(said)
    assert found is not None and found.command, said
    assert [t for t in TITLES if found.fits(t)] == fits
