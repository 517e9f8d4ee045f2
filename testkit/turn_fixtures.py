"""Recorded turns for the end-of-turn tests: Piper sentences, whole or stopped mid-sentence.

A cut-off turn is made the way a person pauses: the whole sentence is synthesized with a comma
where the speaker pauses, and the audio is cut inside that pause, so the words before it keep
the unfinished prosody they have inside the sentence. Synthesizing the short text alone
("Remind me to call") would not do: Piper ends every utterance with a falling, sentence-final
contour, and Smart Turn, which hears prosody rather than words, calls those complete (0.97-0.99
over three renditions each).

Piper samples its prosody afresh on every call, so the clips are synthesized once and kept
(16 kHz mono 16-bit WAVs in `tests/fixtures/turn/`). Each clip is what the detector is asked
about in the runtime: 300 ms of silence before the speech (the pre-roll) and 200 ms after it
(the short silence that triggers the question). Regenerate with
`python -m testkit.turn_fixtures`, which also prints what Whisper hears in each clip and the
detector's probability for it.
"""

from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.base import TTS, Pcm
from models.pcm import resample

RATE = 16000
LEAD_S = 0.3
TRAIL_S = 0.2
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "turn"

# 10 ms analysis frames for finding the pause between two words.
_FRAME = RATE // 100


@dataclass(frozen=True)
class TurnClip:
    """One fixture. `text` is synthesized whole; a "|" in it marks a cut: the clip stops in
    the pause that the comma before the "|" makes, before the words after it are spoken."""

    name: str
    text: str

    @property
    def complete(self) -> bool:
        return "|" not in self.text

    @property
    def spoken(self) -> str:
        """The words the clip actually contains."""
        return self.text.split("|")[0].strip()

    @property
    def synthesized(self) -> str:
        return " ".join(self.text.replace("|", " ").split())


CLIPS: tuple[TurnClip, ...] = (
    TurnClip("dentist_reminder", "Remind me to call the dentist tomorrow."),
    TurnClip("calendar_question", "What's on my calendar for tomorrow morning?"),
    TurnClip("meetings_question", "Do I have any meetings today?"),
    # Borderline at 200 ms of silence: Piper's rising yes/no contour on "...pending on me?"
    # scored 0.34-0.92 over twelve renditions (3 below 0.5); this recording scores 0.38.
    TurnClip("pending_question", "Are there any tasks pending on me?"),
    TurnClip("tell_about_cut", "Can you tell me about, | the weather in Paris today?"),
    TurnClip("wondering_cut", "I was wondering if, | you could check my tasks."),
    TurnClip("remind_um_cut", "Remind me to call, um, | the dentist tomorrow."),
    # Judged complete although it is not: 0.85-0.98 over six renditions (see the tests).
    TurnClip("remind_call_cut", "Remind me to call, | the dentist tomorrow."),
)

# A pause is a run of 10 ms frames quieter than this, at least this long; the silences
# inside words (stop closures) are shorter, the comma pauses Piper makes are 200-400 ms.
_QUIET_RMS = 0.004
_MIN_PAUSE_FRAMES = 15


def speak_16k(tts: TTS, text: str) -> Pcm:
    """`text` in the TTS voice, resampled to 16 kHz mono float32."""
    parts = [chunk.pcm for chunk in tts.synthesize_iter(text)]
    return resample(np.concatenate(parts), tts.sample_rate, RATE)


def _frame_rms(pcm: Pcm) -> Pcm:
    n = len(pcm) // _FRAME
    frames = pcm[: n * _FRAME].reshape(n, _FRAME).astype(np.float64)
    return np.sqrt((frames**2).mean(axis=1)).astype(np.float32)


def _voiced_span(pcm: Pcm, floor: float = 0.01) -> tuple[int, int]:
    """First and last sample of the 10 ms frames louder than `floor`."""
    loud = np.flatnonzero(_frame_rms(pcm) > floor)
    if len(loud) == 0:
        return 0, len(pcm)
    return int(loud[0]) * _FRAME, int(loud[-1] + 1) * _FRAME


def pauses(pcm: Pcm) -> list[tuple[int, int]]:
    """(start, end) samples of each pause between the first and last voiced frame."""
    start, end = (i // _FRAME for i in _voiced_span(pcm))
    quiet = _frame_rms(pcm)[start:end] < _QUIET_RMS
    found: list[tuple[int, int]] = []
    i = 0
    while i < len(quiet):
        j = i
        while j < len(quiet) and quiet[j]:
            j += 1
        if j - i >= _MIN_PAUSE_FRAMES:
            found.append(((start + i) * _FRAME, (start + j) * _FRAME))
        i = j + 1
    return found


def render(tts: TTS, clip: TurnClip) -> Pcm:
    """The clip as the detector hears it: pre-roll silence, speech, the short silence."""
    speech = speak_16k(tts, clip.synthesized)
    start, end = _voiced_span(speech)
    if clip.complete:
        stop = end + 2 * _FRAME
    else:
        n = clip.spoken.count(",")
        found = pauses(speech)
        if len(found) < n:
            raise ValueError(f"{clip.name}: heard {len(found)} pauses, wanted at least {n}")
        stop = found[n - 1][0] + _FRAME
    speech = speech[max(0, start - 2 * _FRAME) : stop]
    lead = np.zeros(int(LEAD_S * RATE), np.float32)
    trail = np.zeros(int(TRAIL_S * RATE), np.float32)
    return np.concatenate([lead, speech, trail]).astype(np.float32)


def write_wav(path: Path, pcm: Pcm) -> None:
    samples = np.clip(np.round(pcm * 32767.0), -32768, 32767).astype("<i2")
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.tobytes())


def read_wav(path: Path) -> Pcm:
    """A recorded fixture (16 kHz mono 16-bit WAV) as float32 in [-1, 1]."""
    with wave.open(str(path), "rb") as w:
        if (w.getnchannels(), w.getsampwidth(), w.getframerate()) != (1, 2, RATE):
            raise ValueError(f"{path.name} must be 16 kHz mono 16-bit")
        data = w.readframes(w.getnframes())
    return np.frombuffer(data, "<i2").astype(np.float32) / 32768.0


def read_clip(clip: TurnClip, folder: Path = FIXTURES) -> Pcm:
    """A recorded clip as 16 kHz float32 in [-1, 1]."""
    return read_wav(folder / f"{clip.name}.wav")


def main(argv: list[str] | None = None) -> None:
    """Synthesize the clips named in `argv` (all when none), write them, and print what
    Whisper and the detector make of each. Naming clips keeps the others' recordings."""
    import asyncio
    import sys

    from config import load_settings
    from models import load_end_of_turn_detector, load_stt, load_tts

    names = set(sys.argv[1:] if argv is None else argv)
    unknown = names - {c.name for c in CLIPS}
    if unknown:
        raise SystemExit(f"unknown clips: {sorted(unknown)}")
    settings = load_settings()
    tts, stt, detector = load_tts(settings), load_stt(settings), load_end_of_turn_detector(settings)
    for clip in CLIPS:
        if names and clip.name not in names:
            continue
        write_wav(FIXTURES / f"{clip.name}.wav", render(tts, clip))
        pcm = read_clip(clip)
        heard = asyncio.run(stt.transcribe(pcm)).text.strip()
        p = detector.complete_probability(pcm)
        print(f"{clip.name:20s} p={p:.3f} complete={clip.complete!s:5s} heard={heard!r}")


if __name__ == "__main__":
    main()
