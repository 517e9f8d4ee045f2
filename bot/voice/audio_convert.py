"""Sample-format and rate conversion between WebRTC audio and the engines.

WebRTC carries 48 kHz audio (aiortc hands incoming audio over as s16 stereo frames of 960
samples); the VAD and the recognizer want 16 kHz mono float32; Piper speaks at its voice's
rate (22,050 Hz for the shipped voice). The resamplers are stateful, one per stream, so
there are no clicks at frame boundaries.
"""

from __future__ import annotations

import asyncio
import errno
import fractions
import time

import av
import numpy as np
import numpy.typing as npt
from aiortc import MediaStreamTrack
from aiortc.mediastreams import MediaStreamError
from av.filter import Graph

from models.base import Pcm

WEBRTC_RATE = 48000
FRAME_MS = 20
WEBRTC_FRAME_SAMPLES = WEBRTC_RATE * FRAME_MS // 1000  # 960
Int16 = npt.NDArray[np.int16]


def float_to_int16(pcm: Pcm) -> Int16:
    return (np.clip(pcm, -1.0, 1.0) * 32767.0).astype(np.int16)


def int16_to_float(samples: Int16) -> Pcm:
    return samples.astype(np.float32) / 32768.0


class Resampler:
    """Audio frames → s16 mono at `rate`: PyAV's AudioResampler on a filter graph with no
    worker threads. PyAV's own leaves the graph's thread count automatic, and libavfilter then
    starts two worker threads per graph; resamplers that outlived their utterance kept theirs,
    and the server's threads grew by about 1.4 a minute over a 30-minute soak. Mono speech
    needs none. Like PyAV's, a frame unlike the first raises ValueError."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self._graph: Graph | None = None
        self._shape: tuple[str, str, int] | None = None

    def resample(self, frame: av.AudioFrame | None) -> list[av.AudioFrame]:
        if frame is not None:
            shape = (frame.format.name, frame.layout.name, frame.sample_rate)
            if self._shape is None:
                self._shape = shape
                self._graph = self._build(frame)
            elif shape != self._shape:
                raise ValueError(f"frame {shape} does not match the resampler's {self._shape}")
        if self._graph is None:
            return []
        self._graph.push(frame)
        out: list[av.AudioFrame] = []
        while True:
            try:
                pulled = self._graph.pull()
                assert isinstance(pulled, av.AudioFrame)
                out.append(pulled)
            except EOFError:
                break
            except av.FFmpegError as exc:
                if exc.errno != errno.EAGAIN:
                    raise
                break
        return out

    def _build(self, frame: av.AudioFrame) -> Graph:
        graph = Graph()
        graph.threads = 1  # before the first filter is added
        extra = {"time_base": str(frame.time_base)} if frame.time_base is not None else {}
        src = graph.add(
            "abuffer",
            sample_rate=str(frame.sample_rate),
            sample_fmt=frame.format.name,
            channel_layout=frame.layout.name,
            **extra,
        )
        fmt = graph.add(
            "aformat", sample_rates=str(self.rate), sample_fmts="s16", channel_layouts="mono"
        )
        sink = graph.add("abuffersink")
        src.link_to(fmt)
        fmt.link_to(sink)
        graph.configure()
        return graph


class InputResampler:
    """Any incoming aiortc audio frame → 16 kHz mono float32."""

    def __init__(self, rate: int = 16000) -> None:
        self.rate = rate
        self._resampler = Resampler(rate)

    def convert(self, frame: av.AudioFrame) -> Pcm:
        if frame.samples == 0:
            # libavfilter's buffer source fails on a frame of no samples with ENOMEM (a
            # MemoryError that would end the microphone's reader); it carries nothing anyway.
            return np.zeros(0, dtype=np.float32)
        parts = [f.to_ndarray().reshape(-1) for f in self._resampler.resample(frame)]
        if not parts:
            return np.zeros(0, dtype=np.float32)
        return int16_to_float(np.concatenate(parts).astype(np.int16, copy=False))


class OutputResampler:
    """Synthesized float32 mono at the voice's rate → 48 kHz mono int16 for WebRTC."""

    def __init__(self, rate_in: int, rate_out: int = WEBRTC_RATE) -> None:
        self.rate_in = rate_in
        self.rate_out = rate_out
        self._resampler = Resampler(rate_out)

    def convert(self, pcm: Pcm) -> Int16:
        if pcm.size == 0:
            return np.zeros(0, dtype=np.int16)
        frame = av.AudioFrame.from_ndarray(
            float_to_int16(pcm).reshape(1, -1), format="s16", layout="mono"
        )
        frame.sample_rate = self.rate_in
        frame.time_base = fractions.Fraction(1, self.rate_in)
        return self._collect(self._resampler.resample(frame))

    def flush(self) -> Int16:
        """The resampler's tail; call once at the end of an utterance."""
        return self._collect(self._resampler.resample(None))

    @staticmethod
    def _collect(frames: list[av.AudioFrame]) -> Int16:
        if not frames:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate([f.to_ndarray().reshape(-1) for f in frames]).astype(np.int16)


def make_frame(samples: Int16, pts: int, rate: int = WEBRTC_RATE) -> av.AudioFrame:
    """One mono s16 frame with its timestamp, as an outgoing track returns it."""
    frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
    frame.sample_rate = rate
    frame.pts = pts
    frame.time_base = fractions.Fraction(1, rate)
    return frame


def split_frames(samples: Int16, frame_samples: int = WEBRTC_FRAME_SAMPLES) -> list[Int16]:
    """Cut into whole frames, padding the last one with silence."""
    if samples.size == 0:
        return []
    pad = (-samples.size) % frame_samples
    if pad:
        samples = np.concatenate([samples, np.zeros(pad, dtype=np.int16)])
    return list(samples.reshape(-1, frame_samples))


def frame_rms(frame: av.AudioFrame) -> float:
    """Root-mean-square level of a frame in [0, 1] (for telling speech from silence)."""
    data = frame.to_ndarray().astype(np.float32) / 32768.0
    return float(np.sqrt(np.mean(np.square(data)))) if data.size else 0.0


class PacedAudioTrack(MediaStreamTrack):
    """An outgoing audio track whose `recv()` paces 20 ms frames against the wall clock.

    Subclasses call `await self._pace()` at the top of `recv()` and stamp the frame they
    return with `self._pts`; the first frame goes at once, each later one 20 ms after it.
    """

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self._start: float | None = None
        self._pts = 0
        self._silence = np.zeros(WEBRTC_FRAME_SAMPLES, dtype=np.int16)

    async def _pace(self) -> None:
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
            return
        self._pts += WEBRTC_FRAME_SAMPLES
        wait = self._start + self._pts / WEBRTC_RATE - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
