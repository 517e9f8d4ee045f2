"""Whether recall found what was asked or only notes near it: the evidence lane's hedge.

Recall always puts forward the nearest notes above the relevance floor, and near is not the
same as an answer: asked "What must I leave off the menu when Hugo comes for dinner?", the
notes about Hugo are there ("Hugo is coming over on Saturday for dinner"), and the one about
his allergy may not be. Handed those as memory, a model answers from them with confidence.
So each recalled set is judged: it is sure when its best note matches what is asked about the
subject (the names' own directions taken out, as recall ranks them) by at least `SURE`, leads
the next note by `LEAD`, and, for a question tied to a time ("six weeks ago", "before the
trip"), was written in that time. Otherwise every note in the lane says it is only related,
and the model is told to use such a note only when it says what was asked.

The two figures were chosen on the generated memory of seed 1 and the first blind round of
recall questions: there a sure lane without the right note fell from 3.0% of questions to
none, while 36% (generated) and 74% (blind) kept a sure lane with the right note first. The
other rounds' figures are in docs/memory.md (`python -m bot bench recall`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from context.when import When
from memory.rows import Hit, from_iso

# With all-MiniLM-L6-v2, a note that says what was asked scores about 0.45-0.9 against the
# question with names taken out; a note only about the same person or thing, 0.25-0.5.
SURE = 0.45
# Two notes about as close as each other ("... on Tuesday for dinner", "... allergic to
# kiwi") mean the question does not pick one out.
LEAD = 0.05
# A turn of a conversation must clear a higher bar: people come back to a subject many times,
# and the nearest turn is often the one before or after the answer. Chosen on LoCoMo's
# development conversations (26, 30, 41, 42, 43; docs/memory.md): at 0.45/0.05, 4.1% of the
# answerable questions got a sure lane without an answering turn and 20.3% of the
# adversarial ones a sure lane; at 0.55/0.10, 0.5% and 8.9%.
SAID_SURE = 0.55
SAID_LEAD = 0.10


def sure(
    hits: list[Hit],
    vectors: npt.NDArray[np.float32],
    vector: npt.NDArray[np.float32],
    focus: dict[str, npt.NDArray[np.float32]],
    when: When | None,
    said: bool = False,
) -> bool:
    """Whether the best of `hits` (in lane order; `vectors` their embeddings) answers the
    question embedded as `vector`, whose names' embeddings are `focus`, asked about `when`;
    `said`: the best is a turn of a conversation, held to the higher bar."""
    if not hits:
        return False
    if windowed(when) and not inside(hits[0], when):
        return False
    aspects = vectors @ vector
    for direction in focus.values():
        aspects = np.minimum(aspects, without(vectors, direction) @ without(vector, direction))
    best = float(aspects[0])
    runner_up = float(aspects[1:].max()) if len(hits) > 1 else 0.0
    least, lead = (SAID_SURE, SAID_LEAD) if said else (SURE, LEAD)
    return best >= least and best - runner_up >= lead


def without(matrix: npt.NDArray[np.float32], direction: npt.NDArray[np.float32]) -> Any:
    """Each row of `matrix` (or the one vector) with its component along `direction` removed,
    normalized again."""
    unit = direction / max(float(np.linalg.norm(direction)), 1e-9)
    rest = matrix - np.multiply.outer(matrix @ unit, unit)
    return rest / np.maximum(np.linalg.norm(rest, axis=-1, keepdims=True), 1e-9)


def windowed(when: When | None) -> bool:
    return when is not None and (when.since is not None or when.until is not None)


def inside(hit: Hit, when: When | None) -> bool:
    """Whether `hit` was written within `when`'s window (never, when it has none)."""
    if when is None or not windowed(when):
        return False
    at = from_iso(hit.timestamp)
    return (when.since is None or at >= when.since) and (when.until is None or at < when.until)
