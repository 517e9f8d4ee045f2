"""The words' end-of-turn model on the shipped SmolLM2-135M: fragments read unfinished, whole
requests read finished, the recognizer's trailing full stop says nothing, and calls from
several threads give the same numbers as one at a time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from config import Settings
from models import load_end_of_turn_words
from models.end_of_turn_words import EndOfTurnWords

HOLD = Settings().vad.turn_words_hold

# Written for this test; the blind set (tests/fixtures/pauses_blind/) measures the model.
FRAGMENTS = ["Remind me to call", "Can you tell me about", "I was wondering if", "Add eggs and"]
WHOLE = ["What time is it?", "Can you tell me about the weather in Paris today?"]


@pytest.fixture(scope="module")
def words(model_settings: Settings) -> EndOfTurnWords:
    return load_end_of_turn_words(model_settings)


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_a_sentence_stopped_midway_reads_unfinished(words: EndOfTurnWords, fragment: str) -> None:
    assert words.finished_probability(fragment) < HOLD


@pytest.mark.parametrize("whole", WHOLE)
def test_a_whole_request_reads_finished(words: EndOfTurnWords, whole: str) -> None:
    assert words.finished_probability(whole) > 5 * HOLD


def test_the_recognizers_closing_punctuation_and_case_say_nothing(words: EndOfTurnWords) -> None:
    plain = words.finished_probability("remind me to call")
    assert words.finished_probability("Remind me to call.") == pytest.approx(plain, abs=1e-6)
    assert words.finished_probability("Remind me to call?") == pytest.approx(plain, abs=1e-6)
    assert words.finished_probability("  ") == 1.0


def test_calls_from_many_threads_give_the_numbers_one_call_gives(words: EndOfTurnWords) -> None:
    texts = FRAGMENTS + WHOLE
    alone = [words.finished_probability(t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(words.finished_probability, texts * 3))
    assert together == pytest.approx(alone * 3, abs=1e-6)
