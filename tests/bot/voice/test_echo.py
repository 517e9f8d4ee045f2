"""Telling Annie's echo from the user's voice, offline on recorded speech (`bot.voice.echo`).

What the server sends is a recorded sentence; what the microphone hears is built from it the
way a room would: the same audio 0.25 s later at -20 dB, another speaker's sentence, or both.
Timestamps carry a few milliseconds of wobble, as frames processed in batches do.
"""

from __future__ import annotations

import numpy as np

from bot.voice.echo import EchoCheck
from models.pcm import resample
from testkit.pause_fixtures import FIXTURES
from testkit.turn_fixtures import read_wav

ANNIE = read_wav(FIXTURES / "00_remind_me_to_call_v0.wav")
USER = read_wav(FIXTURES / "09_add_a_note_that_v0.wav")
DELAY_S = 0.25


def verdicts(mic: np.ndarray, sent: np.ndarray = ANNIE) -> list[bool]:
    """`is_echo` for every microphone frame with sound in it, once Annie has been heard; the
    two streams are fed in the order of their times, as the server gets them."""
    check = EchoCheck()
    out = (resample(sent, 16000, 48000) * 32767).astype(np.int16)
    t0 = 100.0
    rng = np.random.default_rng(1)
    events: list[tuple[float, int, int]] = [(t0 + i * 0.02, 0, i) for i in range(out.size // 960)]
    for j in range(mic.size // 512):
        arrives = t0 + DELAY_S + (j + 1) * 0.032 + 0.006 * rng.random()
        events.append((arrives, 1, j))
    got = []
    for at, kind, n in sorted(events):
        if kind == 0:
            check.sent(out[n * 960 : (n + 1) * 960], at)
            continue
        frame = mic[n * 512 : (n + 1) * 512]
        check.heard(frame, (n + 1) * 32.0, at)
        loud = float(np.sqrt(np.mean(frame**2))) > 0.003
        if loud and n * 0.032 > 0.8:  # her first word is echoed by then: 0.3 s of lead-in
            got.append(check.is_echo())
    return got


def test_her_voice_coming_back_quieter_and_later_is_echo() -> None:
    got = verdicts(0.1 * ANNIE)
    assert len(got) > 20 and np.mean(got) > 0.9


def test_another_voice_is_not_echo() -> None:
    n = min(ANNIE.size, USER.size)
    got = verdicts(USER[:n], ANNIE[:n])
    assert len(got) > 20 and np.mean(got) < 0.1


def test_the_user_talking_over_her_echo_is_not_echo_once_the_path_is_known() -> None:
    n = min(ANNIE.size, USER.size)
    lead = int(16000 * 1.0)  # a second of her echo alone first: the path is learned
    sent = np.concatenate([ANNIE[:n], ANNIE[:n]])
    echo = 0.1 * np.concatenate([np.zeros(0), sent])
    mic = echo.copy()
    mic[n + lead // 4 : n + lead // 4 + n - lead // 4] += USER[: n - lead // 4]
    got = verdicts(mic[: 2 * n], sent)
    second_half = got[len(got) // 2 :]
    assert np.mean(got[: len(got) // 4]) > 0.8  # echo alone
    assert np.mean(second_half) < 0.5  # her echo and the user's louder voice
