"""Whisper's decoding choices on the project's recorded utterances: the words stay right.

Annie decodes at temperature 0 only, with timestamps, and caps the decoder at a few tokens
per second of audio (models/stt.py says why; `bench stt` measures it). These run the shipped
Whisper tiny.en on recordings from tests/fixtures whose words are known.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.hearing import words
from bench.stt import recordings
from config import ConfigError, Settings, load_settings
from models import load_stt
from models.base import STT
from models.stt import FASTER_WHISPER, Decoding, WhisperSTT

# Recordings each option hears word for word (the voices, speeds and noise levels vary).
CLIPS = (
    "00_remind_me_to_call_v0",
    "04_can_you_tell_me_v1",
    "18_are_there_any_tasks_v0",
    "22_tell_me_what_is_v1",
    "calendar_question",
    "pending_fragile",
)


@pytest.fixture(scope="module")
def clips() -> dict[str, tuple[str, np.ndarray]]:
    return {name: (said, pcm) for name, said, pcm in recordings() if name in CLIPS}


def test_the_defaults_are_greedy_with_timestamps_capped_and_the_full_window(
    stt: STT, model_settings: Settings
) -> None:
    assert isinstance(stt, WhisperSTT)
    assert stt.decoding == Decoding(window_s=30.0, fallback=False, timestamps=True, token_cap=True)
    assert model_settings.models.stt_window_s == 30.0
    assert FASTER_WHISPER.fallback and not FASTER_WHISPER.token_cap


async def test_the_default_decoding_hears_the_recordings_word_for_word(
    stt: STT, clips: dict[str, tuple[str, np.ndarray]]
) -> None:
    assert set(clips) == set(CLIPS)
    for name, (said, pcm) in clips.items():
        heard = await stt.transcribe(pcm)
        assert words(heard.text) == words(said), (name, heard.text)
        assert heard.segments and heard.elapsed_s > 0


def test_the_library_defaults_hear_the_same_words_on_speech(
    stt: STT, clips: dict[str, tuple[str, np.ndarray]]
) -> None:
    # The temperature retries and the uncapped decoder only ever mattered on silence.
    assert isinstance(stt, WhisperSTT)
    for name, (_, pcm) in list(clips.items())[:3]:
        ours = stt.transcribe_blocking(pcm).text
        assert stt.transcribe_blocking(pcm, FASTER_WHISPER).text == ours, name


def test_the_token_cap_stops_the_dots_whisper_writes_on_silence(stt: STT) -> None:
    # With the vocabulary prompt, tiny.en reads 1.5 s of digital silence as ". . . ." and,
    # uncapped, keeps writing dots until its 448-token context is nearly full.
    assert isinstance(stt, WhisperSTT)
    silence = np.zeros(24_000, dtype=np.float32)
    encoded = stt.encode(stt.features(silence))
    capped = " ".join(s.text for s in stt.decode(encoded, 1.5, Decoding()))
    uncapped = " ".join(s.text for s in stt.decode(encoded, 1.5, Decoding(token_cap=False)))
    assert set(capped) <= {".", " "} and set(uncapped) <= {".", " "}
    assert capped.count(".") <= 35 < 100 < uncapped.count(".")
    heard = stt.transcribe_blocking(silence)
    assert heard.text == "" and heard.segments == []


def test_a_short_encoder_window_is_a_setting_up_to_30_s(model_settings: Settings) -> None:
    environ = {"ANNIE_HOME": str(model_settings.home_path), "HF_HUB_OFFLINE": "1"}
    with pytest.raises(ConfigError, match="stt_window_s"):
        load_settings(environ=environ, models={"stt_window_s": 45.0})
    short = load_stt(load_settings(environ=environ, models={"stt_window_s": 10.0}))
    assert isinstance(short, WhisperSTT) and short.decoding.window_s == 10.0


def test_a_short_window_hears_these_recordings_too_and_long_audio_gets_the_full_one(
    stt: STT, clips: dict[str, tuple[str, np.ndarray]]
) -> None:
    assert isinstance(stt, WhisperSTT)
    ten = Decoding(window_s=10.0)
    for name in ("00_remind_me_to_call_v0", "calendar_question", "pending_fragile"):
        said, pcm = clips[name]
        assert words(stt.transcribe_blocking(pcm, ten).text) == words(said), name
    assert stt.window_s(len(clips["calendar_question"][1]) / 16000, ten) == 10.0
    # 9 s of audio does not fit a 10 s window with its 2 s margin: the full window reads it.
    said, pcm = clips["22_tell_me_what_is_v1"]
    long = np.concatenate([pcm, np.zeros(9 * 16000 - len(pcm), np.float32)])
    assert stt.window_s(9.0, ten) == 30.0 and stt.window_s(8.0, ten) == 10.0
    assert stt.window_s(3.0, Decoding()) == 30.0
    assert words(stt.transcribe_blocking(long, ten).text) == words(said)
