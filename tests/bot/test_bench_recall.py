"""The recall bench on a small generated memory: its report's shape and a floor on Recall@5."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.recall import ABSENT, load_questions, measure
from bench.recall_memory import Question, generate
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
    # A sure lane is led by the right note or a wrong one; a hedged one may still hold it.
    assert f["sure_right_first"] + f["sure_wrong_first"] == pytest.approx(f["sure"], abs=1e-3)
    assert f["sure_right_first"] <= f["recall_at_1"]
    assert f["sure_right_first"] > 0 and f["hedged_holding_right"] > 0
    assert f["absent"] == {"questions": 0, "sure": 0, "hedged": 0, "empty": 0}
    assert 0 < f["lane_tokens_mean"] <= f["lane_tokens_p95"] + 1
    assert 0 < f["recall_ms_p50"] <= f["recall_ms_p95"]
    assert 0 < f["search_ms_p50"] <= f["search_ms_p95"]
    assert list(tmp_path.glob("*.npy"))  # the notes' embeddings were cached


def test_blind_questions_load_and_name_notes_of_the_memory_they_were_written_for(
    tmp_path: Path,
) -> None:
    folder = Path(__file__).parents[1] / "fixtures" / "recall_blind"
    texts = {n.text for n in generate(5000, 300, seed=2).notes}
    for path in sorted(folder.glob("round*.tsv")):
        questions = [q for q in load_questions(path) if q.kind != ABSENT]
        assert len(questions) == 200, path
        assert all(q.answer in texts for q in questions), path
        assert {q.kind for q in questions} == {"fact", "dated", "event"}
    # Rounds 4 to 8 also ask what no note says, about the memory's own people, places and
    # things.
    for name, count in [("round4.tsv", 60), ("round5.tsv", 100), ("round6.tsv", 50),
                        ("round7.tsv", 30), ("round8.tsv", 30)]:  # fmt: skip
        absent = [q for q in load_questions(folder / name) if q.kind == ABSENT]
        assert len(absent) == count and all(q.answer == "-" for q in absent), name
    bad = tmp_path / "bad.tsv"
    bad.write_text("# a comment\nfact\tWhat does Mia drink?\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv:2: expected kind, question and note"):
        load_questions(bad)
    bad.write_text("absent\tWhat is Mia's middle name?\tMia lives in Bath.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv:1: a question of kind absent has the note -"):
        load_questions(bad)


def test_blind_questions_for_another_memory_are_refused_with_the_reason(
    model_settings: Settings, embedder: Embedder, tokenizer: Tokenizer, tmp_path: Path
) -> None:
    asked = [Question("What does Mia drink?", "Mia always asks for rooibos.", "fact")]
    with pytest.raises(ValueError, match="not in the memory of 50 notes, seed 2"):
        measure(
            50,
            5,
            seed=2,
            settings=model_settings,
            embedder=embedder,
            tokenizer=tokenizer,
            cache=tmp_path,
            questions=asked,
        )
