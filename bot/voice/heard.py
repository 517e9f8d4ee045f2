"""What hearing reports to the voice session, one typed event at a time (`Hearing.events`).

`UserSpeaking` (background model work stops), `OutputPause` (pause Annie or play on),
`BargeInHeard` (stop her for good), `WordsSoFar` (a pause's words, to prepare an answer for),
`TurnHeard` (a finished utterance's words and clock), `Quiet` (whether anyone is speaking or
about to, each time that changes) and `ToPage` (captions, errors, idle).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.turn.events import Event
from bot.voice.timing import TurnClock


@dataclass(frozen=True)
class UserSpeaking:
    """The user started to speak: background model work stops, the page shows it."""


@dataclass(frozen=True)
class OutputPause:
    """A likely voice over Annie's (pause at once), or a false alarm (play on)."""

    paused: bool


@dataclass(frozen=True)
class BargeInHeard:
    """The user is talking over Annie for sure: stop her for good."""

    reason: str = "voice"


@dataclass(frozen=True)
class TurnHeard:
    """A finished utterance's words, with the clock its turn is timed by."""

    text: str
    clock: TurnClock


@dataclass(frozen=True)
class WordsSoFar:
    """The user paused, and the words up to the pause are transcribed while the turn has not
    ended: work for an answer to them can start (`Session.prepare`), to be used if the turn
    ends with these words and dropped unheard if not."""

    text: str


@dataclass(frozen=True)
class Quiet:
    """The line became quiet (nobody speaking, about to, or waiting for their words to be
    transcribed), or stopped being so."""

    quiet: bool


@dataclass(frozen=True)
class ToPage:
    """Something the page shows: a caption, a recognition error, the idle state."""

    event: Event


Heard = UserSpeaking | OutputPause | BargeInHeard | TurnHeard | WordsSoFar | Quiet | ToPage
