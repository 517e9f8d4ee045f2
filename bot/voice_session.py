"""One voice connection: microphone frames in, the session loop in the middle, speech out.

Frames from `AudioInput` go through the endpointer (utterances) and the barge-in detector.
A finished utterance is transcribed and handed to the conversation `Session` as a turn; the
events it yields go to the page unchanged, and its streamed text goes through the sentence
chunker into an `Utterance` (Piper → 48 kHz → the paced track). Typed text from the page
takes the same path without the recognizer, and so do the page's Approve and Deny buttons
(`bot.page_channel`: a typed "yes" or "no"). Turns run one at a time: a new one interrupts
the one in flight. On barge-in the queued audio is dropped at once, the session is told what
was actually heard, and its generation is cancelled. Closing the connection closes the
session, which persists it (tier 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from typing import Any

from aiortc import MediaStreamTrack

from bot.audio_in import AudioInput
from bot.audio_out import SpeechTrack, Utterance
from bot.chunker import SentenceChunker
from bot.endpoint import (
    BargeInDetector,
    EndpointConfig,
    Endpointer,
    SpeechDiscarded,
    SpeechEnded,
    SpeechStarted,
    trailing_silence_ms,
)
from bot.events import (
    ErrorEvent,
    Event,
    LatencyEvent,
    StateAnswer,
    TextDelta,
    TranscriptEvent,
    TurnDone,
    VoiceState,
)
from bot.page_channel import PageChannel
from bot.turn_timing import TurnClock
from bot.voice_types import (
    ActiveTurn,
    BargeIn,
    MetricsSink,
    TurnSession,
    VoiceStats,
    await_it,
    cancel_after,
    new_turn_id,
    wait_or_cancel,
)
from config import Settings
from memory.approvals import Approvals
from models.base import STT, TTS, VAD, Pcm

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
    ) -> None:
        self.session = session
        self.session_id = session_id
        self.settings = settings
        self.stt = stt
        self.tts = tts
        self.vad = vad
        self.metrics = metrics
        self.output = SpeechTrack()
        self.endpointer = Endpointer(EndpointConfig.from_settings(settings.vad))
        self.barge = BargeInDetector.from_settings(settings.vad)
        self.stats = VoiceStats()
        self.page = PageChannel(
            on_text=self.submit_text,
            on_interrupt=self.interrupt,
            approvals=approvals,
            session_id=session_id,
        )
        self.on_event = self.page.listeners
        self._input: AudioInput | None = None
        self._active: ActiveTurn | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._turn_lock = asyncio.Lock()
        self._partial_task: asyncio.Task[None] | None = None
        self._last_partial_ms = 0.0
        self._utterance_gen = 0
        self._closed = False
        self.closed = asyncio.Event()

    @property
    def input_dropped_ms(self) -> float:
        """Microphone audio dropped because processing fell behind (should stay 0)."""
        return self._input.stats.samples_dropped / 16.0 if self._input is not None else 0.0

    @property
    def active(self) -> ActiveTurn | None:
        """The turn being answered or spoken, if any."""
        return self._active

    # --- wiring -----------------------------------------------------------------------------

    def attach_input(self, track: MediaStreamTrack) -> None:
        if self._input is not None:
            self._spawn(self._input.stop())
        self._input = AudioInput(track, self.vad.new_stream(), self._on_vad_frame)
        self._input.start()

    def attach_channel(self, channel: Any) -> None:
        self.page.attach(channel, self._spawn)

    def send(self, event: Event | dict[str, Any]) -> None:
        self.page.send(event)

    async def handle_message(self, raw: str) -> None:
        """A message from the page (`PageChannel.handle`)."""
        await self.page.handle(raw)

    # --- audio in ---------------------------------------------------------------------------

    def _on_vad_frame(self, frame: Pcm, probability: float) -> None:
        active = self._active
        playing = active.utterance.playback_ms() if active and not active.interrupted else None
        if self.barge.push(probability, playing):
            self.interrupt("voice")
        for event in self.endpointer.push(frame, probability):
            if isinstance(event, SpeechStarted):
                self._last_partial_ms = self.endpointer.now_ms
                self._user_activity()
                if self._active is None:
                    self.send(VoiceState("listening"))
            elif isinstance(event, SpeechEnded):
                self._utterance_gen += 1
                now = time.monotonic()
                still_playing = self._active is not None and self._active.utterance.playback_ms()
                if still_playing and not self._active.interrupted:  # type: ignore[union-attr]
                    # Heard while Annie spoke and too short to count as a barge-in: her own
                    # voice leaking through the microphone, most likely.
                    self.stats.echo_utterances_ignored += 1
                    continue
                waited = trailing_silence_ms(event)
                self._spawn(self._utterance(event.pcm, now - waited / 1000.0, waited))
            elif isinstance(event, SpeechDiscarded) and self._active is None:
                self.send(VoiceState("idle"))
        self._maybe_partial()

    def _user_activity(self) -> None:
        """The user started speaking: idle-time work that needs the model should yield now."""
        hooks = getattr(self.session, "hooks", None)
        notify = getattr(hooks, "on_user_activity", None)
        if callable(notify):
            notify()

    def _maybe_partial(self) -> None:
        interval = self.settings.vad.partial_transcript_ms
        if interval <= 0 or not self.endpointer.in_speech:
            return
        # A pause may be the end of the utterance: a partial started now would hold the
        # recognizer just when the final transcription needs it.
        if self.endpointer.silence_run_ms > 0:
            return
        if self.endpointer.now_ms - self._last_partial_ms < interval:
            return
        if self._partial_task is not None and not self._partial_task.done():
            return
        self._last_partial_ms = self.endpointer.now_ms
        self._partial_task = self._spawn(
            self._partial(self.endpointer.audio_so_far(), self._utterance_gen)
        )

    async def _partial(self, pcm: Pcm, generation: int) -> None:
        transcript = await self.stt.transcribe(pcm)
        if generation == self._utterance_gen and transcript.text.strip():
            self.send(TranscriptEvent(transcript.text.strip(), final=False))

    async def _utterance(self, pcm: Pcm, speech_end: float, endpoint_ms: float) -> None:
        clock = TurnClock(turn_id=new_turn_id(), source="voice", origin=speech_end)
        clock.stages["endpoint"] = endpoint_ms
        # A partial transcription still running would only slow the final one down.
        if self._partial_task is not None and not self._partial_task.done():
            self._partial_task.cancel()
        started = time.monotonic()
        try:
            transcript = await self.stt.transcribe(pcm)
        except Exception as exc:
            log.exception("transcription failed")
            self.send(ErrorEvent(f"speech recognition failed: {exc}", where="stt"))
            return
        clock.stages["stt"] = (time.monotonic() - started) * 1000.0
        text = transcript.text.strip()
        log.info("heard %.2f s of speech as %r", pcm.size / 16000, text)
        if not text:
            if self._active is None:
                self.send(VoiceState("idle"))
            return
        self.send(TranscriptEvent(text, final=True))
        await self.start_turn(text, clock)

    # --- turns ------------------------------------------------------------------------------

    async def submit_text(self, text: str) -> None:
        """Typed text from the page: the same loop, without the recognizer."""
        clock = TurnClock(turn_id=new_turn_id(), source="text", origin=time.monotonic())
        await self.start_turn(text, clock)

    async def start_turn(self, text: str, clock: TurnClock) -> None:
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
            self._active = active
            active.task = self._spawn(self._run_turn(text, active))

    async def _run_turn(self, text: str, active: ActiveTurn) -> None:
        clock = active.clock
        utterance = active.utterance
        chunker = SentenceChunker()
        self.send(VoiceState("thinking", clock.turn_id))
        clock.started = time.monotonic()
        try:
            async for event in self.session.handle_text(text, turn_id=clock.turn_id):
                self._observe(event, active)
                self.send(event)
                if active.interrupted:
                    continue
                if isinstance(event, TextDelta):
                    for piece in chunker.feed(event.text):
                        utterance.add(piece)
                elif isinstance(event, StateAnswer):
                    for piece in chunker.feed(event.text + " "):
                        utterance.add(piece)
            if not active.interrupted:
                for piece in chunker.flush():
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
                self._active = None
                if not self._closed:
                    self.send(VoiceState("idle", clock.turn_id))
            self._finish_turn(clock, utterance)

    def _observe(self, event: Event, active: ActiveTurn) -> None:
        clock = active.clock
        now = time.monotonic()
        if isinstance(event, TextDelta) and clock.first_answer is None:
            clock.first_answer = now
            clock.path = "model"
            clock.stages["llm_first_token"] = (now - clock.started) * 1000.0
        elif isinstance(event, StateAnswer) and clock.first_answer is None:
            clock.first_answer = now
            clock.path = "state"
            clock.stages["state"] = float(event.latency_ms)
        elif isinstance(event, TurnDone) and event.turn_id == clock.turn_id:
            clock.path = event.path or clock.path
            active.done = event
            self.page.show_approval()  # the turn may have asked for one, or answered it

    def _on_first_frame(self, utterance: Utterance) -> None:
        active = self._active
        if active is None or active.utterance is not utterance:
            return
        clock = active.clock
        clock.fill_from_utterance(utterance.timing)
        self.send(VoiceState("speaking", clock.turn_id))
        self.send(LatencyEvent(clock.turn_id, clock.public_stages()))
        clock.latency_sent = True

    def _finish_turn(self, clock: TurnClock, utterance: Utterance) -> None:
        clock.fill_from_utterance(utterance.timing)
        self.stats.turns.append(clock)
        if not clock.latency_sent and not self._closed:
            self.send(LatencyEvent(clock.turn_id, clock.public_stages()))
        if self.metrics is not None:
            try:
                self.metrics.record(
                    self.session_id, clock.turn_id, clock.stored_stages(), clock.stored_path
                )
            except Exception:
                log.exception("could not store turn metrics")

    def _amend(self, active: ActiveTurn) -> None:
        """The answer was complete when the user cut in: the session keeps what was heard."""
        clock = active.clock
        if self.session.amend_interrupted(clock.turn_id, active.delivered):
            self.send(TurnDone(clock.turn_id, active.delivered, clock.path, interrupted=True))

    def interrupt(self, reason: str) -> BargeIn | None:
        """Stop Annie now: drop queued audio, cancel generation, keep only what was heard."""
        active = self._active
        if active is None or active.interrupted:
            return None
        at = time.monotonic()
        dropped_before = self.output.frames_dropped
        active.interrupted = True
        delivered = active.utterance.stop()
        active.delivered = delivered
        barge = BargeIn(
            active.clock.turn_id, at, delivered, self.output.frames_dropped - dropped_before
        )
        self.stats.barge_ins.append(barge)
        log.info("interrupted turn %s (%s); heard: %r", barge.turn_id, reason, delivered)
        self.send(VoiceState("interrupted", active.clock.turn_id))
        result = self.session.cancel(delivered)
        if inspect.isawaitable(result):
            self._spawn(await_it(result))
        if active.task is not None:
            self._spawn(cancel_after(active.task, _CANCEL_GRACE_S))
        return barge

    # --- lifecycle --------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop everything and close the session (which persists it). Safe to call twice."""
        if self._closed:
            await self.closed.wait()
            return
        self._closed = True
        try:
            active = self._active
            if active is not None:
                self.interrupt("disconnect")
                if active.task is not None:
                    await wait_or_cancel(active.task, _CANCEL_GRACE_S)
            if self._input is not None:
                await self._input.stop()
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
