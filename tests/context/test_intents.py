"""The state path's classifier: its bands, what it never embeds, its kept weights, and the
examples it learns from. The real all-MiniLM-L6-v2 model; answers from a real SQLite file."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from config import Settings
from context.intent_examples import EXAMPLES, LABELS, examples, read_examples
from context.intents import IntentIndex
from context.normalize import normalize
from context.state import StateResolver
from memory.store import Store
from models import Embedder
from testkit import status_set

NOW = datetime(2026, 9, 1, 10, 30).astimezone()  # a Tuesday
BLIND = Path(__file__).parents[1] / "fixtures" / "status_blind"


def test_what_points_elsewhere_goes_to_the_model_without_an_embedding(
    store: Store, settings: Settings, index: IntentIndex
) -> None:
    resolver = StateResolver(store, settings, intents=index)
    index.forget_recent()
    before = index.embeddings
    expected = {
        # Orders and questions about the world.
        "remind me to call the bank at five": "elsewhere",
        "how do I approve a pull request?": "elsewhere",
        "what does overdue mean?": "elsewhere",
        # A judgement to make, or something to repeat: the model's, status words or not.
        "what should I tackle first?": "elsewhere",
        "remind me what time it is every hour": "elsewhere",
        # A word only near misses use, a name, or two words no example uses.
        "is there anything pending on the server?": "model",
        "what tasks should a project manager delegate?": "model",
    }
    for text, how in expected.items():
        result, routed = resolver.resolve_routed(text, NOW)
        assert result is None and routed.how == how, text
    # The clock somewhere else carries its place as an argument: a rule reads it.
    lisbon = resolver.resolve("What time is it in Lisbon?", NOW)
    assert lisbon is not None and lisbon.intent == "clock"
    assert index.embeddings == before
    # Status words only: the classifier is asked, and a real near miss stays the model's.
    result, routed = resolver.resolve_routed("what are you up to", NOW)
    assert result is None and routed.verdict is not None and routed.verdict.band != "answer"
    assert index.embeddings == before + 1
    # Phrasings no anchored rule knows, answered by the classifier alone.
    for text, intent in {
        "am I busy later": "schedule",
        "any deadlines coming up?": "schedule",
        "how close are you to your limit?": "context",
        "who haven't I heard back from?": "blocked",
    }.items():
        found, routed = resolver.resolve_routed(text, NOW)
        assert found is not None and found.intent == intent and routed.how == "classifier", text


class FixedIndex(IntentIndex):
    """The real vocabulary rules around probabilities the test sets."""

    def __init__(self, probs: dict[str, float]) -> None:
        super().__init__(lambda: None)
        self.probs = probs

    def probabilities(self, core: str) -> dict[str, float] | None:  # type: ignore[override]
        return dict(self.probs)


@pytest.mark.parametrize(
    ("text", "probs", "band"),
    [
        ("what's next on my plate", {"list": 0.85, "none": 0.15}, "answer"),
        # One word no example uses: never alone, however sure ("stock" is not "stuck").
        ("what's next on my whiteboard", {"list": 0.85, "none": 0.15}, "unsure"),
        ("what's next on my whiteboard", {"list": 0.9999, "none": 0.0001}, "unsure"),
        # Status questions together decide; the answer is the leading intent's.
        ("what's next on my plate", {"list": 0.55, "pending": 0.3, "none": 0.15}, "answer"),
        # Too close to call: the state path does not answer alone.
        ("what's next on my plate", {"list": 0.35, "pending": 0.3, "none": 0.35}, "unsure"),
        ("what's next on my plate", {"list": 0.45, "pending": 0.4, "none": 0.15}, "unsure"),
        ("what's next on my plate", {"list": 0.2, "none": 0.8}, "model"),
    ],
)
def test_the_bands(
    store: Store, settings: Settings, text: str, probs: dict[str, float], band: str
) -> None:
    store.tasks.add("buy stamps")
    fixed = FixedIndex(probs)
    verdict = fixed.decide(normalize(text), text)
    assert verdict.band == band
    assert ("whiteboard" in verdict.why) == ("whiteboard" in text)
    result, routed = StateResolver(store, settings, intents=fixed).resolve_routed(text, NOW)
    if band == "answer":
        assert result is not None and result.intent == "list" and routed.how == "classifier"
    else:
        # Unsure or not a status question: the model answers, from the same state.
        assert result is None and routed.how == ("unsure" if band == "unsure" else "model")


def test_the_shipped_weights_are_current_and_load_without_training(
    embedder: Embedder, index: IntentIndex, intents_cache: Path
) -> None:
    # Fails when the examples changed and `python -m context.intents` was not run again.
    assert index.shipped_is_current(), "run: python -m context.intents"
    assert index.train_s == 0.0 and list(intents_cache.glob("intents-*.npz")) == []
    again = IntentIndex(lambda: embedder, cache_dir=intents_cache)
    assert again.warm() and again.train_s == 0.0
    core = normalize("anything on my plate this afternoon?")
    first, second = index.probabilities(core), again.probabilities(core)
    assert first is not None and second is not None
    assert first.keys() == second.keys()
    assert all(abs(first[k] - second[k]) < 1e-5 for k in first)
    # Another example set is another classifier: trained, kept in the cache and reused.
    small = {"time": ("what time is it",), "none": ("tell me a joke",)}
    other = IntentIndex(lambda: embedder, small, cache_dir=intents_cache)  # type: ignore[arg-type]
    assert not other.shipped_is_current()
    assert other.warm() and other.train_s > 0.0
    assert len(list(intents_cache.glob("intents-*.npz"))) == 1
    reused = IntentIndex(lambda: embedder, small, cache_dir=intents_cache)  # type: ignore[arg-type]
    assert reused.warm() and reused.train_s == 0.0


def test_a_blind_set_is_read_in_the_labelled_sets_form(tmp_path: Path) -> None:
    blind = tmp_path / "blind.tsv"
    blind.write_text("# written blind\npending\tanything on me?\n\nnone\twhat is a kanban\n")
    items = status_set.load_file(blind)
    assert [(i.label, i.text) for i in items] == [
        ("pending", "anything on me?"),
        ("none", "what is a kanban"),
    ]
    blind.write_text("pending anything on me?\n")
    with pytest.raises(ValueError, match=r"blind\.tsv:1"):
        status_set.load_file(blind)


def test_the_examples_are_many_and_apart_from_the_labelled_set() -> None:
    def words(text: str) -> str:
        # The same words in another order, or with other punctuation, are the same text.
        return " ".join(sorted(normalize(text).split()))

    labelled = {words(i.text) for i in status_set.load()}
    for blind in sorted(BLIND.glob("round*.tsv")):
        labelled |= {words(i.text) for i in status_set.load_file(blind)}
    # The blind lookup rounds (`test_lookup_blind.py`) are kept out too.
    for lookup in sorted(BLIND.parent.glob("lookup_blind*/questions.tsv")):
        labelled |= {words(line.split("\t")[0]) for line in lookup.read_text().splitlines()}
    for label, texts in EXAMPLES.items():
        assert len(texts) >= (400 if label == "none" else 50), label
        assert len(set(map(normalize, texts))) > 0.9 * len(texts), label
        # Written from what each intent means, never copied from the set that measures it.
        copied = [t for t in texts if words(t) in labelled]
        assert copied == [], label


def test_examples_are_read_one_a_line_and_a_missing_or_stray_file_is_named(
    tmp_path: Path,
) -> None:
    for label in LABELS:
        (tmp_path / f"{label}.txt").write_text(f"# {label}\n\n  what's on me  \n# more\nnext\n")
    found = examples(tmp_path)
    assert list(found) == list(LABELS)
    assert found["pending"] == ("what's on me", "next")
    assert read_examples(tmp_path / "none.txt") == ("what's on me", "next")
    (tmp_path / "pendng.txt").write_text("what's on me\n")
    with pytest.raises(ValueError, match=r"pendng\.txt name no label"):
        examples(tmp_path)
    (tmp_path / "pendng.txt").unlink()
    (tmp_path / "time.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"time\.txt: the examples of 'time'"):
        examples(tmp_path)


def test_a_question_about_the_user_in_words_no_rule_knows_reads_the_notes(
    store: Store, settings: Settings, index: IntentIndex
) -> None:
    store.notes.add("I'm allergic to penicillin")
    result, routed = StateResolver(store, settings, intents=index).resolve_routed(
        "what things about me have you kept track of", NOW
    )
    assert routed.how == "classifier" and result is not None and result.intent == "remember"
    assert "penicillin" in result.text


def test_the_classifier_runs_an_int8_copy_of_the_embedder(
    embedder: Embedder, index: IntentIndex
) -> None:
    fast = index.model()
    assert fast is not None and fast is not embedder and index.model() is fast  # made once
    text = ["what's still pending on me"]
    near = float(np.asarray(embedder.embed(text))[0] @ np.asarray(fast.embed(text))[0])
    # Close to the float model's vector, and not the same one: the notes never use it.
    assert 0.85 < near < 0.9999
