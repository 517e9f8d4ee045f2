"""Runaway loops at the end of a stream: a short unit over and over, in words or characters.

Used by the spoken-answer budget (`bot.voice.aloud`) to end generation when a model loops:
a run of words ("and the dragon and the dragon ...") or, inside one run with no space, of
characters ("RefundRefundRefund..."), which the word checks never see. Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

# A run of words repeated this often (at least three times) is a loop, not emphasis.
WORD_LOOP_SPAN = 10
WORD_LOOP_MAX_PERIOD = 12
# A run with no space is no word: a few letters over and over is a loop once it spans this
# many characters; a run this long is a runaway whatever it holds.
RUN_LOOP_SPAN = 48
RUN_LOOP_MAX_PERIOD = 16
RUN_MAX_CHARS = 300
_TRAILING_RUN = re.compile(r"\S+$")


def ends_in_loop(items: Sequence[object], min_period: int, max_period: int, span: int) -> bool:
    """`items` end in a unit of `min_period` to `max_period` items repeated at least three
    times and over at least `span` items."""
    for period in range(min_period, max_period + 1):
        times = max(3, math.ceil(span / period))
        whole = period * times
        if whole > len(items):
            continue
        unit = items[-period:]
        if all(items[-whole + i] == unit[i % period] for i in range(whole)):
            return True
    return False


def words_loop(words: Sequence[str]) -> bool:
    """The last words are a short run said over and over."""
    return ends_in_loop(words, 1, WORD_LOOP_MAX_PERIOD, WORD_LOOP_SPAN)


def unbroken_runaway(text: str) -> bool:
    """`text` ends in a run with no space that loops on a unit of two or more characters,
    or that is longer than any word (a run of one character, a rule of dashes, is left to
    the length limit)."""
    run = _TRAILING_RUN.search(text[-(RUN_MAX_CHARS + 1) :])
    if run is None:
        return False
    chars = run.group()
    return len(chars) > RUN_MAX_CHARS or ends_in_loop(chars, 2, RUN_LOOP_MAX_PERIOD, RUN_LOOP_SPAN)
