"""The audio tracks on their own: paced output with back-pressure, utterances, audio out as a
stage of frames, the mic reader."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import av
import numpy as np
from aiortc import MediaStreamTrack, RTCPeerConnection
from aiortc.jitterbuffer import JitterBuffer
from aiortc.mediastreams import MediaStreamError
from aiortc.rtp import RtpPacket

from bot.voice.audio_convert import (
    WEBRTC_FRAME_SAMPLES,
    Int16,
    frame_rms,
    make_frame,
    split_frames,
)
from bot.voice.audio_in import AudioInput, prompt_receiver
from bot.voice.audio_out import (
    LEAD_IN_LEVEL,
    Delivered,
    EndOfAnswer,
    FirstFrameOut,
    Flush,
    Pause,
    Played,
    Resume,
    Say,
    SpeechEvent,
    SpeechOut,
    SpeechTrack,
    Utterance,
    trim_lead_in,
)
from models.base import TTS, VAD, Pcm
from testkit.peer import speak_48k


def voiced(frame: av.AudioFrame) -> bool:
    return bool(np.any(frame.to_ndarray()))


async def test_the_track_sends_silence_when_idle_and_frames_in_order() -> None:
    track = SpeechTrack(max_buffer_ms=200)
    first = await track.recv()
    assert (first.sample_rate, first.samples, first.layout.name) == (48000, 960, "mono")
    assert not voiced(first)
    ramp = [np.full(WEBRTC_FRAME_SAMPLES, i + 1, dtype=np.int16) for i in range(3)]
    for frame in ramp:
        await track.put(frame)
    got = [await track.recv() for _ in range(4)]
    assert [int(f.to_ndarray()[0, 0]) for f in got] == [1, 2, 3, 0]
    assert [f.pts for f in got] == [960, 1920, 2880, 3840]
    assert (track.frames_sent, track.voiced_frames_sent) == (5, 3)


async def test_producers_wait_while_the_queue_is_full_and_clear_drops_it() -> None:
    track = SpeechTrack(max_buffer_ms=100)  # five frames
    frame = np.ones(WEBRTC_FRAME_SAMPLES, dtype=np.int16)
    for _ in range(5):
        await track.put(frame)
    blocked = asyncio.ensure_future(track.put(frame))
    await asyncio.sleep(0.05)
    assert not blocked.done() and track.queued_frames == 5
    await track.recv()
    await asyncio.wait_for(blocked, 1.0)
    assert track.queued_frames == 5

    assert track.clear() == 5 and track.queued_frames == 0
    assert not voiced(await track.recv())
    assert track.last_stop_ms is not None and track.last_stop_ms >= 0


async def test_an_utterance_is_spoken_whole_and_reports_what_was_heard(tts: TTS) -> None:
    track = SpeechTrack()
    utterance = Utterance("t1", tts, track)
    utterance.add("Hello there.")
    utterance.add("This is the second piece.")
    utterance.close()
    frames = []
    while not utterance.finished:
        frames.append(await track.recv())
    assert sum(voiced(f) for f in frames) > 50  # over a second of speech
    assert utterance.delivered_text() == "Hello there. This is the second piece."
    timing = utterance.timing
    assert timing.first_piece_at is not None and timing.first_audio_at is not None
    assert timing.first_frame_at is not None and timing.first_frame_at >= timing.first_audio_at
    assert utterance.playback_ms() is None  # finished


def test_the_lead_in_is_cut_to_ten_milliseconds_before_the_first_sound() -> None:
    rate = 16000
    sound = (0.1 * np.sin(np.arange(1600) / 5.0)).astype(np.float32)  # 100 ms
    pcm = np.concatenate([np.zeros(800, dtype=np.float32), sound])  # after 50 ms of quiet
    trimmed = trim_lead_in(pcm, rate)
    assert trimmed.size == sound.size + 160 and not np.any(trimmed[:160])
    quiet = np.full(3200, LEAD_IN_LEVEL / 2, dtype=np.float32)
    assert trim_lead_in(quiet, rate) is quiet  # nothing louder: left as it is


async def test_an_answer_is_audible_from_its_first_frame(tts: TTS) -> None:
    track = SpeechTrack()
    utterance = Utterance("t3", tts, track)
    utterance.add("You have two pending tasks.")
    utterance.close()
    frames = [await track.recv()]  # the idle frame before synthesis finished
    while not utterance.finished:
        frames.append(await track.recv())
    sent = frames[-track.voiced_frames_sent :]  # the utterance's own frames
    audible = [i for i, f in enumerate(sent) if frame_rms(f) >= LEAD_IN_LEVEL]
    assert audible and audible[0] <= 1, audible[:3]  # Piper's own lead-in is 40-60 ms


async def test_stopping_an_utterance_keeps_only_the_heard_words(tts: TTS) -> None:
    track = SpeechTrack()
    utterance = Utterance("t2", tts, track)
    text = "One two three four five six seven eight nine ten eleven twelve thirteen fourteen."
    utterance.add(text)
    heard_frames = 0
    while heard_frames < 40:  # 0.8 s of speech, well before the end
        heard_frames += voiced(await track.recv())
    playing = utterance.playback_ms()
    assert playing is not None and playing > 0
    heard = utterance.stop()
    assert heard and text.split()[: len(heard.split())] == heard.split()
    assert len(heard.split()) < len(text.split())
    assert not any([voiced(await track.recv()) for _ in range(5)])
    utterance.add("Ignored after the stop.")
    assert utterance.finished and len(utterance.pieces) == 1


async def _next_event(stage: SpeechOut, track: SpeechTrack) -> SpeechEvent:
    """The stage's next report, pulling frames off its track (as WebRTC would) meanwhile."""
    got = asyncio.ensure_future(stage.events.get())
    for _ in range(1000):  # 20 s of frames: far more than any utterance here
        if got.done():
            return got.result()
        await track.recv()
    got.cancel()
    raise AssertionError("audio out reported nothing")


async def test_audio_out_takes_frames_and_reports_the_first_frame_and_the_end(tts: TTS) -> None:
    echo: asyncio.Queue[tuple[float, Int16 | None]] = asyncio.Queue(1000)
    stage = SpeechOut(tts, echo=echo)
    stage.send(Say("t1", "Hello there."))
    stage.send(Say("t1", "This is the second piece."))
    stage.send(EndOfAnswer("t1"))
    first = await _next_event(stage, stage.track)
    assert isinstance(first, FirstFrameOut) and first.turn_id == "t1"
    assert first.timing.first_frame_at is not None and first.timing.last_frame_at is not None
    over = await _next_event(stage, stage.track)
    assert isinstance(over, Played) and over.turn_id == "t1" and over.pieces == 2
    assert over.timing.last_frame_at is not None
    assert over.timing.last_frame_at > first.timing.first_frame_at
    # Every frame sent went to the echo reference, voiced ones with their samples.
    sent = [echo.get_nowait() for _ in range(echo.qsize())]
    assert sum(samples is not None for _, samples in sent) == stage.track.voiced_frames_sent
    stage.send(Say("t1", "Too late: this turn's speech is over."))
    assert not any([voiced(await stage.track.recv()) for _ in range(5)])
    stage.close()


async def test_a_flush_stops_audio_at_the_next_frame_and_answers_with_what_was_heard(
    tts: TTS,
) -> None:
    stage = SpeechOut(tts)
    text = "One two three four five six seven eight nine ten eleven twelve thirteen fourteen."
    stage.send(Say("t2", text))
    heard_frames = 0
    while heard_frames < 40:  # 0.8 s of speech, well before the end
        heard_frames += voiced(await stage.track.recv())
    stage.send(Flush("t2"))
    assert not voiced(await stage.track.recv())  # silent from the very next frame
    delivered = await asyncio.wait_for(stage.events.get(), 5)
    assert isinstance(delivered, FirstFrameOut)
    delivered = await asyncio.wait_for(stage.events.get(), 5)
    assert isinstance(delivered, Delivered) and delivered.turn_id == "t2"
    words = delivered.text.split()
    assert words and text.split()[: len(words)] == words and len(words) < len(text.split())
    over = await asyncio.wait_for(stage.events.get(), 5)
    assert isinstance(over, Played) and over.turn_id == "t2"
    # A flush of a turn that said nothing yet answers too: nothing was heard.
    stage.send(Flush("t3"))
    nothing = await asyncio.wait_for(stage.events.get(), 5)
    assert nothing == Delivered("t3", "", 0)
    stage.close()


async def test_a_pause_keeps_the_queue_and_resume_plays_on(tts: TTS) -> None:
    stage = SpeechOut(tts)
    stage.send(Say("t4", "One two three four five six seven eight."))
    stage.send(EndOfAnswer("t4"))
    while not voiced(await stage.track.recv()):
        pass
    stage.send(Pause())
    assert not any([voiced(await stage.track.recv()) for _ in range(10)])
    assert stage.track.queued_frames > 0  # kept, not dropped
    stage.send(Resume())
    assert voiced(await stage.track.recv())
    stage.close()


class _StereoClip(MediaStreamTrack):
    """What aiortc hands the server: s16 stereo 48 kHz frames of 960 samples, then the end."""

    kind = "audio"

    def __init__(self, mono: np.ndarray) -> None:
        super().__init__()
        self._frames = split_frames(mono)
        self._pts = 0

    async def recv(self) -> av.AudioFrame:
        if not self._frames:
            raise MediaStreamError
        mono = self._frames.pop(0)
        stereo = np.repeat(mono, 2).reshape(1, -1)
        frame = av.AudioFrame.from_ndarray(stereo, format="s16", layout="stereo")
        frame.sample_rate = 48000
        frame.pts = self._pts
        self._pts += 960
        return frame


async def test_the_mic_reader_resamples_runs_the_vad_and_drops_nothing(tts: TTS, vad: VAD) -> None:
    speech = await speak_48k(tts, "Are there any tasks pending on me?")
    silence = np.zeros(48000, dtype=np.int16)
    clip = np.concatenate([silence, speech, silence])
    probabilities: list[float] = []
    samples: list[Pcm] = []
    ended = asyncio.Event()

    def on_frame(frame: Pcm, probability: float) -> None:
        samples.append(frame)
        probabilities.append(probability)

    reader = AudioInput(_StereoClip(clip), vad.new_stream(), on_frame, on_end=ended.set)
    reader.start()
    await asyncio.wait_for(ended.wait(), 30)
    await reader.stop()
    frames_in = len(split_frames(clip))
    assert reader.stats.frames_received == frames_in
    assert reader.stats.samples_dropped == 0
    # 48 kHz stereo in, 16 kHz mono 512-sample frames out (a resampler's delay aside).
    assert all(s.shape == (512,) and s.dtype == np.float32 for s in samples)
    assert abs(len(samples) - frames_in * 320 // 512) <= 2
    voiced_frames = sum(p > 0.5 for p in probabilities)
    lead = probabilities[: 16000 // 512 - 2]
    assert max(lead) < 0.5 and voiced_frames >= 20


def test_frames_are_cut_whole_and_padded() -> None:
    parts = split_frames(np.ones(2000, dtype=np.int16))
    assert [p.size for p in parts] == [960, 960, 960]
    assert int(parts[-1][80:].sum()) == 0
    frame = make_frame(parts[0], pts=1920)
    assert (frame.pts, frame.samples, frame.sample_rate) == (1920, 960, 48000)


def test_resampling_starts_no_threads() -> None:
    # Counted in a process of its own: in the suite's process, threads that earlier tests
    # started come and go on their own (a full run in CI saw one end mid-test).
    script = """
import os
import numpy as np
from bot.voice.audio_convert import OutputResampler

def threads() -> int:
    return len(os.listdir("/proc/self/task"))

before = threads()
resamplers = [OutputResampler(22050) for _ in range(5)]
tone = (0.3 * np.sin(np.arange(22050) / 10.0)).astype(np.float32)  # one second
out = [np.concatenate([r.convert(tone), r.flush()]) for r in resamplers]
print(before, threads(), *(o.size for o in out))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    before, after, *sizes = (int(n) for n in done.stdout.split())
    assert sizes == [48000] * 5
    # PyAV's own resampler starts two libavfilter threads per graph (ten here).
    assert after == before, done.stdout


def _frames_out(buffer: JitterBuffer, packets: int) -> list[int]:
    """Feed 20 ms Opus-clocked packets in order; which packet's arrival let a frame out."""
    out = []
    for seq in range(packets):
        packet = RtpPacket(payload_type=111, sequence_number=seq, timestamp=seq * 960)
        packet._data = b"\x00"  # the payload the receiver would have parsed
        if buffer.add(packet)[1] is not None:
            out.append(seq)
    return out


async def test_the_microphone_receiver_hands_each_packet_on_when_the_next_arrives() -> None:
    pc = RTCPeerConnection()
    try:
        receiver = pc.addTransceiver("audio").receiver
        default = receiver._RTCRtpReceiver__jitter_buffer  # type: ignore[attr-defined]
        buffer = prompt_receiver(receiver)
        assert buffer is not None
        assert receiver._RTCRtpReceiver__jitter_buffer is buffer  # type: ignore[attr-defined]
        # aiortc's own holds the first frame until four more have come (80 ms); ours, one.
        assert _frames_out(default, 6) == [4, 5]
        assert _frames_out(buffer, 6) == [1, 2, 3, 4, 5]
    finally:
        await pc.close()
