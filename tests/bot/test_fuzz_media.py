"""Generated hostile input on the media and model surfaces, in the suite: each surface of
`testkit.fuzz_media` and `testkit.fuzz_model` at a few dozen to a few hundred cases (the bench
runs 10,000), with its kept failing cases first.

The SDP and data-channel surfaces each start one real `python -m bot serve` over their own
home; audio and the model's output run in this process on the models the suite has loaded
(Silero, Whisper tiny.en, the SmolLM2 tokenizer behind a scripted model).
"""

from __future__ import annotations

import json
from pathlib import Path

from models.base import STT, VAD, Tokenizer
from testkit.fuzz import SurfaceReport
from testkit.fuzz_media import WHISPER_EVERY, audio, datachannel, sdp
from testkit.fuzz_model import model_output


def _clean(report: SurfaceReport, cases: int) -> None:
    assert report.cases >= cases
    assert report.failures == 0, json.dumps(report.distinct, indent=1, ensure_ascii=False)


def test_audio_surface(tmp_path: Path, stt: STT, vad: VAD) -> None:
    # 200 cases: 10 of them on through Whisper.
    _clean(audio(200, 1, tmp_path, stt=stt, vad=vad), 200)
    assert 200 // WHISPER_EVERY == 10


def test_model_output_surface(tmp_path: Path, tokenizer: Tokenizer) -> None:
    _clean(model_output(120, 1, tmp_path, tokenizer=tokenizer), 120)


def test_sdp_surface(tmp_path: Path) -> None:
    _clean(sdp(40, 1, tmp_path), 40)


def test_datachannel_surface(tmp_path: Path) -> None:
    _clean(datachannel(15, 1, tmp_path), 15)
