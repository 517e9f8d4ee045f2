"""Semantic end-of-turn detection: judged from the audio alone, has the speaker finished?

The engine is Smart Turn v3.2, the classifier that pipecat-ai ships in its wheel
(`pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx`, BSD-2-Clause): a Whisper-style
encoder over the last 8 s of 16 kHz speech that returns the probability that the turn is
complete. It hears prosody, not words, so a sentence stopped on a rising "about..." scores low
and a falling "...tomorrow." scores high.

Both the model and its feature extraction come from the installed pipecat-ai package, so the
features are pipecat's own, not a copy that could drift from what the model was trained on.
The feature module (`smart_turn/_whisper_features.py`, numpy only) is loaded from its file
rather than imported as `pipecat.audio...`: importing anything under `pipecat` runs the
package's `__init__`, which logs a banner through loguru and, on Python < 3.12, replaces
`asyncio.wait_for` process-wide with wait_for2's. Annie's server should not have asyncio
changed under it for the sake of one numpy function. pipecat's own analyzer class
(`LocalSmartTurnAnalyzerV3`) is not used for the same reason, and because it is a per-stream
endpointer with its own buffer, thread and model session, where Annie already has a VAD
endpointer and wants one shared session; the few lines of it that matter (keep the last
8 s, pad silence in front, probability > 0.5 means complete) are repeated here and a test
checks that the probabilities equal the analyzer's own.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from models.base import ModelError, Pcm

RATE = 16000
WINDOW_S = 8
"""Smart Turn looks at the last 8 s; shorter audio is padded with silence in front."""
THRESHOLD = 0.5
"""pipecat's cut: a probability above it means the turn is complete."""

MODEL_FILE = "smart-turn-v3.2-cpu.onnx"
# Where the files live inside the installed `pipecat` package folder.
_MODEL_IN_PACKAGE = Path("audio/turn/smart_turn/data") / MODEL_FILE
_FEATURES_IN_PACKAGE = Path("audio/turn/smart_turn/_whisper_features.py")
_INSTALL_FIX = "pip install --no-deps 'pipecat-ai>=1.14,<2' (./start.sh does this)"

Features = Callable[..., npt.NDArray[np.float32]]


class EndOfTurnDetector(ABC):
    """Says how likely it is that 16 kHz mono speech ends a finished turn.

    `complete_probability` blocks for one model run (about 50 ms of CPU on one core here);
    `judge` runs it in a worker thread for callers on the event loop.
    """

    sample_rate: int = RATE
    threshold: float = THRESHOLD

    @abstractmethod
    def complete_probability(self, pcm: Pcm) -> float:
        """Probability in [0, 1] that the speaker has finished, from the turn's audio so far
        (speech plus the silence after it, float32 mono at 16 kHz)."""

    def is_complete(self, pcm: Pcm) -> bool:
        return self.complete_probability(pcm) > self.threshold

    async def judge(self, pcm: Pcm) -> float:
        """`complete_probability` in a worker thread."""
        return await asyncio.to_thread(self.complete_probability, pcm)


def _pipecat_root() -> Path:
    """The installed `pipecat` package folder, found without importing the package."""
    spec = importlib.util.find_spec("pipecat")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            f"the end-of-turn detector needs the pipecat-ai package (it ships {MODEL_FILE} and its "
            f"feature extraction), which is not installed. Fix: {_INSTALL_FIX}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def find_smart_turn(configured: str = "") -> Path:
    """The Smart Turn ONNX file: `configured` (models.turn_path) if set, else pipecat's copy.

    A configured path that is missing is an error, never replaced by the packaged model:
    the user asked for that file."""
    if configured:
        path = Path(configured).expanduser()
        if not path.is_file():
            raise ModelError(
                f"end-of-turn detector model not found: {path} does not exist. Fix: point "
                "models.turn_path at a Smart Turn v3 .onnx file, or leave it empty to use "
                f"the {MODEL_FILE} that pipecat-ai ships"
            )
        return path
    path = _pipecat_root() / _MODEL_IN_PACKAGE
    if not path.is_file():
        raise ModelError(
            f"end-of-turn detector model not found: {path} does not exist (pipecat-ai is installed "
            f"but without it). Fix: pip install --force-reinstall 'pipecat-ai>=1.14,<2', or "
            "set models.turn_path to a Smart Turn v3 .onnx file"
        )
    return path


@functools.cache
def pipecat_features() -> Features:
    """pipecat's `compute_whisper_log_mel_features`, loaded from its file (see the module
    docstring for why not by import): 8 s of 16 kHz audio in, an (80, 800) log-mel out."""
    path = _pipecat_root() / _FEATURES_IN_PACKAGE
    if not path.is_file():
        raise ModelError(
            f"Smart Turn feature extraction not found: {path} does not exist; this version "
            f"of pipecat-ai does not have it. Fix: {_INSTALL_FIX}"
        )
    spec = importlib.util.spec_from_file_location("annie_smart_turn_features", path)
    if spec is None or spec.loader is None:
        raise ModelError(f"could not load the Smart Turn feature extraction from {path}")
    module: ModuleType = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        features: Features = module.compute_whisper_log_mel_features
    except Exception as exc:
        raise ModelError(
            f"could not load the Smart Turn feature extraction from {path}: {exc}. "
            f"Fix: {_INSTALL_FIX}"
        ) from exc
    return features


def last_window(pcm: Pcm) -> Pcm:
    """The last 8 s of `pcm`, with silence in front when it is shorter (as pipecat's analyzer
    does: the end of the turn is what the model judges, so the end is what is kept)."""
    audio = np.asarray(pcm, dtype=np.float32).reshape(-1)
    n = WINDOW_S * RATE
    if len(audio) >= n:
        return audio[-n:]
    return np.concatenate([np.zeros(n - len(audio), dtype=np.float32), audio])


class SmartTurnDetector(EndOfTurnDetector):
    """Smart Turn v3 on onnxruntime: one session, shared by every connection.

    onnxruntime's `InferenceSession.run` may be called from several threads at once, and the
    feature extraction is a pure function, so calls are not serialized here: two sessions
    ending their turns together each get a core rather than waiting for each other. Each run
    uses one thread (intra-op), as pipecat's analyzer does by default: on a 2-core machine
    Whisper and the LLM need the rest.
    """

    def __init__(self, path: Path, *, threads: int = 1, threshold: float = THRESHOLD) -> None:
        import onnxruntime

        self.path = path
        self.threshold = threshold
        if not path.is_file():
            raise ModelError(
                f"end-of-turn detector model not found: {path} does not exist. Fix: point "
                f"models.turn_path at a Smart Turn v3 .onnx file, or {_INSTALL_FIX}"
            )
        self._features = pipecat_features()
        opts = onnxruntime.SessionOptions()
        opts.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = threads
        opts.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 4
        # The model is int8 in QDQ form. Fused into integer kernels, its verdicts depend on the
        # CPU: without VNNI (AVX2 only, e.g. AMD Zen 2/3) the u8s8 products saturate, and
        # "Can you tell me about," after 500 ms of silence read 0.93 finished here against 0.30
        # as the graph defines it. Kept unfused, each weight is dequantized and multiplied in
        # float: the graph's own arithmetic, on every CPU alike to float rounding, for about
        # 15% more time per verdict.
        opts.add_session_config_entry("session.disable_quant_qdq", "1")
        try:
            self._session = onnxruntime.InferenceSession(
                str(path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ModelError(
                f"could not load the end-of-turn detector model {path}: {exc}. "
                f"Fix: {_INSTALL_FIX}, "
                "or set models.turn_path to a Smart Turn v3 .onnx file"
            ) from exc
        inputs = {i.name: i.shape for i in self._session.get_inputs()}
        shape: Any = inputs.get("input_features")
        if shape is None or list(shape)[1:] != [80, WINDOW_S * 100]:
            raise ModelError(
                f"end-of-turn detector model {path} has inputs {inputs}; expected Smart Turn v3 "
                f"(input_features of shape [batch, 80, {WINDOW_S * 100}])"
            )

    def features(self, pcm: Pcm) -> npt.NDArray[np.float32]:
        """The model's input for `pcm`: pipecat's log-mel of the last 8 s, batch of one."""
        mel = self._features(last_window(pcm), do_normalize=True)
        return np.asarray(mel, dtype=np.float32)[None, :, :]

    def complete_probability(self, pcm: Pcm) -> float:
        if np.asarray(pcm).size == 0:
            raise ValueError("the end-of-turn detector needs some audio to judge, got none")
        (out, *_) = self._session.run(None, {"input_features": self.features(pcm)})
        # The model ends in a sigmoid: the output is already a probability.
        return float(np.asarray(out).reshape(-1)[0])
