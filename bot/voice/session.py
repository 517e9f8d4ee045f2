"""One voice connection: microphone frames in, the conversation in the middle, speech out.

The connection joins five parts by queues of typed frames, and holds nothing else of them:

- **hearing** (`bot.voice.hearing`) reads the microphone and reports what it found on its
  `events` queue (`_listen` reads them): the user speaking, a likely voice over Annie's
  (pause) or a sure one (barge-in), a pause's words, a finished utterance, the line quiet.
  What flows back to it flows as frames too: `Answering` (an answer in progress, audible
  since when) and every frame audio out sent (the echo reference);
- **the conversation** (`bot.turn.session.Session`, seen as a `Line`) takes commands on one
  inbox (`bot.turn.inbox`: the user's message, a barge-in, the budget reached, the first
  sound out, a gap to say reminders in) and says everything on one outbox (`_converse` reads
  it): each turn's events, closed by `AnswerClosed`, and what comes between turns;
- **what is said** (`bot.voice.saying.Saying`) takes each turn's events from the conversation
  as frames (`Begin`, the events, `AnswerClosed`; `Flush` drops a turn at once) and puts on
  its `frames` queue (`_from_saying` reads them) the pieces to say within the spoken budget
  (`bot.voice.aloud`: code, lists and links stay on the page), each turn's end, and `Enough`
  for the conversation once the budget is reached;
- **audio out** (`bot.voice.audio_out.SpeechOut`: Piper → 48 kHz → the paced track) takes
  those pieces as frames (`Say`, `EndOfAnswer`; `Flush`, `Pause`, `Resume` act at once) and
  reports on its `events` queue (`_from_speech` reads them): a turn's first frame out, what
  was heard of a flushed turn (`Delivered`), a turn's speech over (`Played`);
- **the page's data channel** (`bot.voice.page_channel`) posts frames (`_from_page` reads
  them): typed text takes the same path as a heard turn without the recognizer, and so do the
  page's Approve and Deny buttons (a typed "yes" or "no"); the stop button interrupts.

Events go to the page unchanged. A new turn interrupts the one in flight. On barge-in what
is said and audio out are flushed (silent at its next 20 ms frame); audio out answers with
what was actually heard, which the conversation is told (`Interrupt`); it stops generating,
and cancels a turn that does not wind down in time. Reminders that fall due are said at the
next gap, which `GapWaiter` finds from the changes it is told of. Closing the connection
closes the conversation, which persists it (tier 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from aiortc import MediaStreamTrack

from bot.reminders.gaps import GapWaiter
from bot.turn.events import (
    AnswerClosed,
    ErrorEvent,
    Event,
    LatencyEvent,
    Notice,
    Prepared,
    ReminderEvent,
    RemindersDue,
    StateAnswer,
    TableEvent,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnDone,
    VoiceActivity,
)
from bot.turn.inbox import (
    Amend,
    Enough,
    Interrupt,
    Paused,
    SayReminders,
    Sounding,
    UserActive,
    UserMessage,
)
from bot.voice.audio_out import (
    Delivered,
    FirstFrameOut,
    Flush,
    Pause,
    Played,
    Resume,
    Say,
    SpeechOut,
    UtteranceTiming,
)
from bot.voice.heard import (
    BargeInHeard,
    OutputPause,
    Quiet,
    TurnHeard,
    UserSpeaking,
    WordsSoFar,
)
from bot.voice.hearing import Hearing
from bot.voice.page_channel import PageChannel, StopPressed, Typed
from bot.voice.prepared import PreparedVoice, Preparer
from bot.voice.saying import Begin, Saying
from bot.voice.timing import MetricsSink, TurnClock
from bot.voice.types import (
    AnswerInFlight,
    Answering,
    BargeIn,
    Line,
    VoiceStats,
    new_turn_id,
    wait_or_cancel,
)
from config import Settings
from memory.approvals import Approvals
from models.base import STT, TTS, VAD
from models.end_of_turn import EndOfTurnDetector
from models.end_of_turn_words import EndOfTurnWords

log = logging.getLogger(__name__)

__all__ = ["Line", "MetricsSink", "VoiceSession"]

# How long a new turn or closing waits for the turn in flight to wind down: the
# conversation's own grace (`CANCEL_GRACE_S`) and a little more.
_WIND_DOWN_S = 2.5


class VoiceSession:
    """Glue for one peer connection; the server creates it and calls `close()` on disconnect.

    `tools`: the names a typed message may require its answer to call first."""

    def __init__(
        self,
        line: Line,
        *,
        session_id: str,
        settings: Settings,
        stt: STT,
        tts: TTS,
        vad: VAD,
        metrics: MetricsSink | None = None,
        approvals: Approvals | None = None,
        end_of_turn: EndOfTurnDetector | None = None,
        voice: PreparedVoice | None = None,
        words: EndOfTurnWords | None = None,
        tools: frozenset[str] = frozenset(),
    ) -> None:
        self.line = line
        self.session_id = session_id
        self.settings = settings
        self.stt = stt
        # The voice, with audio prepared ahead (shared by the server's connections).
        self.tts = voice if voice is not None else PreparedVoice(tts)
        self.vad = vad
        self.metrics = metrics
        self.stats = VoiceStats()
        self.page = PageChannel(tools=tools, approvals=approvals, session_id=session_id)
        self.ahead = Preparer(self.tts)
        self._active: AnswerInFlight | None = None
        # Turns whose events are still coming from the conversation, by id.
        self._open: dict[str, AnswerInFlight] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._turn_lock = asyncio.Lock()
        self._closed = False
        self.closed = self.page.closed  # the page's connection is this one
        self.hearing = Hearing(
            settings, stt, vad, stats=self.stats, end_of_turn=end_of_turn, words=words
        )
        # What is said of each answer, and audio out; every frame audio out sends flows back
        # to hearing (the echo reference).
        self.saying = Saying(settings.speech)
        self.speech = SpeechOut(self.tts, echo=self.hearing.sent)
        self.output = self.speech.track  # for the peer connection, and its counters
        self._output_paused = False  # audio out was told to `Pause`, not yet to play on
        self._quiet = True  # as hearing last reported
        # Turns heard and handed on, not yet begun: they count as busy (no reminder first).
        self._starting = 0
        # Reminders: due ones are said at the next gap; utterances heard but not yet
        # answered count as busy, so Annie never starts a reminder before her answer.
        self.gaps = GapWaiter(self.busy, self._start_announcement, self._spawn)
        self.reminders_spoken: list[tuple[str, float]] = []  # (turn id, wall time of 1st frame)
        self._listening = self._spawn(self._listen())
        self._conversing = self._spawn(self._converse())
        self._spawn(self._from_saying())
        self._spawn(self._from_speech())
        self._spawn(self._from_page())

    @property
    def input_dropped_ms(self) -> float:
        """Microphone audio dropped because processing fell behind (should stay 0)."""
        return self.hearing.dropped_ms

    @property
    def active(self) -> AnswerInFlight | None:
        """The turn being answered or spoken, if any."""
        return self._active

    def _set_active(self, turn: AnswerInFlight | None) -> None:
        self._active = turn
        self._tell_hearing()
        self.gaps.changed()

    def _tell_hearing(self) -> None:
        """Hearing learns what Annie is doing as a frame: whether a voice at the microphone
        is the user's over her answer or her own echo depends on it."""
        turn = self._active
        audible = None
        if turn is not None and not turn.interrupted and not turn.played.is_set():
            audible = turn.audible_since
        frame = Answering(turn.clock.turn_id if turn is not None else "", audible)
        self.hearing.answering.put_nowait(frame)

    # --- wiring -----------------------------------------------------------------------------

    def attach_input(self, track: MediaStreamTrack) -> None:
        self.hearing.attach(track)

    def attach_channel(self, channel: Any) -> None:
        self.page.attach(channel, self._spawn)
        self._spawn(self._page_opened())

    async def _page_opened(self) -> None:
        await self.page.opened.wait()
        # A page is here: reminders that fell due while no one was come first.
        self.gaps.request()
        self.gaps.changed()

    def send(self, event: Event | dict[str, Any]) -> None:
        self.page.send(event)

    async def handle_message(self, raw: str) -> None:
        """A message from the page (`PageChannel.handle`)."""
        await self.page.handle(raw)

    # --- audio in ---------------------------------------------------------------------------

    async def _listen(self) -> None:
        """What hearing found, in order. Each is handled at once: a turn is handed to the
        conversation and spoken by a task of its own, so a pause or a barge-in that follows
        is never queued behind it."""
        while True:
            heard = await self.hearing.events.get()
            if isinstance(heard, OutputPause):
                self._pause_output(heard.paused)
            elif isinstance(heard, BargeInHeard):
                self.interrupt(heard.reason)
            elif isinstance(heard, UserSpeaking):
                # Work that needs the model (warm-up, idle-time summaries) stops now, so
                # recognizing the user's words has the cores.
                self.line.send(UserActive())
                if self._active is None:
                    self.send(VoiceActivity("listening"))
            elif isinstance(heard, WordsSoFar):
                if self._active is None:  # not a pause in a barge-in over Annie's answer
                    self.ahead.pause(heard.text)
                    self.line.send(Paused(heard.text))
            elif isinstance(heard, TurnHeard):
                heard.clock.prepared = self.ahead.outcome(heard.text)
                self._starting += 1
                self._spawn(self._start_heard(heard))
            elif isinstance(heard, Quiet):
                self._quiet = heard.quiet
            elif not (isinstance(heard.event, VoiceActivity) and self._active is not None):
                self.send(heard.event)  # an idle state only while nothing is being said
            self.gaps.changed()

    async def _start_heard(self, heard: TurnHeard) -> None:
        try:
            await self.start_turn(heard.text, heard.clock)
        finally:
            self._starting -= 1
            self.gaps.changed()

    # --- turns ------------------------------------------------------------------------------

    async def submit_text(self, text: str, tool_choice: str | None = None) -> None:
        """Typed text from the page: the same loop, without the recognizer. `tool_choice`
        names a tool the answer must call first."""
        clock = TurnClock(turn_id=new_turn_id(), source="text", origin=time.monotonic())
        await self.start_turn(text, clock, tool_choice)

    async def start_turn(self, text: str, clock: TurnClock, tool_choice: str | None = None) -> None:
        """Hand `text` to the conversation as a turn and say its answer. The turn before is
        interrupted, and waited for until the conversation has closed it: turns start one at
        a time, so a burst of typed messages backs up in the page's bounded queue (the newest
        answered), never in the conversation."""
        async with self._turn_lock:
            previous = self._active
            if previous is not None:
                self.interrupt("new turn")
                if previous.task is not None:
                    await wait_or_cancel(previous.task, _WIND_DOWN_S)
            if not self._closed:
                self._begin(text, clock, tool_choice)

    def _begin(self, text: str, clock: TurnClock, tool_choice: str | None) -> None:
        active = AnswerInFlight(clock)
        self._open[clock.turn_id] = active
        self.saying.send(Begin(clock.turn_id, clock.source))
        self._set_active(active)
        self.send(VoiceActivity("thinking", clock.turn_id))
        clock.started = time.monotonic()
        self.line.send(UserMessage(text, clock.turn_id, tool_choice, voiced=True))
        active.task = self._spawn(self._speak(active))

    async def _speak(self, active: AnswerInFlight) -> None:
        """The turn's answer to its last frame; what it was, once it ends."""
        clock = active.clock
        try:
            await active.closed.wait()  # every piece of the turn is on its way to audio out
            await active.played.wait()
            if active.interrupted:
                # Audio out answers every flush with what was heard: wait for it.
                await active.delivered_known.wait()
        except asyncio.CancelledError:
            self.speech.send(Flush(clock.turn_id))
            raise
        finally:
            self._open.pop(clock.turn_id, None)
            self.saying.send(Flush(clock.turn_id))  # a turn cancelled before it closed
            # Idle-time work waited for the first sound; there will be none after this.
            self.line.send(Sounding())
            clock.interrupted = active.interrupted
            if active.interrupted and active.done is not None and not active.done.interrupted:
                # The answer was complete when the user cut in: the conversation keeps what
                # was heard.
                self.line.send(Amend(clock.turn_id, active.delivered, clock.path))
            if self._active is active:
                self._set_active(None)
                # An announcement with nothing to say (another device said it) is no turn.
                said = clock.source != "reminder" or active.pieces
                if said and not self._closed:
                    self.send(VoiceActivity("idle", clock.turn_id))
            self._finish_turn(clock, active.timing)

    # --- what audio out reports ---------------------------------------------------------------

    async def _from_speech(self) -> None:
        """Audio out's reports, in order: a turn's first frame out, what was heard of a
        flushed turn, a turn's speech over."""
        while True:
            frame = await self.speech.events.get()
            turn = self._open.get(frame.turn_id)
            if turn is None:
                continue
            if isinstance(frame, FirstFrameOut):
                self._first_frame(turn, frame.timing)
            elif isinstance(frame, Delivered):
                self._delivered(turn, frame)
            elif isinstance(frame, Played):
                turn.timing = frame.timing
                turn.pieces = frame.pieces
                turn.played.set()

    def _first_frame(self, active: AnswerInFlight, timing: UtteranceTiming) -> None:
        """The answer's first frame is out: the page and hearing learn it, the conversation's
        idle-time work may have the cores, and the turn's latency is known."""
        active.timing = timing
        active.audible_since = timing.first_frame_at
        if self._active is not active:
            return
        self._tell_hearing()
        self.line.send(Sounding())
        clock = active.clock
        if clock.source == "reminder":
            self.reminders_spoken.append((clock.turn_id, time.time()))
            self.send(VoiceActivity("speaking", clock.turn_id))
            return
        clock.fill_from_utterance(timing)
        self.send(VoiceActivity("speaking", clock.turn_id))
        self.send(clock.event())

    # --- what the conversation says -----------------------------------------------------------

    async def _converse(self) -> None:
        """Everything the conversation says, in order: to the page, and what is said of it to
        the turn's utterance."""
        while True:
            event = await self.line.outbox.get()
            try:
                self._said(event)
            except Exception as exc:  # one event must not end the connection's conversation
                log.exception("handling a %s event failed", event.type)
                self.send(ErrorEvent(f"the turn failed: {exc}", where="session"))

    def _said(self, event: Event) -> None:
        if isinstance(event, RemindersDue):
            self.gaps.request()
            return
        if isinstance(event, Prepared):
            self.ahead.prepared(event.text, event.spoken)
            return
        if isinstance(event, AnswerClosed):
            self.saying.send(event)
            return
        if isinstance(event, Notice):
            return
        turn = self._open.get(_turn_of(event))
        if isinstance(event, LatencyEvent):
            if turn is not None:
                # The turn's timing has one owner here: the clock takes the session's own
                # stages, and sends them with the voice stages.
                turn.clock.session_stages.update(event.stages)
                return
        elif turn is not None:
            self._observe(event, turn)
        self.send(event)
        self.saying.send(event)  # it says nothing of a turn not begun there, or flushed

    # --- what is said -------------------------------------------------------------------------

    async def _from_saying(self) -> None:
        """What is said, in order: pieces and each turn's end to audio out (never a piece of a
        turn interrupted since), the budget reached to the conversation."""
        while True:
            frame = await self.saying.frames.get()
            turn = self._open.get(frame.turn_id)
            if isinstance(frame, Enough):
                # Stop generating; the text up to the cut is the finished answer.
                self.line.send(frame)
            elif turn is None:
                continue  # a turn over (or never begun here): nothing of it is said
            elif isinstance(frame, Say):
                if not turn.interrupted:
                    self.speech.send(frame)
            else:  # its end, interrupted or not: audio out closes the utterance
                self.speech.send(frame)
                turn.closed.set()

    def _observe(self, event: Event, active: AnswerInFlight) -> None:
        active.clock.observe(event)
        if isinstance(event, TurnDone) and event.turn_id == active.clock.turn_id:
            active.done = event
            self.page.show_approval()  # the turn may have asked for one, or answered it

    def _finish_turn(self, clock: TurnClock, timing: UtteranceTiming) -> None:
        if clock.source == "reminder":
            return
        clock.fill_from_utterance(timing)
        self.stats.turns.append(clock)
        if not self._closed:  # the whole breakdown, the session's stages included
            self.send(clock.event())
        if self.metrics is not None:
            clock.store(self.metrics, self.session_id)

    def _pause_output(self, paused: bool) -> None:
        """The user's voice is likely (pause) or was a false alarm (play on where it paused)."""
        if paused:
            self.speech.send(Pause())
            self._output_paused = True
            self.stats.barge_pauses += 1
            return
        if self._output_paused:
            self.speech.send(Resume())
            self._output_paused = False
            self.stats.false_alarms += 1

    def interrupt(self, reason: str) -> None:
        """Stop Annie now: audio out is flushed, and answers with what was heard
        (`_delivered`), which the conversation is told."""
        active = self._active
        if active is None or active.interrupted:
            return
        active.interrupted = True
        active.interrupted_at = time.monotonic()
        active.interrupt_reason = reason
        self.saying.send(Flush(active.clock.turn_id))  # nothing more of it is said
        self.speech.send(Flush(active.clock.turn_id))  # silent from the next 20 ms frame
        self._output_paused = False  # a flush plays on: the next answer starts from its start
        self._tell_hearing()
        self.send(VoiceActivity("interrupted", active.clock.turn_id))

    def _delivered(self, active: AnswerInFlight, frame: Delivered) -> None:
        """What the user heard of an interrupted answer: the conversation keeps only that."""
        active.delivered = frame.text
        barge = BargeIn(frame.turn_id, active.interrupted_at, frame.text, frame.frames_dropped)
        self.stats.barge_ins.append(barge)
        reason = active.interrupt_reason
        log.info("interrupted turn %s (%s); heard: %r", frame.turn_id, reason, frame.text)
        self.line.send(Interrupt(frame.turn_id, frame.text))
        active.delivered_known.set()

    # --- the page's frames --------------------------------------------------------------------

    async def _from_page(self) -> None:
        """The page's frames, in order: the stop button acts at once, typed text starts a turn
        (by a task of its own, so a stop that follows is never queued behind it)."""
        while True:
            frame = await self.page.frames.get()
            if isinstance(frame, StopPressed):
                self.interrupt("button")
            elif isinstance(frame, Typed):
                self._spawn(self._typed(frame))

    async def _typed(self, frame: Typed) -> None:
        try:
            await self.submit_text(frame.text, frame.tool)
        except Exception as exc:  # the page channel reports it, as for any message it handles
            frame.begun.set_exception(exc)
        else:
            frame.begun.set_result(None)
        finally:
            if not frame.begun.done():
                frame.begun.cancel()

    # --- reminders --------------------------------------------------------------------------

    def busy(self) -> bool:
        """Not a gap: someone is talking or about to (the user's speech or a candidate start
        of it, an utterance being transcribed, a turn being answered or spoken), or no page
        is listening (a reminder said to a page that has gone would count as heard)."""
        return (
            not self.page.is_open
            or self._active is not None
            or not self._quiet
            or not self.hearing.events.empty()
            or self._starting > 0
        )

    async def _start_announcement(self) -> bool:
        async with self._turn_lock:
            if self._closed or self.busy():
                return self._closed
            self._announce()
            return True

    def _announce(self) -> None:
        clock = TurnClock(turn_id=new_turn_id(), source="reminder", origin=time.monotonic())
        active = AnswerInFlight(clock)
        self._open[clock.turn_id] = active
        self.saying.send(Begin(clock.turn_id, clock.source))
        self._set_active(active)
        self.line.send(SayReminders(clock.turn_id))
        active.task = self._spawn(self._speak(active))

    # --- lifecycle --------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop everything and close the conversation (which persists it). Safe to call
        twice."""
        if self._closed:
            await self.closed.wait()
            return
        self._closed = True
        self.gaps.stopped = True
        try:
            active = self._active
            if active is not None:
                self.interrupt("disconnect")
                if active.task is not None:
                    await wait_or_cancel(active.task, _WIND_DOWN_S)
            await self.hearing.stop()
            for task in list(self._tasks):
                task.cancel()
            for task in list(self._tasks):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            self.speech.close()
            await self.line.close()
        finally:
            self.closed.set()

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _turn_of(event: Event) -> str:
    """The turn an event belongs to ("" for one between turns)."""
    if isinstance(event, _OF_A_TURN):
        return event.turn_id
    return ""


_OF_A_TURN = (
    TextDelta,
    TurnDone,
    StateAnswer,
    ReminderEvent,
    LatencyEvent,
    VoiceActivity,
    ToolCallEvent,
    ToolResultEvent,
    TableEvent,
)
