"""Voice activity detection with the Silero ONNX model, streamed frame by frame.

Each stream keeps its own recurrent state and the last 64 samples of context that the model
expects in front of every 512-sample (32 ms at 16 kHz) frame, so many connections can share
one onnxruntime session.
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

from models.base import VAD, ModelError, Pcm, Resolved, VADStream

FRAME = 512
CONTEXT = 64


class SileroStream(VADStream):
    frame_samples = FRAME

    def __init__(self, owner: SileroVAD) -> None:
        self._owner = owner
        self.reset()

    def reset(self) -> None:
        self._h: npt.NDArray[np.float32] = np.zeros((1, 1, 128), dtype=np.float32)
        self._c: npt.NDArray[np.float32] = np.zeros((1, 1, 128), dtype=np.float32)
        self._context: npt.NDArray[np.float32] = np.zeros(CONTEXT, dtype=np.float32)

    def probability(self, frame: Pcm) -> float:
        audio = np.asarray(frame, dtype=np.float32).reshape(-1)
        if audio.shape[0] != FRAME:
            raise ValueError(f"VAD frames are {FRAME} samples at 16 kHz, got {audio.shape[0]}")
        window = np.concatenate([self._context, audio])[None, :]
        prob, self._h, self._c = self._owner.run(window, self._h, self._c)
        self._context = audio[-CONTEXT:].copy()
        return prob


class SileroVAD(VAD):
    """One onnxruntime session; state lives in each stream."""

    sample_rate = 16000

    def __init__(self, resolved: Resolved) -> None:
        import onnxruntime

        self.resolved = resolved
        self.path = resolved.path
        opts = onnxruntime.SessionOptions()
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = 1
        opts.log_severity_level = 4
        try:
            self._session = onnxruntime.InferenceSession(
                str(resolved.path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ModelError(
                f"could not load the VAD model {resolved.path}: {exc}. Fix: pip install "
                "--force-reinstall faster-whisper, or set models.vad_path to a Silero .onnx"
            ) from exc
        names = {i.name for i in self._session.get_inputs()}
        if names != {"input", "h", "c"}:
            raise ModelError(
                f"VAD model {resolved.path} has inputs {sorted(names)}; expected the Silero "
                "model shipped with faster-whisper (input, h, c)"
            )
        self._lock = threading.Lock()

    def run(
        self,
        window: npt.NDArray[np.float32],
        h: npt.NDArray[np.float32],
        c: npt.NDArray[np.float32],
    ) -> tuple[float, npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        with self._lock:
            out, hn, cn = self._session.run(None, {"input": window, "h": h, "c": c})
        return float(np.asarray(out).reshape(-1)[-1]), hn, cn

    def new_stream(self) -> VADStream:
        return SileroStream(self)

    def probabilities(self, pcm: Pcm) -> list[float]:
        """Probability per whole 512-sample frame of `pcm` (a fresh stream; for offline use)."""
        stream = self.new_stream()
        audio = np.asarray(pcm, dtype=np.float32).reshape(-1)
        return [
            stream.probability(audio[i : i + FRAME])
            for i in range(0, len(audio) - FRAME + 1, FRAME)
        ]
