"""The pause's decision from the audio's verdict and the words' together (pure: no models)."""

from __future__ import annotations

import pytest

from bot.voice.end_of_turn import decide, worth_words
from config import Settings

VAD = Settings().vad
BAR = VAD.turn_threshold


@pytest.mark.parametrize(
    ("audio", "text", "words", "decision", "by"),
    [
        (0.95, "Remind me to call.", 0.01, "hold", "words"),  # sounds finished, reads not
        (0.95, "Set a reminder for,", 0.6, "hold", "rules"),  # the word rules hold first
        (0.95, "What time is it?", 0.8, "end", "audio"),
        (0.26, "Are there any tasks pending on me?", 0.43, "end", "agree"),
        (0.26, "Are there any tasks pending on me?", 0.2, "wait", "audio"),  # words unsure
        (0.1, "What time is it?", 0.8, "wait", "audio"),  # the audio says not yet
        (0.95, "What time is it?", None, "end", "audio"),  # no words' model: as before
        (0.95, "Go ahead.", 0.02, "end", "audio"),  # a short command: the rules alone hold
        (0.95, "Send a", 0.0, "hold", "rules"),
        (0.26, "What time is it?", None, "wait", "audio"),
    ],
)
def test_the_decision(audio: float, text: str, words: float | None, decision: str, by: str) -> None:
    verdict = decide(audio, text, words, BAR, VAD)
    assert (verdict.decision, verdict.by) == (decision, by)


def test_the_words_are_read_only_for_a_verdict_that_could_end_the_turn() -> None:
    assert worth_words(0.6, BAR, VAD, words_on=False)
    assert not worth_words(0.3, BAR, VAD, words_on=False)
    assert worth_words(0.3, BAR, VAD, words_on=True)
    assert not worth_words(0.1, BAR, VAD, words_on=True)
