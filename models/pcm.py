"""PCM helpers the engines share: resampling between the voice's rate and Whisper's 16 kHz."""

from __future__ import annotations

import numpy as np
from scipy.signal import resample_poly

from models.base import Pcm


def resample(pcm: Pcm, src_rate: int, dst_rate: int) -> Pcm:
    """Polyphase resampling of mono float32 PCM (Piper's 22,050 Hz to 16 kHz and back)."""
    audio = np.asarray(pcm, dtype=np.float32).reshape(-1)
    if src_rate == dst_rate or len(audio) == 0:
        return audio.copy()
    g = int(np.gcd(src_rate, dst_rate))
    out = resample_poly(audio, dst_rate // g, src_rate // g)
    return np.clip(out, -1.0, 1.0).astype(np.float32)
