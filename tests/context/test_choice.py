"""Picking one of the candidates Annie named: by position or by what sets it apart."""

from __future__ import annotations

import pytest

from context.choice import pick

BILLS = ["pay the gas bill", "pay the gas bill for mum", "pay the water bill"]


@pytest.mark.parametrize(
    ("reply", "picked"),
    [
        ("the second one", 1),
        ("The first.", 0),
        ("second", 1),
        ("number 3", 2),
        ("it's the last one", 2),
        ("the one for mum", 1),
        ("the water one", 2),
        ("Water bill, please", 2),
        # Words all the candidates share, or none has, or a position past the end: no pick.
        ("the gas one", None),
        ("the one about the car", None),
        ("the sixth one", None),
        ("what time is it", None),
        ("", None),
    ],
)
def test_a_reply_picks_one_or_none(reply: str, picked: int | None) -> None:
    assert pick(reply, BILLS) == picked


POSITIONS = ["the first one", "the second one", "the third one", "the fourth one", "the fifth one"]
COLORS = ["red", "blue", "green", "gold", "grey"]


def test_two_to_five_similar_candidates_are_each_reachable_by_position_and_by_words() -> None:
    for n in range(2, 6):
        names = [f"call the {color} plumber" for color in COLORS[:n]]
        for i, color in enumerate(COLORS[:n]):
            assert pick(POSITIONS[i], names) == i
            assert pick(f"the {color} one", names) == i
