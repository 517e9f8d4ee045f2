"""The recall bench on a small generated memory: its report's shape and a floor on Recall@5."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.recall import measure
from bench.recall_memory import generate
from config import Settings
from models.base import Embedder, Tokenizer


def test_the_generated_memory_is_the_same_for_a_seed_and_its_questions_are_paraphrases() -> None:
    a, b = generate(600, 60, seed=5), generate(600, 60, seed=5)
    assert [(n.text, n.at) for n in a.notes] == [(n.text, n.at) for n in b.notes]
    assert len(a.notes) == 600 and len(a.questions) == 60
    assert {q.kind for q in a.questions} == {"fact", "dated", "event"}
    texts = [n.text for n in a.notes]
    assert len(set(texts)) == len(texts)
    for q in a.questions:
        assert q.answer in texts
        assert q.text.lower() not in q.answer.lower()
    assert [n.at for n in a.notes] == sorted(n.at for n in a.notes)
    assert generate(600, 60, seed=6).notes != a.notes


@pytest.mark.slow  # embeds 400 notes: about a minute on two busy cores
def test_a_small_bench_reports_recall_tokens_latency_and_false_certainty(
    model_settings: Settings, embedder: Embedder, tokenizer: Tokenizer, tmp_path: Path
) -> None:
    f = measure(
        400,
        40,
        seed=3,
        settings=model_settings,
        embedder=embedder,
        tokenizer=tokenizer,
        cache=tmp_path,
    )
    assert f["notes"] == 400 and f["questions"] == 40 and f["lane"] == 5
    assert set(f["by_kind"]) == {"fact", "dated", "event"}
    assert sum(k["questions"] for k in f["by_kind"].values()) == 40
    assert f["recall_at_1"] <= f["recall_at_3"] <= f["recall_at_5"]
    assert f["recall_at_5"] >= 0.75
    # A question whose lane holds only wrong notes is one the lane missed.
    assert 0.0 <= f["false_certainty"] <= 1.0 - f["recall_at_5"] + 1e-9
    assert 0 < f["lane_tokens_mean"] <= f["lane_tokens_p95"] + 1
    assert 0 < f["recall_ms_p50"] <= f["recall_ms_p95"]
    assert 0 < f["search_ms_p50"] <= f["search_ms_p95"]
    assert list(tmp_path.glob("*.npy"))  # the notes' embeddings were cached
