"""One voice connection: microphone frames in, the session loop in the middle, speech out.

Microphone frames go to `Hearing` (endpointing, barge-in, transcription), which reports what
it heard as typed events on its queue (`_listen` reads them). A finished utterance's
transcript is handed to the conversation `Session` as a turn; the
events it yields go to the page unchanged, and its streamed text goes through `bot.voice.spoken`
(the spoken budget; code, lists and links stay on the page) into an `Utterance` (Piper →
48 kHz → the paced track); at the budget the session is told to stop generating. Typed text
from the page takes the same path without the recognizer, and so do the page's Approve and
Deny buttons (`bot.voice.page_channel`: a typed "yes" or "no"). Turns run one at a time: a new
one interrupts the one in flight. On barge-in the queued audio is dropped at once, the
session is told what was actually heard, and its generation is cancelled. Closing the
connection closes the session, which persists it (tier 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from aiortc import MediaStreamTrack

from bot.turn.events import (
    ErrorEvent,
    Event,
    LatencyEvent,
    StateAnswer,
    TextDelta,
    TurnDone,
    VoiceState,
)
from bot.voice.audio_out import SpeechTrack, Utterance
from bot.voice.heard import (
    BargeInHeard,
    OutputPause,
    TurnHeard,
    UserSpeaking,
    WordsSoFar,
)
from bot.voice.hearing import Hearing
from bot.voice.page_channel import PageChannel
from bot.voice.prepared import PreparedVoice, Preparer
from bot.voice.reminders import GapWaiter, say_reminders
from bot.voice.spoken import for_turn
from bot.voice.timing import MetricsSink, TurnClock
from bot.voice.types import (
    ActiveTurn,
    BargeIn,
    TurnSession,
    VoiceStats,
    cancel_after,
    new_turn_id,
    wait_or_cancel,
)
from config import Settings
from memory.approvals import Approvals
from models.base import STT, TTS, VAD
from models.turn import TurnDetector
from models.words_turn import WordsTurn

log = logging.getLogger(__name__)

# After a barge-in the session gets this long to wind its turn down before it is cancelled.
_CANCEL_GRACE_S = 2.0


class VoiceSession:
    """Glue for one peer connection; the server creates it and calls `close()` on disconnect."""

    def __init__(
        self,
        session: TurnSession,
        *,
        session_id: str,
        settings: Settings,
        stt: STT,
        tts: TTS,
        vad: VAD,
        metrics: MetricsSink | None = None,
        approvals: Approvals | None = None,
        turn: TurnDetector | None = None,
        voice: PreparedVoice | None = None,
        words: WordsTurn | None = None,
    ) -> None:
        self.session = session
        self.session_id = session_id
        self.settings = settings
        self.stt = stt
        # The voice, with audio prepared ahead (shared by the server's connections).
        self.tts = voice if voice is not None else PreparedVoice(tts)
        self.vad = vad
        self.metrics = metrics
        self.output = SpeechTrack()
        self.stats = VoiceStats()
        self.page = PageChannel(
            on_text=self.submit_text,
            tools=self._tool_names,
            on_interrupt=self.interrupt,
            approvals=approvals,
            session_id=session_id,
        )
        self.on_event = self.page.listeners
        self.ahead = Preparer(session, self.tts)
        self._active: ActiveTurn | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._turn_lock = asyncio.Lock()
        self._closed = False
        self.closed = asyncio.Event()
        self.hearing = Hearing(settings, stt, vad, stats=self.stats, turn=turn, words=words)
        self._listening = self._spawn(self._listen())
        # Turns heard and handed on, not yet begun: they count as busy (no reminder first).
        self._starting = 0
        self.output.on_sent = self.hearing.echo.sent
        # Reminders: due ones are said at the next gap; utterances heard but not yet
        # answered count as busy, so Annie never starts a reminder before her answer.
        self.gaps = GapWaiter(self.busy, self._start_announcement, self._spawn)
        self.reminders_spoken: list[tuple[str, float]] = []  # (turn id, wall time of 1st frame)
        session.attach(self)

    @property
    def input_dropped_ms(self) -> float:
        """Microphone audio dropped because processing fell behind (should stay 0)."""
        return self.hearing.dropped_ms

    @property
    def active(self) -> ActiveTurn | None:
        """The turn being answered or spoken, if any."""
        return self._active

    def _set_active(self, turn: ActiveTurn | None) -> None:
        # Hearing reads it: whether Annie is speaking decides what a voice at the mic is.
        self._active = self.hearing.answer = turn

    # --- wiring -----------------------------------------------------------------------------

    def attach_input(self, track: MediaStreamTrack) -> None:
        self.hearing.attach(track)

    def attach_channel(self, channel: Any) -> None:
        self.page.attach(channel, self._spawn)
        self.reminders_due()  # a page is here: reminders that waited come first

    def send(self, event: Event | dict[str, Any]) -> None:
        self.page.send(event)

    async def handle_message(self, raw: str) -> None:
        """A message from the page (`PageChannel.handle`)."""
        await self.page.handle(raw)

    # --- audio in ---------------------------------------------------------------------------

    async def _listen(self) -> None:
        """What hearing found, in order. Each is handled at once; a heard turn starts as a task
        of its own, so a pause or a barge-in that follows is never queued behind it."""
        while True:
            heard = await self.hearing.events.get()
            if isinstance(heard, OutputPause):
                self._pause_output(heard.paused)
            elif isinstance(heard, BargeInHeard):
                self.interrupt(heard.reason)
            elif isinstance(heard, UserSpeaking):
                # Work that needs the model (warm-up, idle-time summaries) stops now, so
                # recognizing the user's words has the cores.
                self.session.yield_model()
                if self._active is None:
                    self.send(VoiceState("listening"))
            elif isinstance(heard, WordsSoFar):
                if self._active is None:  # not a pause in a barge-in over Annie's answer
                    self._spawn(self.ahead.pause(heard.text))
            elif isinstance(heard, TurnHeard):
                heard.clock.prepared = self.ahead.outcome(heard.text)
                self._starting += 1
                self._spawn(self._start_heard(heard))
            elif not (isinstance(heard.event, VoiceState) and self._active is not None):
                self.send(heard.event)  # an idle state only while nothing is being said

    async def _start_heard(self, heard: TurnHeard) -> None:
        try:
            await self.start_turn(heard.text, heard.clock)
        finally:
            self._starting -= 1

    # --- turns ------------------------------------------------------------------------------

    async def submit_text(self, text: str, tool_choice: str | None = None) -> None:
        """Typed text from the page: the same loop, without the recognizer. `tool_choice`
        names a tool the answer must call first."""
        clock = TurnClock(turn_id=new_turn_id(), source="text", origin=time.monotonic())
        await self.start_turn(text, clock, tool_choice)

    def _tool_names(self) -> set[str]:
        return set(self.session.tool_names())

    async def start_turn(self, text: str, clock: TurnClock, tool_choice: str | None = None) -> None:
        async with self._turn_lock:
            previous = self._active
            if previous is not None:
                self.interrupt("new turn")
                if previous.task is not None:
                    await wait_or_cancel(previous.task, _CANCEL_GRACE_S)
            if self._closed:
                return
            utterance = Utterance(clock.turn_id, self.tts, self.output, self._on_first_frame)
            active = ActiveTurn(clock, utterance)
            self._set_active(active)
            active.task = self._spawn(self._run_turn(text, active, tool_choice))

    async def _run_turn(self, text: str, active: ActiveTurn, tool_choice: str | None) -> None:
        clock = active.clock
        utterance = active.utterance
        # What is said: the spoken budget, no code or lists read out; the page gets it all.
        spoken = for_turn(self.settings.speech, clock.source)
        stopped = False
        self.send(VoiceState("thinking", clock.turn_id))
        clock.started = time.monotonic()
        try:
            async for event in self.session.handle_text(
                text, turn_id=clock.turn_id, tool_choice=tool_choice
            ):
                if isinstance(event, LatencyEvent):
                    # The turn's timing has one owner here: the clock takes the session's
                    # own stages, and sends them with the voice stages.
                    clock.session_stages.update(event.stages)
                    continue
                self._observe(event, active)
                self.send(event)
                if active.interrupted:
                    continue
                if isinstance(event, TextDelta):
                    for piece in spoken.feed(event.text):
                        utterance.add(piece)
                    if spoken.cut is not None and not stopped:
                        # The budget is reached (or it repeats itself): stop generating; the
                        # text up to the cut is the finished answer.
                        stopped = True
                        self.session.stop(spoken.cut.kept, spoken.cut.reason)
                elif isinstance(event, StateAnswer) or (
                    isinstance(event, TurnDone) and event.failed
                ):
                    # A failed model turn is said aloud too: the user is not left in silence.
                    said = event.spoken if isinstance(event, StateAnswer) else ""
                    for piece in spoken.say(said or event.text):
                        utterance.add(piece)
            if not active.interrupted:
                for piece in spoken.flush():
                    utterance.add(piece)
            utterance.close()
            await utterance.done()
        except asyncio.CancelledError:
            utterance.stop()
            raise
        except Exception as exc:
            log.exception("turn %s failed", clock.turn_id)
            utterance.stop()
            self.send(ErrorEvent(f"the turn failed: {exc}", where="session"))
        finally:
            clock.interrupted = active.interrupted
            if active.interrupted and active.done is not None and not active.done.interrupted:
                self._amend(active)
            if self._active is active:
                self._set_active(None)
                if not self._closed:
                    self.send(VoiceState("idle", clock.turn_id))
            self._finish_turn(clock, utterance)

    async def answer_begun(self) -> None:
        """Until the answer's first sound has gone out (or it was cut): idle-time model work
        would take the cores Piper needs for the first sentence, the one the user waits for;
        the later sentences are synthesized while it plays, far faster than real time."""
        active = self._active
        if active is not None:
            await active.utterance.begun()

    def _observe(self, event: Event, active: ActiveTurn) -> None:
        active.clock.observe(event)
        if isinstance(event, TurnDone) and event.turn_id == active.clock.turn_id:
            active.done = event
            self.page.show_approval()  # the turn may have asked for one, or answered it

    def _on_first_frame(self, utterance: Utterance) -> None:
        active = self._active
        if active is None or active.utterance is not utterance:
            return
        clock = active.clock
        clock.fill_from_utterance(utterance.timing)
        self.send(VoiceState("speaking", clock.turn_id))
        self.send(clock.event())

    def _finish_turn(self, clock: TurnClock, utterance: Utterance) -> None:
        clock.fill_from_utterance(utterance.timing)
        self.stats.turns.append(clock)
        if not self._closed:  # the whole breakdown, the session's stages included
            self.send(clock.event())
        if self.metrics is not None:
            clock.store(self.metrics, self.session_id)

    def _amend(self, active: ActiveTurn) -> None:
        """The answer was complete when the user cut in: the session keeps what was heard."""
        clock = active.clock
        if self.session.amend_interrupted(clock.turn_id, active.delivered):
            self.send(TurnDone(clock.turn_id, active.delivered, clock.path, interrupted=True))

    def _pause_output(self, paused: bool) -> None:
        """The user's voice is likely (pause) or was a false alarm (play on where it paused)."""
        if paused:
            self.output.pause()
            self.stats.barge_pauses += 1
            return
        if self.output.paused:
            self.output.resume()
            self.stats.false_alarms += 1

    def interrupt(self, reason: str) -> BargeIn | None:
        """Stop Annie now: drop queued audio, cancel generation, keep only what was heard."""
        active = self._active
        if active is None or active.interrupted:
            return None
        at = time.monotonic()
        dropped_before = self.output.frames_dropped
        active.interrupted = True
        delivered = active.utterance.stop()
        self.output.resume()  # the queue is dropped: the next answer plays from its start
        active.delivered = delivered
        barge = BargeIn(
            active.clock.turn_id, at, delivered, self.output.frames_dropped - dropped_before
        )
        self.stats.barge_ins.append(barge)
        log.info("interrupted turn %s (%s); heard: %r", barge.turn_id, reason, delivered)
        self.send(VoiceState("interrupted", active.clock.turn_id))
        self.session.cancel(delivered)
        if active.task is not None:
            self._spawn(cancel_after(active.task, _CANCEL_GRACE_S))
        return barge

    # --- reminders --------------------------------------------------------------------------

    def reminders_due(self) -> None:
        """Reminders fell due: say them at the next gap (`bot.voice.reminders`)."""
        if not self._closed:
            self.gaps.request()

    def busy(self) -> bool:
        """Not a gap: someone is talking or about to (the user's speech or a candidate start
        of it, an utterance being transcribed, a turn being answered or spoken), or no page
        is listening (a reminder said to a page that has gone would count as heard)."""
        return (
            not self.page.is_open
            or self._active is not None
            or not self.hearing.quiet
            or not self.hearing.events.empty()
            or self._starting > 0
        )

    async def _start_announcement(self) -> bool:
        async with self._turn_lock:
            if self._closed or self.busy():
                return self._closed
            clock = TurnClock(turn_id=new_turn_id(), source="reminder", origin=time.monotonic())
            utterance = Utterance(clock.turn_id, self.tts, self.output, self._on_reminder_frame)
            active = ActiveTurn(clock, utterance)
            self._set_active(active)
            active.task = self._spawn(self._run_announcement(active))
            return True

    async def _run_announcement(self, active: ActiveTurn) -> None:
        try:
            await say_reminders(self.session, active, self.send)
        finally:
            if self._active is active:
                self._set_active(None)
                if active.utterance.pieces and not self._closed:  # said (or cut off)
                    self.send(VoiceState("idle", active.clock.turn_id))

    def _on_reminder_frame(self, utterance: Utterance) -> None:
        self.reminders_spoken.append((utterance.turn_id, time.time()))
        active = self._active
        if active is not None and active.utterance is utterance:
            self.send(VoiceState("speaking", utterance.turn_id))

    # --- lifecycle --------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop everything and close the session (which persists it). Safe to call twice."""
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
                    await wait_or_cancel(active.task, _CANCEL_GRACE_S)
            await self.hearing.stop()
            for task in list(self._tasks):
                task.cancel()
            for task in list(self._tasks):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            self.output.stop()
            await self.session.close()
        finally:
            self.closed.set()

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
