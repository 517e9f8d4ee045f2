"""Endpointing and barge-in decisions, driven by synthetic speech probabilities."""

from __future__ import annotations

import numpy as np

from bot.endpoint import (
    FRAME_MS,
    FRAME_SAMPLES,
    BargeInDetector,
    EndpointConfig,
    Endpointer,
    EndpointEvent,
    SpeechDiscarded,
    SpeechEnded,
    SpeechStarted,
    trailing_silence_ms,
)
from config import load_settings

CFG = EndpointConfig(threshold=0.5, silence_ms=480, min_speech_ms=250, pre_roll_ms=192)


def frames(n: int, value: float) -> list[np.ndarray]:
    return [np.full(FRAME_SAMPLES, value, dtype=np.float32) for _ in range(n)]


def run(ep: Endpointer, pattern: list[tuple[int, float]]) -> list[EndpointEvent]:
    """pattern: (frame count, probability); each frame's samples carry its index for checks."""
    events: list[EndpointEvent] = []
    for count, prob in pattern:
        for _ in range(count):
            index = round(ep.now_ms / FRAME_MS)
            events += ep.push(np.full(FRAME_SAMPLES, index, dtype=np.float32), prob)
    return events


def test_utterance_has_pre_roll_and_ends_after_the_silence_window() -> None:
    ep = Endpointer(CFG)
    events = run(ep, [(20, 0.05), (30, 0.9), (20, 0.05)])
    started = [e for e in events if isinstance(e, SpeechStarted)]
    ended = [e for e in events if isinstance(e, SpeechEnded)]
    assert len(started) == 1 and len(ended) == 1
    assert started[0].start_ms == 20 * FRAME_MS
    end = ended[0]
    assert end.end_ms == 50 * FRAME_MS
    # 480 ms of silence at 32 ms a frame: the 15th silent frame closes the window.
    assert end.fired_ms == 65 * FRAME_MS
    assert trailing_silence_ms(end) == 15 * FRAME_MS
    first_index = int(end.pcm[0])
    assert first_index == 20 - 6  # six frames (192 ms) of pre-roll
    assert end.pcm.size % FRAME_SAMPLES == 0
    assert int(end.pcm[-1]) == 49 + 5  # a short tail after the last voiced frame
    assert end.voiced_ms == 30 * FRAME_MS
    assert not ep.in_speech and ep.voiced_ms == 0


def test_a_cough_is_discarded() -> None:
    ep = Endpointer(CFG)
    events = run(ep, [(5, 0.0), (4, 0.95), (20, 0.0)])
    assert events == [SpeechDiscarded(voiced_ms=4 * FRAME_MS)]


def test_hysteresis_keeps_a_soft_word_inside_the_utterance() -> None:
    ep = Endpointer(CFG)
    # 0.4 is below the start threshold but above threshold - 0.15: still speech.
    events = run(ep, [(10, 0.9), (40, 0.4), (10, 0.9), (16, 0.1)])
    ended = [e for e in events if isinstance(e, SpeechEnded)]
    assert len(ended) == 1
    assert ended[0].voiced_ms == 60 * FRAME_MS


def test_pauses_shorter_than_the_window_do_not_split() -> None:
    ep = Endpointer(CFG)
    events = run(ep, [(10, 0.9), (12, 0.0), (10, 0.9), (16, 0.0)])
    assert [type(e) for e in events] == [SpeechStarted, SpeechEnded]


def test_endless_speech_is_cut_at_the_maximum() -> None:
    ep = Endpointer(EndpointConfig(max_speech_ms=1000))
    events = run(ep, [(40, 0.9)])
    ended = [e for e in events if isinstance(e, SpeechEnded)]
    assert len(ended) == 1 and ended[0].forced


def test_settings_feed_the_config() -> None:
    settings = load_settings(vad={"silence_ms": 600, "min_speech_ms": 100})
    cfg = EndpointConfig.from_settings(settings.vad)
    assert (cfg.silence_ms, cfg.min_speech_ms) == (600.0, 100.0)


def test_barge_in_ignores_the_guard_interval_and_needs_sustained_speech() -> None:
    det = BargeInDetector(threshold=0.5, guard_ms=300, min_speech_ms=160)
    # Annie silent: never.
    assert not any(det.push(0.99, None) for _ in range(20))
    # Inside the guard interval: her own voice leaking in does not count.
    assert not any(det.push(0.99, ms) for ms in range(0, 300, 32))
    # After the guard: five voiced frames (160 ms) are needed.
    results = [det.push(0.99, 320.0 + 32 * i) for i in range(5)]
    assert results == [False, False, False, False, True]


def test_barge_in_tolerates_one_gap_but_not_two() -> None:
    det = BargeInDetector(threshold=0.5, guard_ms=0, min_speech_ms=160)
    seq = [0.9, 0.9, 0.1, 0.9, 0.9]
    assert [det.push(p, 1000.0) for p in seq] == [False, False, False, False, False]
    assert det.push(0.9, 1000.0)  # 5 voiced frames with one gap
    det.reset()
    seq = [0.9, 0.9, 0.1, 0.1, 0.9, 0.9, 0.9]
    assert not any(det.push(p, 1000.0) for p in seq)
