"""The listening half of a voice connection: microphone frames in, transcribed turns out.

Frames from `AudioInput` go through the barge-in detector (Annie's audio pauses at the first
likely sign of the user talking over her, stops for good once it is sure, and plays on if it
was a cough) and the endpointer (where an utterance starts and ends). While the user speaks,
partial transcripts go to the page; a finished utterance is transcribed and handed on as a
turn with its clock. An utterance heard while Annie's own voice plays and too short to be a
barge-in is her voice leaking through the microphone, and is dropped; a voice whose loudness
follows what she sent is her echo (`bot.voice.echo`), and pauses or stops nothing.

With an end-of-turn detector (`vad.turn_detection = "semantic"`), a short pause asks the detector
whether the speaker has finished, and again as the pause grows, and the pause's longest
allowed length ends the turn regardless. Whisper starts on the utterance as soon as the pause
begins, beside the detector (speculative transcription): if the speaker goes on, that
transcript is dropped; if the turn ends, it is the transcript, so it is ready when the turn
ends rather than a transcription later. A verdict is taken once that transcript is in, from the
audio and the words together (`bot.voice.end_of_turn`): words that want more ("Set a
reminder for.", "Remind me to call") hold the pause open, since a sentence paused at a comma
can sound finished to a detector that hears only prosody, and words that read finished end the
turn on a leaning audio verdict. The answer needs the transcript anyway, so the check costs
only the words' model's one pass. Each turn says which rule ended it
(`TranscriptEvent.ended_by`: "detector", "detector+words", "silence limit", ...).

What Hearing finds goes out as typed events on one queue (`events`), which the voice session
reads: `UserSpeaking`, `OutputPause` (pause or play on), `BargeInHeard` (stop Annie for good),
`TurnHeard` (the words and the turn's clock) and `ToPage` (captions, errors, the idle state).
Hearing calls nothing of the voice session and holds nothing of it. What flows back to it
flows as frames on two queues it reads before each microphone frame: `answering` (an
`Answering` frame whenever an answer begins, first sounds, or ends: whether Annie is speaking
decides what a voice at the microphone is) and `sent` (every frame audio out sent, with its
time: the echo reference).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass, replace
from typing import Any

from aiortc import MediaStreamTrack

from bot.turn.events import ErrorEvent, Event, TranscriptEvent, VoiceActivity
from bot.voice.audio_convert import Int16
from bot.voice.audio_in import AudioInput
from bot.voice.barge_in import Barge, BargeInDetector
from bot.voice.echo import EchoCheck
from bot.voice.end_of_turn import Verdict, decide, worth_words
from bot.voice.endpoint import (
    FRAME_MS,
    EndpointConfig,
    Endpointer,
    Phase,
    SpeechDiscarded,
    SpeechEnded,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
    reads_unfinished,
    trailing_silence_ms,
)
from bot.voice.heard import (
    BargeInHeard,
    Heard,
    OutputPause,
    Quiet,
    ToPage,
    TurnHeard,
    UserSpeaking,
    WordsSoFar,
)
from bot.voice.timing import TurnClock
from bot.voice.types import Answering, VoiceStats, new_turn_id
from config import Settings
from models.base import STT, VAD, Pcm, Transcript
from models.end_of_turn import EndOfTurnDetector
from models.end_of_turn_words import EndOfTurnWords

log = logging.getLogger(__name__)

# Sent frames kept for the echo check while no microphone frame reads them: 2 s of audio.
SENT_KEPT = 100


@dataclass
class Speculation:
    """A transcript started when a pause began: `key` is (utterance, pause)."""

    key: tuple[int, int]
    task: asyncio.Task[Transcript]
    started: float


class Hearing:
    """Endpointing, barge-in detection and transcription for one connection."""

    def __init__(
        self,
        settings: Settings,
        stt: STT,
        vad: VAD,
        *,
        stats: VoiceStats,
        end_of_turn: EndOfTurnDetector | None = None,
        words: EndOfTurnWords | None = None,
    ) -> None:
        self.settings = settings
        self.stt = stt
        self.vad = vad
        self.stats = stats
        # Semantic endpointing needs the detector; without one the fixed window stands.
        self.end_of_turn = end_of_turn if settings.vad.turn_detection == "semantic" else None
        semantic = self.end_of_turn is not None
        # The words' own end-of-turn signal beside the detector (`bot.voice.end_of_turn`).
        self.words = words if semantic and settings.vad.turn_words else None
        self.endpointer = Endpointer(EndpointConfig.from_settings(settings.vad, semantic=semantic))
        self.barge = BargeInDetector.from_settings(settings.vad)
        # What Annie sent, to tell her echo from the user (fed from `sent`).
        self.echo = EchoCheck(threshold=settings.vad.barge_in_echo_db)
        self._mic_ms = 0.0
        self.events: asyncio.Queue[Heard] = asyncio.Queue()
        # Frames in: the answer's state, and the frames audio out sent (time, samples; None
        # for silence), bounded to the echo check's reach when no microphone reads them.
        self.answering: asyncio.Queue[Answering] = asyncio.Queue()
        self.sent: asyncio.Queue[tuple[float, Int16 | None]] = asyncio.Queue(SENT_KEPT)
        self._answer = Answering()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._input: AudioInput | None = None
        self._partial_task: asyncio.Task[None] | None = None
        self._last_partial_ms = 0.0
        self._utterance_gen = 0
        self._speculation: Speculation | None = None
        self._judging: asyncio.Task[None] | None = None
        # A pause whose speculative transcript reads mid-sentence: only its length ends it.
        self._held: tuple[int, int] | None = None
        # The pause the detector called finished (its turn ends as its transcript is in), and
        # the stream time of that verdict.
        self._finished: tuple[int, int] | None = None
        self._verdict_ms = 0.0
        # Utterances heard but not yet handed on as a turn (being transcribed).
        self.pending = 0
        self._was_quiet = True  # as last reported (`Quiet`)

    @property
    def dropped_ms(self) -> float:
        """Microphone audio dropped because processing fell behind (should stay 0)."""
        return self._input.stats.samples_dropped / 16.0 if self._input is not None else 0.0

    @property
    def quiet(self) -> bool:
        """Nobody is speaking, about to, or waiting for their words to be transcribed."""
        return self.pending == 0 and self.endpointer.phase is Phase.SILENCE

    def _report_quiet(self) -> None:
        if self.quiet != self._was_quiet:
            self._was_quiet = self.quiet
            self._emit(Quiet(self._was_quiet))

    def attach(self, track: MediaStreamTrack) -> None:
        if self._input is not None:
            self._spawn(self._input.stop())
        self._input = AudioInput(track, self.vad.new_stream(), self._on_vad_frame)
        self._input.start()

    async def stop(self) -> None:
        """Stop listening, and every transcription and judgement still running."""
        if self._input is not None:
            await self._input.stop()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _emit(self, event: Heard) -> None:
        self.events.put_nowait(event)

    def _send(self, event: Event) -> None:
        self.events.put_nowait(ToPage(event))

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _take_frames(self) -> None:
        """What flowed back since the last microphone frame: the answer's state, and the
        frames sent (the echo reference), in order."""
        while not self.answering.empty():
            self._answer = self.answering.get_nowait()
        while not self.sent.empty():
            at, samples = self.sent.get_nowait()
            self.echo.sent(samples, at)

    def _on_vad_frame(self, frame: Pcm, probability: float) -> None:
        self._take_frames()
        playing = self._answer.playback_ms(time.monotonic())
        self._mic_ms += FRAME_MS
        self.echo.heard(frame, self._mic_ms)
        voice = probability
        echo = playing is not None and voice >= self.barge.threshold and self._echo()
        if echo:
            voice = 0.0  # her own voice coming back: not the user's
            self.stats.echo_frames_ignored += 1
        barge = self.barge.push(voice, playing, judged=self._judged(playing), echo=echo)
        if barge is not Barge.NONE and playing is not None:
            # A barge-in's timing, when a bench figure needs explaining.
            log.info(
                "barge-in: %s, %.0f ms into the answer (%d echo frames ignored so far; "
                "echo fit %.1f dB, path %s)",
                barge.value,
                playing,
                self.stats.echo_frames_ignored,
                self.echo.last_score,
                self.echo.path,
            )
        if barge is Barge.PAUSE:
            self._emit(OutputPause(True))  # likely the user: silent at once, within ~100 ms
        elif barge is Barge.RESUME:
            self._emit(OutputPause(False))
        elif barge is Barge.STOP:
            self._emit(BargeInHeard("voice"))
        for event in self.endpointer.push(frame, probability):
            if isinstance(event, SpeechStarted):
                self._last_partial_ms = self.endpointer.now_ms
                self._emit(UserSpeaking())
            elif isinstance(event, SpeechEnded):
                self._ended(event)
            elif isinstance(event, SpeechPaused):
                self._paused(event)
            elif isinstance(event, SpeechResumed):
                self._resumed()
            elif isinstance(event, SpeechDiscarded) and not self._answer.turn_id:
                self._send(VoiceActivity("idle"))
        self._report_quiet()
        self._maybe_partial()

    def _echo(self) -> bool:
        return self.settings.vad.barge_in_echo_db > 0 and self.echo.is_echo()

    def _judged(self, playing: float | None) -> bool:
        """Whether a voice heard now can be told from her echo: the check is off, has learned
        the echo's path, or has heard her answer long enough to have fitted any delay."""
        return (
            self.settings.vad.barge_in_echo_db <= 0
            or self.echo.path is not None
            or (playing is not None and playing >= self.echo.settle_ms)
        )

    def _ended(self, event: SpeechEnded, verdict_ms: float | None = None) -> None:
        """Hand an utterance on. `verdict_ms`: stream time of the detector's "finished", when
        the turn then waited for its transcript's words: the wait after it counts as
        transcription, not endpointing."""
        key = (self._utterance_gen, event.pause)
        if event.rule == "silence limit" and self._finished == key and self._held != key:
            # The detector had called this pause finished and its words were still being
            # transcribed (a slow machine): the turn ended on the detector's word.
            event = replace(event, rule="detector")
            verdict_ms = self._verdict_ms
        self._utterance_gen += 1
        speculation, self._speculation = self._speculation, None
        self.stats.ended_by[event.rule] = self.stats.ended_by.get(event.rule, 0) + 1
        now = time.monotonic()
        if self.barge.take_pending():
            # Long enough to stop her, and nothing showed it was her echo: the user spoke.
            log.info("barge-in: stop, at the end of an utterance heard before the echo check")
            self._emit(BargeInHeard("voice"))
        elif self._answer.playback_ms(now):
            # Heard while Annie spoke and too short to count as a barge-in: her own
            # voice leaking through the microphone, most likely.
            self.stats.echo_utterances_ignored += 1
            return
        if speculation is not None and speculation.key != key:
            speculation = None  # made for an earlier pause of this utterance: words came after
        waited = trailing_silence_ms(event)
        endpoint = waited if verdict_ms is None else min(waited, verdict_ms - event.end_ms)
        self.pending += 1
        speech_end = now - waited / 1000.0
        work = self._utterance(
            event.pcm, speech_end, endpoint, waited - endpoint, event.rule, speculation
        )
        self._spawn(self._heard(work))

    # --- semantic endpointing ---------------------------------------------------------------

    def _paused(self, event: SpeechPaused) -> None:
        if self.end_of_turn is None:
            return
        key = (self._utterance_gen, event.pause)
        if self._speculation is None or self._speculation.key != key:
            task = self._spawn(self.stt.transcribe(self.endpointer.speech_so_far()))
            # A speculation dropped when the speaker goes on is never awaited: take its
            # outcome here so a failure is not reported as an unretrieved exception.
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            task.add_done_callback(lambda t: self._transcribed_ahead(key, t))
            self._speculation = Speculation(key, task, time.monotonic())
            self.stats.speculative_started += 1
        # One judgement at a time: a recheck that comes while one runs would only queue.
        if self._held != key and (self._judging is None or self._judging.done()):
            # A recheck needs a surer word: past its training length of silence, the model
            # drifts towards "finished" on sentences that are not.
            vad = self.settings.vad
            bar = self.end_of_turn.threshold if event.first else vad.turn_recheck_threshold
            self._judging = self._spawn(self._judge(key, self.endpointer.audio_so_far(), bar))

    def _resumed(self) -> None:
        if self._speculation is not None:
            self.stats.speculative_discarded += 1
            self._speculation = None
        self._emit(UserSpeaking())  # whatever was prepared for the pause is not for this

    def _transcribed_ahead(self, key: tuple[int, int], task: asyncio.Task[Transcript]) -> None:
        """A pause's transcript is in while the pause goes on: say so, so that the answer can
        be prepared (a sentence that reads unfinished waits for its rest)."""
        if task.cancelled() or task.exception() is not None:
            return
        if (self._utterance_gen, self.endpointer.pause) != key or self._finished == key:
            return  # words came, or the turn ends now with these words
        text = task.result().text.strip()
        if text and not reads_unfinished(text):
            self._emit(WordsSoFar(text))

    async def _judge(self, key: tuple[int, int], pcm: Pcm, bar: float) -> None:
        assert self.end_of_turn is not None
        try:
            probability = await self.end_of_turn.judge(pcm)
        except Exception:
            log.exception("the end-of-turn detector failed; the pause's length decides")
            return
        self.stats.detector_runs += 1
        # Still the same pause of the same utterance: no words since, not ended meanwhile.
        current = (self._utterance_gen, self.endpointer.pause)
        vad = self.settings.vad
        if current != key or not worth_words(probability, bar, vad, self.words is not None):
            return
        verdict_ms = self.endpointer.now_ms
        if probability > bar:
            self._finished = key  # the turn ends once its words agree: nothing to prepare ahead
            self._verdict_ms = verdict_ms
        verdict = await self._with_words(key, probability, bar)
        if verdict is None:
            return  # words came, or the turn ended, while they were read
        if verdict.decision == "hold":
            self._held = key
            self.stats.held_by_words += 1
            return
        if verdict.decision == "wait":
            return
        self._finished = key
        self._verdict_ms = verdict_ms
        ended = self.endpointer.end_turn("detector" if verdict.by == "audio" else "detector+words")
        if ended is not None:
            self._ended(ended, verdict_ms)

    async def _with_words(
        self, key: tuple[int, int], probability: float, bar: float
    ) -> Verdict | None:
        """The pause's decision from the audio's `probability` and the pause's transcript
        (`bot.voice.end_of_turn`); None when words came or the turn ended meanwhile. Smart
        Turn judges from prosody, and a sentence paused at a comma can sound finished; the
        transcript is needed before any answer anyway, so waiting for it here costs no
        latency, and the words' model adds one short forward pass."""
        vad = self.settings.vad
        speculation = self._speculation
        if speculation is None or speculation.key != key:
            return decide(probability, "", None, bar, vad)
        try:
            transcript = await asyncio.shield(speculation.task)
        except Exception:
            return decide(probability, "", None, bar, vad)  # _utterance reports the failure
        if (self._utterance_gen, self.endpointer.pause) != key:
            return None
        words: float | None = None
        if self.words is not None and transcript.text.strip():
            try:
                words = await self.words.judge(transcript.text)
            except Exception:
                log.exception("the words' turn model failed; the audio and word rules decide")
            if (self._utterance_gen, self.endpointer.pause) != key:
                return None
        return decide(probability, transcript.text, words, bar, vad)

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
            self._report_quiet()

    async def _utterance(
        self,
        pcm: Pcm,
        speech_end: float,
        endpoint_ms: float,
        transcribed_ms: float,
        rule: str,
        speculation: Speculation | None,
    ) -> None:
        clock = TurnClock(turn_id=new_turn_id(), source="voice", origin=speech_end)
        clock.stages["endpoint"] = endpoint_ms
        # A partial transcription still running would only slow the final one down.
        if self._partial_task is not None and not self._partial_task.done():
            self._partial_task.cancel()
        started = time.monotonic()
        try:
            if speculation is not None:
                # Started when the pause began: the same audio, and most of the work done.
                transcript = await speculation.task
                self.stats.speculative_used += 1
            else:
                transcript = await self.stt.transcribe(pcm)
        except Exception as exc:
            log.exception("transcription failed")
            self._send(ErrorEvent(f"speech recognition failed: {exc}", where="stt"))
            return
        clock.stages["stt"] = transcribed_ms + (time.monotonic() - started) * 1000.0
        text = transcript.text.strip()
        log.info("heard %.2f s of speech as %r", pcm.size / 16000, text)
        if not text:
            self._take_frames()
            if not self._answer.turn_id:
                self._send(VoiceActivity("idle"))
            return
        self._send(TranscriptEvent(text, final=True, ended_by=rule))
        self._emit(TurnHeard(text, clock))
