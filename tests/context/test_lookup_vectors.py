"""Record titles are embedded once over a resolver's questions (`lookup.Remembered`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from context.lookup import Remembered
from models import Embedder


def test_a_title_is_embedded_once_over_many_questions_and_afresh_for_another_model(
    embedder: Embedder,
) -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> npt.NDArray[np.float32]:
        calls.append(list(texts))
        return embedder.embed(texts)

    remembered = Remembered()
    first = remembered.over(embedder, embed)(["boiler", "Call the plumber", "Renew passport"])
    again = remembered.over(embedder, embed)(["passport", "Renew passport", "Call the plumber"])
    assert calls == [["boiler", "Call the plumber", "Renew passport"], ["passport"]]
    assert np.array_equal(again[1], first[2]) and np.array_equal(again[2], first[1])
    assert again.shape == (3, embedder.dim)
    # Vectors of one model are never another's.
    remembered.over(object(), embed)(["Renew passport"])
    assert calls[-1] == ["Renew passport"]


def test_past_its_limit_it_starts_afresh_and_still_answers_every_text(embedder: Embedder) -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> npt.NDArray[np.float32]:
        calls.append(list(texts))
        return embedder.embed(texts)

    remembered = Remembered(limit=3)
    over = remembered.over(embedder, embed)
    over(["a dentist", "the bins"])
    vectors = over(["the bins", "a haircut", "car service"])
    assert calls[-1] == ["the bins", "a haircut", "car service"]
    assert vectors.shape == (3, embedder.dim)
    assert over([]).size == 0
