"""What is said: the stage between the conversation and audio out.

It takes a connection's answers as frames (`send`): `Begin` opens a turn with its budgets, the
conversation's events of that turn follow in order, its `AnswerClosed` ends it, and a `Flush`
(a barge-in, the stop button, a new turn) drops it at once. It puts what comes of them on its
`frames` queue, in order: each piece to say (`Say`, as `bot.voice.aloud` cut it: within the
spoken budget, no code, lists or links read out), `EndOfAnswer` once the turn's last piece is
out, and `Enough` for the conversation once the budget is reached or the answer repeats itself
(generation stops; the text up to the cut is the answer). The connection hands `Say` and
`EndOfAnswer` to audio out and `Enough` to the conversation; the stage holds neither.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.turn.events import AnswerClosed, Event, ReminderEvent, StateAnswer, TextDelta, TurnDone
from bot.turn.inbox import Enough
from bot.voice.aloud import SpokenAnswer, for_turn, spoken_pieces
from bot.voice.audio_out import EndOfAnswer, Flush, Say

if TYPE_CHECKING:
    from config.settings import SpeechSettings


@dataclass(frozen=True)
class Begin:
    """A turn from `source` ("voice", "text", "reminder") is being answered: its events
    follow. A reminder's announcement has no budget: it says what it is given."""

    turn_id: str
    source: str


SayingIn = Begin | Flush | Event
_Said = TextDelta | StateAnswer | TurnDone | ReminderEvent
SayingOut = Say | EndOfAnswer | Enough


@dataclass
class _Turn:
    spoken: SpokenAnswer | None  # None: a reminder's announcement
    enough: bool = False  # the conversation was told `Enough`


class Saying:
    """The what-is-said stage of one connection: `send` frames in, read `frames` out."""

    def __init__(self, settings: SpeechSettings) -> None:
        self.settings = settings
        self.frames: asyncio.Queue[SayingOut] = asyncio.Queue()
        self._turns: dict[str, _Turn] = {}

    def send(self, frame: SayingIn) -> None:
        """The one way in. Events of a turn not begun, or dropped, say nothing."""
        if isinstance(frame, Begin):
            budgeted = None if frame.source == "reminder" else for_turn(self.settings, frame.source)
            self._turns[frame.turn_id] = _Turn(budgeted)
        elif isinstance(frame, Flush):
            self._turns.pop(frame.turn_id, None)
        elif isinstance(frame, AnswerClosed):
            turn = self._turns.pop(frame.turn_id, None)
            if turn is not None and turn.spoken is not None:
                self._say(frame.turn_id, turn.spoken.flush())
            self.frames.put_nowait(EndOfAnswer(frame.turn_id))
        elif isinstance(frame, (TextDelta, StateAnswer, TurnDone, ReminderEvent)):
            turn = self._turns.get(frame.turn_id)
            if turn is not None:
                self._event(frame, turn)

    def _event(self, event: _Said, turn: _Turn) -> None:
        spoken = turn.spoken
        if isinstance(event, ReminderEvent):
            self._say(event.turn_id, spoken_pieces(event.text))
        elif spoken is None:
            return
        elif isinstance(event, TextDelta):
            self._say(event.turn_id, spoken.feed(event.text))
            if spoken.cut is not None and not turn.enough:
                turn.enough = True
                self.frames.put_nowait(Enough(event.turn_id, spoken.cut.kept, spoken.cut.reason))
        elif isinstance(event, StateAnswer) or event.failed:
            # A failed model turn is said aloud too: the user is not left in silence.
            said = event.spoken if isinstance(event, StateAnswer) else ""
            self._say(event.turn_id, spoken.say(said or event.text))

    def _say(self, turn_id: str, pieces: list[str]) -> None:
        for piece in pieces:
            self.frames.put_nowait(Say(turn_id, piece))
