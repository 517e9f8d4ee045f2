"""The listening half of a voice connection: microphone frames in, transcribed turns out.

Frames from `AudioInput` go through the barge-in detector (Annie stops when the user talks
over her) and the endpointer (where an utterance starts and ends). While the user speaks,
partial transcripts go to the page; a finished utterance is transcribed and handed on as a
turn with its clock. An utterance heard while Annie's own voice plays and too short to be a
barge-in is her voice leaking through the microphone, and is dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiortc import MediaStreamTrack

from bot.audio_in import AudioInput
from bot.endpoint import (
    BargeInDetector,
    EndpointConfig,
    Endpointer,
    Phase,
    SpeechDiscarded,
    SpeechEnded,
    SpeechStarted,
    trailing_silence_ms,
)
from bot.events import ErrorEvent, Event, TranscriptEvent, VoiceState
from bot.turn_timing import TurnClock
from bot.voice_types import ActiveTurn, VoiceStats, new_turn_id
from config import Settings
from models.base import STT, VAD, Pcm

log = logging.getLogger(__name__)


class Hearing:
    """Endpointing, barge-in detection and transcription for one connection."""

    def __init__(
        self,
        settings: Settings,
        stt: STT,
        vad: VAD,
        *,
        stats: VoiceStats,
        active: Callable[[], ActiveTurn | None],
        on_turn: Callable[[str, TurnClock], Awaitable[None]],
        on_speech: Callable[[], None],
        interrupt: Callable[[str], object],
        send: Callable[[Event], None],
        spawn: Callable[[Any], asyncio.Task[Any]],
    ) -> None:
        self.settings = settings
        self.stt = stt
        self.vad = vad
        self.stats = stats
        self.endpointer = Endpointer(EndpointConfig.from_settings(settings.vad))
        self.barge = BargeInDetector.from_settings(settings.vad)
        self._active = active
        self._on_turn = on_turn
        self._on_speech = on_speech
        self._interrupt = interrupt
        self._send = send
        self._spawn = spawn
        self._input: AudioInput | None = None
        self._partial_task: asyncio.Task[None] | None = None
        self._last_partial_ms = 0.0
        self._utterance_gen = 0
        # Utterances heard but not yet handed on as a turn (being transcribed).
        self.pending = 0

    @property
    def dropped_ms(self) -> float:
        """Microphone audio dropped because processing fell behind (should stay 0)."""
        return self._input.stats.samples_dropped / 16.0 if self._input is not None else 0.0

    @property
    def quiet(self) -> bool:
        """Nobody is speaking, about to, or waiting for their words to be transcribed."""
        return self.pending == 0 and self.endpointer.phase is Phase.SILENCE

    def attach(self, track: MediaStreamTrack) -> None:
        if self._input is not None:
            self._spawn(self._input.stop())
        self._input = AudioInput(track, self.vad.new_stream(), self._on_vad_frame)
        self._input.start()

    async def stop(self) -> None:
        if self._input is not None:
            await self._input.stop()

    def _on_vad_frame(self, frame: Pcm, probability: float) -> None:
        active = self._active()
        playing = active.utterance.playback_ms() if active and not active.interrupted else None
        if self.barge.push(probability, playing):
            self._interrupt("voice")
        for event in self.endpointer.push(frame, probability):
            if isinstance(event, SpeechStarted):
                self._last_partial_ms = self.endpointer.now_ms
                self._on_speech()
            elif isinstance(event, SpeechEnded):
                self._utterance_gen += 1
                now = time.monotonic()
                active = self._active()
                if active is not None and active.utterance.playback_ms() and not active.interrupted:
                    # Heard while Annie spoke and too short to count as a barge-in: her own
                    # voice leaking through the microphone, most likely.
                    self.stats.echo_utterances_ignored += 1
                    continue
                waited = trailing_silence_ms(event)
                self.pending += 1
                self._spawn(self._heard(self._utterance(event.pcm, now - waited / 1000.0, waited)))
            elif isinstance(event, SpeechDiscarded) and self._active() is None:
                self._send(VoiceState("idle"))
        self._maybe_partial()

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
            self._send(TranscriptEvent(transcript.text.strip(), final=False))

    async def _heard(self, work: Awaitable[None]) -> None:
        try:
            await work
        finally:
            self.pending -= 1

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
            self._send(ErrorEvent(f"speech recognition failed: {exc}", where="stt"))
            return
        clock.stages["stt"] = (time.monotonic() - started) * 1000.0
        text = transcript.text.strip()
        log.info("heard %.2f s of speech as %r", pcm.size / 16000, text)
        if not text:
            if self._active() is None:
                self._send(VoiceState("idle"))
            return
        self._send(TranscriptEvent(text, final=True))
        await self._on_turn(text, clock)
