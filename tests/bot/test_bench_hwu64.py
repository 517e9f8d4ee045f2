"""`bench hwu64` on a small self-written fixture in HWU64's fold layout (the project does not
ship the data): every request is routed through the real chain and counted by its stage."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.hwu64 import HERE, Hwu64Error, fold_dir, load, measure, read_tsv
from testkit.cli import bot

FIXTURE = Path(__file__).parents[1] / "fixtures" / "hwu64"
MAPPING = FIXTURE / "mapping"


def test_the_committed_mapping_names_every_intent_once_with_a_stage() -> None:
    rows = read_tsv(HERE / "intents.tsv", ("intent", "stage", "why"))
    intents = [r["intent"] for r in rows]
    assert len(intents) == 64 and len(set(intents)) == 64
    assert {r["stage"] for r in rows} <= {"state", "command", "model", "labelled"}
    assert all(r["why"].strip() for r in rows)


def test_the_committed_labels_cover_the_mixed_intents() -> None:
    labels = read_tsv(HERE / "labels.tsv", ("fold", "answerid", "intent", "stage", "text"))
    mixed = {r["intent"] for r in read_tsv(HERE / "intents.tsv", ("intent", "stage"))
             if r["stage"] == "labelled"}  # fmt: skip
    assert {r["intent"] for r in labels} == mixed
    assert {r["stage"] for r in labels} <= {"state", "command", "model"}
    assert {r["fold"] for r in labels} == {"train", "test"}
    keys = [(r["fold"], r["intent"], r["answerid"]) for r in labels]
    assert len(keys) == len(set(keys))


def test_requests_are_read_with_their_stages() -> None:
    train = load(FIXTURE, "train", MAPPING)
    stages = {r.id: (r.intent, r.expected) for r in train}
    assert stages["1"] == ("lists_query", "state")
    assert stages["2"] == ("lists_query", "model")
    assert stages["6"] == ("music_query", "model")
    assert stages["8"] == ("alarm_set", "command")
    assert len(train) == 8
    assert len(load(FIXTURE, "test", MAPPING)) == 2


def test_routing_counts_state_reads_and_others_taken() -> None:
    figures, misses = measure(load(FIXTURE, "train", MAPPING))
    assert figures["requests"] == 8 and figures["state_reads"] == 3
    assert figures["others"] == 5 and figures["commands"] == 1
    # The bench counts what the chain did: every miss is a line naming the request.
    wrong = figures["state_reads"] - figures["state_reads_answered"] + figures["others_taken"]
    assert len(misses) == wrong
    assert figures["state_reads_answered"] >= 2  # the list and the clock in Tokyo


def test_a_folder_that_is_not_hwu64_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(Hwu64Error, match="NLU-Evaluation-Data"):
        fold_dir(tmp_path)
    result = bot("bench", "hwu64", str(tmp_path))
    assert result.returncode == 2 and "not HWU64's fold layout" in result.stdout
    assert "Traceback" not in result.stderr
