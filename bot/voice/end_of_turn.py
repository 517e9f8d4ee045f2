"""Whether a pause ends the speaker's turn: the audio's verdict and the words' together.

Smart Turn (`models.end_of_turn`) hears prosody; the words' model (`models.end_of_turn_words`)
reads the transcript. Each fails where the other is strong: "Remind me to call," sounds finished
and reads unfinished; Piper's rising "Are there any tasks pending on me?" sounds unfinished for
a while and reads finished. The decision, taken once the pause's transcript is in (the answer
needs it anyway):

- **hold** when the words read unfinished: the word rules (`reads_unfinished`: a trailing
  comma, "and", "the", "um") or a chance of ending under `turn_words_hold`. Only the pause's
  longest allowed length (`turn_max_silence_ms`) then ends the turn, so a speaker who stops
  mid-sentence is still answered, later. A reply of one or two words ("Cancel.", "Go ahead.",
  "Next.") is held by the rules only: the model reads most short commands as the opening of
  something longer (0.002 to 0.05), and a command must not wait for the longest pause.
- **end** when the audio is sure (over its bar, `turn_threshold` at the first look and
  `turn_recheck_threshold` after), or when the words read finished (at least `turn_words_done`)
  and the audio leans that way (over `turn_agree_threshold`): the two agree, so the turn ends
  without waiting for the audio to be sure on its own.
- **wait** otherwise: the next recheck decides, or the longest pause.

Without a words' model (`vad.turn_words = false`, or it failed to load) the words' probability
is None and the rules and the audio alone decide, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.voice.endpoint import reads_unfinished
from config.settings import VadSettings

Decision = Literal["end", "hold", "wait"]
# Words in a reply the words' model does not hold ("Go ahead."): the rules alone may.
SHORT_REPLY = 2


@dataclass(frozen=True)
class Verdict:
    """One pause's decision and what it was made from."""

    decision: Decision
    audio: float
    words: float | None
    # Which signal decided: "audio", "agree" (audio and words together), "rules", "words".
    by: str


def decide(audio: float, text: str, words: float | None, bar: float, vad: VadSettings) -> Verdict:
    """The decision for a pause whose audio scored `audio` against `bar`, whose transcript is
    `text`, and whose words' chance of ending is `words` (None: not judged)."""
    if reads_unfinished(text):
        return Verdict("hold", audio, words, "rules")
    if words is not None and words < vad.turn_words_hold and len(text.split()) > SHORT_REPLY:
        return Verdict("hold", audio, words, "words")
    if audio > bar:
        return Verdict("end", audio, words, "audio")
    if words is not None and words >= vad.turn_words_done and audio > vad.turn_agree_threshold:
        return Verdict("end", audio, words, "agree")
    return Verdict("wait", audio, words, "audio")


def worth_words(audio: float, bar: float, vad: VadSettings, words_on: bool) -> bool:
    """Whether an audio verdict is worth reading the words for: one that could end the turn
    alone, or together with words that read finished."""
    return audio > bar or (words_on and audio > vad.turn_agree_threshold)
