"""Audio out, a stage: what is said goes in as typed frames, Piper's voice goes out in paced
20 ms frames, and what happened comes back as typed frames.

The voice connection talks to `SpeechOut` only through `send` and reads only its `events`:

- in, in order: `Say` (a piece of an answer, as `bot.voice.aloud` cut it) and `EndOfAnswer`
  (no more pieces will come for that turn);
- in, jumping the queue and acting at once: `Flush` (an interruption: the turn's queued audio
  is dropped and the audio stops at the next 20 ms frame; answered by `Delivered`, the words the
  user actually heard), `Pause` (a likely voice over Annie's: silence, the queue kept) and
  `Resume` (a false alarm: play on where it paused);
- back, on `events`: `FirstFrameOut` (a turn's first audible frame has gone out), `Delivered`
  and `Played` (a turn's speech is over: its last frame went out, or it was flushed).

Inside, `SpeechTrack` is the aiortc track: `recv()` returns one 20 ms frame per 20 ms of wall
time (silence when nothing is queued), and producers wait while more than `max_buffer_ms` is
queued (back-pressure), so a flush only has a few frames to drop. Every frame it sends also
goes, with its time, to the echo reference queue hearing reads. `Utterance` is one turn's
speech: a worker synthesizes each piece, resamples it to 48 kHz and queues the frames. Every
frame carries the piece it came from, so when playback is cut off the utterance knows exactly
what was heard (`delivered_text`).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field, replace

import av
import numpy as np

from bot.voice.audio_convert import (
    FRAME_MS,
    WEBRTC_FRAME_SAMPLES,
    Int16,
    OutputResampler,
    PacedAudioTrack,
    make_frame,
    split_frames,
)
from models.base import TTS, Pcm

LEAD_IN_LEVEL = 0.003  # RMS in [0, 1] of a 10 ms window: about -50 dBFS, below any speech
LEAD_IN_KEEP_MS = 10  # of the quiet before the first sound, so its onset is not clipped


def trim_lead_in(pcm: Pcm, sample_rate: int) -> Pcm:
    """`pcm` from 10 ms before its first window louder than `LEAD_IN_LEVEL` (as is if none)."""
    window = max(1, sample_rate // 100)
    n = pcm.size // window
    if n == 0:
        return pcm
    levels = np.sqrt(np.mean(np.square(pcm[: n * window].reshape(n, window)), axis=1))
    loud = np.flatnonzero(levels >= LEAD_IN_LEVEL)
    if loud.size == 0:
        return pcm
    start = max(0, int(loud[0]) * window - sample_rate * LEAD_IN_KEEP_MS // 1000)
    return pcm[start:]


@dataclass
class _Queued:
    samples: Int16
    utterance: Utterance | None
    piece: int


class SpeechTrack(PacedAudioTrack):
    """Outgoing audio: paced 20 ms mono frames at 48 kHz, silence when idle."""

    def __init__(self, max_buffer_ms: int = 200) -> None:
        super().__init__()
        self.max_frames = max(1, max_buffer_ms // FRAME_MS)
        self._queue: deque[_Queued] = deque()
        self._space = asyncio.Event()
        self._space.set()
        self.frames_sent = 0
        self.voiced_frames_sent = 0
        self.last_voiced_sent_at: float | None = None
        self.frames_dropped = 0
        self._cleared_at: float | None = None
        self.last_stop_ms: float | None = None  # clear() → the next frame sent (silence)
        # Paused (the user may be talking over Annie): silence goes out, the queue waits.
        self.paused = False
        # Every frame as it goes out (its time, and None for silence): the echo reference
        # hearing reads (`bot.voice.echo`). Bounded: the oldest goes first when it is full.
        self.sent: asyncio.Queue[tuple[float, Int16 | None]] | None = None

    @property
    def queued_frames(self) -> int:
        return len(self._queue)

    async def recv(self) -> av.AudioFrame:
        await self._pace()
        if self._cleared_at is not None:
            self.last_stop_ms = (time.monotonic() - self._cleared_at) * 1000.0
            self._cleared_at = None
        item = self._queue.popleft() if self._queue and not self.paused else None
        if len(self._queue) < self.max_frames:
            self._space.set()
        self.frames_sent += 1
        if self.sent is not None:
            if self.sent.full():
                self.sent.get_nowait()
            self.sent.put_nowait((time.monotonic(), None if item is None else item.samples))
        if item is None:
            return make_frame(self._silence, self._pts)
        self.voiced_frames_sent += 1
        self.last_voiced_sent_at = time.monotonic()
        if item.utterance is not None:
            item.utterance.played(item.piece)
        return make_frame(item.samples, self._pts)

    async def put(self, samples: Int16, utterance: Utterance | None = None, piece: int = 0) -> None:
        """Queue one 20 ms frame, waiting while the queue is full (back-pressure)."""
        while len(self._queue) >= self.max_frames:
            self._space.clear()
            await self._space.wait()
        if utterance is not None and utterance.stopped:
            return
        self._queue.append(_Queued(samples, utterance, piece))

    def pause(self) -> None:
        """Send silence from the next frame on, keeping what is queued."""
        if not self.paused:
            self.paused = True
            self._cleared_at = time.monotonic()

    def resume(self) -> None:
        """Play on from where `pause` stopped."""
        self.paused = False

    def clear(self, utterance: Utterance | None = None) -> int:
        """Drop queued frames (all, or one utterance's); returns how many were dropped."""
        if utterance is None:
            dropped = len(self._queue)
            self._queue.clear()
        else:
            kept = deque(q for q in self._queue if q.utterance is not utterance)
            dropped = len(self._queue) - len(kept)
            self._queue = kept
        self.frames_dropped += dropped
        self._cleared_at = time.monotonic()
        self._space.set()
        return dropped

    def stop(self) -> None:
        self._queue.clear()
        self._space.set()
        super().stop()


@dataclass
class _Piece:
    text: str
    frames_total: int = 0
    frames_played: int = 0
    synthesized: bool = False


@dataclass
class UtteranceTiming:
    """Monotonic timestamps of one utterance's milestones (None until reached)."""

    first_piece_at: float | None = None
    first_audio_at: float | None = None  # TTS returned its first chunk
    first_frame_at: float | None = None  # first frame handed to WebRTC
    last_frame_at: float | None = None


@dataclass
class Utterance:
    """One turn's speech: `add` pieces, `close`, then `await done()`; `stop` cuts it off."""

    turn_id: str
    tts: TTS
    track: SpeechTrack
    pieces: list[_Piece] = field(default_factory=list)
    timing: UtteranceTiming = field(default_factory=UtteranceTiming)
    stopped: bool = False

    def __post_init__(self) -> None:
        self._inbox: asyncio.Queue[int | None] = asyncio.Queue()
        self._finished = asyncio.Event()
        # Set at the first frame sent, or at the end of an utterance that sent none.
        self._begun = asyncio.Event()
        self._closed = False
        self._worker: asyncio.Task[None] | None = None

    def add(self, text: str) -> None:
        if self._closed or self.stopped or not text.strip():
            return
        if self.timing.first_piece_at is None:
            self.timing.first_piece_at = time.monotonic()
        self.pieces.append(_Piece(text))
        self._inbox.put_nowait(len(self.pieces) - 1)
        if self._worker is None:
            self._worker = asyncio.create_task(self._synthesize_all(), name=f"tts-{self.turn_id}")

    def close(self) -> None:
        """No more pieces will come; `done()` resolves when the last frame has been sent."""
        if self._closed:
            return
        self._closed = True
        self._inbox.put_nowait(None)
        if self._worker is None:
            self._end()

    async def done(self) -> None:
        await self._finished.wait()

    async def begun(self) -> None:
        """Until the first frame has gone out (or the utterance ended without one)."""
        await self._begun.wait()

    def _end(self) -> None:
        self._finished.set()
        self._begun.set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def playback_ms(self) -> float | None:
        """How long this utterance has been audible (None before the first or after the last)."""
        if self.timing.first_frame_at is None or self._finished.is_set():
            return None
        return (time.monotonic() - self.timing.first_frame_at) * 1000.0

    def stop(self) -> str:
        """Cut playback now: drop queued frames, stop synthesis; returns what was heard."""
        if not self.stopped:
            self.stopped = True
            self.track.clear(self)
            if self._worker is not None and not self._worker.done():
                self._worker.cancel()
            self._end()
        return self.delivered_text()

    def delivered_text(self) -> str:
        """The text of every fully played piece plus the heard share of a cut-off one."""
        out: list[str] = []
        for piece in self.pieces:
            if piece.synthesized and piece.frames_played >= piece.frames_total:
                out.append(piece.text)
                continue
            if piece.frames_played and piece.frames_total:
                words = piece.text.split()
                share = piece.frames_played / piece.frames_total
                heard = words[: int(len(words) * share)]
                if heard:
                    out.append(" ".join(heard))
            break
        return " ".join(out)

    def played(self, piece: int) -> None:
        """A frame of `piece` went out (the track says so as it sends it): what was heard."""
        now = time.monotonic()
        if self.timing.first_frame_at is None:
            self.timing.first_frame_at = now
            self._begun.set()
        self.timing.last_frame_at = now
        self.pieces[piece].frames_played += 1
        self._maybe_finished()

    def _maybe_finished(self) -> None:
        if not self._closed or self._worker is None or not self._worker.done():
            return
        if all(p.frames_played >= p.frames_total for p in self.pieces):
            self._end()

    async def _synthesize_all(self) -> None:
        resampler = OutputResampler(self.tts.sample_rate)
        carry = np.zeros(0, dtype=np.int16)
        while True:
            index = await self._inbox.get()
            if index is None:
                break
            piece = self.pieces[index]
            async for chunk in self.tts.synthesize(piece.text):
                pcm = chunk.pcm
                if self.timing.first_audio_at is None:
                    self.timing.first_audio_at = time.monotonic()
                    # The user waits through the voice's lead-in silence (20-60 ms for Piper):
                    # the answer starts at its first sound. Later pieces keep theirs as the
                    # pause between sentences.
                    pcm = trim_lead_in(pcm, chunk.sample_rate)
                if chunk.sample_rate != resampler.rate_in:
                    resampler = OutputResampler(chunk.sample_rate)
                samples = np.concatenate([carry, resampler.convert(pcm)])
                whole = samples.size - samples.size % WEBRTC_FRAME_SAMPLES
                carry = samples[whole:]
                for frame in split_frames(samples[:whole]):
                    piece.frames_total += 1
                    await self.track.put(frame, self, index)
            # The partial frame left over belongs to this piece; send it padded so the piece
            # ends cleanly and its count is exact.
            tail = np.concatenate([carry, resampler.flush()])
            resampler = OutputResampler(resampler.rate_in)
            carry = np.zeros(0, dtype=np.int16)
            for frame in split_frames(tail):
                piece.frames_total += 1
                await self.track.put(frame, self, index)
            piece.synthesized = True
        self._maybe_finished_after_worker()

    def _maybe_finished_after_worker(self) -> None:
        # Called from inside the worker, whose task is not `done()` yet.
        if all(p.synthesized and p.frames_played >= p.frames_total for p in self.pieces):
            self._end()


# --- the stage's frames -----------------------------------------------------------------------


@dataclass(frozen=True)
class Say:
    """A piece of the answer of `turn_id` to say (a sentence or a clause)."""

    turn_id: str
    text: str


@dataclass(frozen=True)
class EndOfAnswer:
    """No more pieces will come for `turn_id`: its speech ends once what was said has played."""

    turn_id: str


@dataclass(frozen=True)
class Flush:
    """Control: stop the speech of `turn_id` at the next 20 ms frame, dropping what is queued
    and whatever was still to be synthesized; answered by `Delivered`."""

    turn_id: str


@dataclass(frozen=True)
class Pause:
    """Control: silence from the next frame on, the queued audio kept (a likely barge-in)."""


@dataclass(frozen=True)
class Resume:
    """Control: play on from where `Pause` stopped (a false alarm)."""


SpeechFrame = Say | EndOfAnswer | Flush | Pause | Resume


@dataclass(frozen=True)
class FirstFrameOut:
    """The first audible frame of `turn_id` went out, with the speech's timing so far."""

    turn_id: str
    timing: UtteranceTiming


@dataclass(frozen=True)
class Delivered:
    """The answer to `Flush`: what the user heard of `turn_id` (`text`), and how many queued
    frames were dropped unheard."""

    turn_id: str
    text: str
    frames_dropped: int


@dataclass(frozen=True)
class Played:
    """The speech of `turn_id` is over (its last frame went out, or it was flushed): its
    timing, and how many pieces it was given to say."""

    turn_id: str
    timing: UtteranceTiming
    pieces: int


SpeechEvent = FirstFrameOut | Delivered | Played

# Turns whose speech is over, kept so that a late `Flush` still learns what was heard.
_KEPT_OVER = 16


class SpeechOut:
    """The speech-out stage of one connection: `send` frames in, read `events` back.

    `track` is the outgoing WebRTC track (the server adds it to the peer connection); `echo`,
    when given, receives every frame as it goes out (the echo reference)."""

    def __init__(
        self,
        tts: TTS,
        *,
        echo: asyncio.Queue[tuple[float, Int16 | None]] | None = None,
        max_buffer_ms: int = 200,
    ) -> None:
        self.tts = tts
        self.track = SpeechTrack(max_buffer_ms)
        self.track.sent = echo
        self.events: asyncio.Queue[SpeechEvent] = asyncio.Queue()
        self._speaking: dict[str, Utterance] = {}
        self._over: OrderedDict[str, Utterance] = OrderedDict()
        self._watchers: set[asyncio.Task[None]] = set()

    def send(self, frame: SpeechFrame) -> None:
        """The one way in: pieces and ends wait their turn behind what is queued; `Flush`,
        `Pause` and `Resume` act on the next frame out."""
        if isinstance(frame, Pause):
            self.track.pause()
        elif isinstance(frame, Resume):
            self.track.resume()
        elif isinstance(frame, Flush):
            utterance = self._speaking.get(frame.turn_id) or self._over.get(frame.turn_id)
            if utterance is None:
                utterance = self._start(frame.turn_id)
            before = self.track.frames_dropped
            heard = utterance.stop()
            self.track.resume()  # the queue is dropped: the next answer plays from its start
            dropped = self.track.frames_dropped - before
            self.events.put_nowait(Delivered(frame.turn_id, heard, dropped))
        elif frame.turn_id not in self._over:
            utterance = self._speaking.get(frame.turn_id) or self._start(frame.turn_id)
            if isinstance(frame, Say):
                utterance.add(frame.text)
            else:
                utterance.close()

    def _start(self, turn_id: str) -> Utterance:
        utterance = Utterance(turn_id, self.tts, self.track)
        self._speaking[turn_id] = utterance
        watcher = asyncio.ensure_future(self._watch(utterance))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return utterance

    async def _watch(self, utterance: Utterance) -> None:
        """Report the utterance's first frame out and its end, in that order."""
        turn_id = utterance.turn_id
        await utterance.begun()
        if utterance.timing.first_frame_at is not None:
            self.events.put_nowait(FirstFrameOut(turn_id, replace(utterance.timing)))
        await utterance.done()
        self._speaking.pop(turn_id, None)
        self._over[turn_id] = utterance
        while len(self._over) > _KEPT_OVER:
            self._over.popitem(last=False)
        self.events.put_nowait(Played(turn_id, replace(utterance.timing), len(utterance.pieces)))

    def close(self) -> None:
        """The connection is over: every utterance stops, the track ends."""
        for utterance in list(self._speaking.values()):
            utterance.stop()
        for watcher in list(self._watchers):
            watcher.cancel()
        self.track.stop()
