"""Sentence embeddings: offline, unit length, and meaning-aware."""

from __future__ import annotations

import numpy as np

from models.base import Embedder


def test_embeddings_are_normalized_float32_rows(embedder: Embedder) -> None:
    vectors = embedder.embed(["Call the dentist tomorrow.", "Buy milk", "x"])
    assert embedder.dim == 384
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_similar_sentences_are_closer(embedder: Embedder) -> None:
    a, b, c = embedder.embed(
        [
            "Remind me to phone the dentist.",
            "I need to call my dentist.",
            "The stock market fell sharply today.",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.2
