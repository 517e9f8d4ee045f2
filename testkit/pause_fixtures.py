"""Recorded utterances with a mid-sentence pause, for counting turns ended inside a pause.

`bench voice` plays each of these into the real server and counts how often the endpointer
ends the turn in the pause instead of after the whole sentence. They are made the way
testkit/turn_fixtures.py makes its cut-off clips: the whole sentence is synthesized with a
comma where the speaker pauses, so the words before the pause keep the unfinished prosody they
have inside the sentence; the audio is cut inside Piper's short comma pause, silence is
inserted to make the pause the wanted length (400-900 ms), and the rest of the sentence is
appended. Piper's own pause stays in, split around the inserted silence, so its edges sound
as Piper made them.

The voices vary: Piper's speaking rate (`length_scale`) and its prosody and duration noise
(`noise_scale`, `noise_w_scale`). The shipped voice has a single speaker, so there is no
speaker to choose; the noise settings are what makes one rendition sound unlike another. Two
thirds of the clips get white noise added, at one of two levels (their pause then holds
noise, not digital silence, as a real microphone's would). Piper samples afresh on every call, so
the clips are synthesized once and kept: 16 kHz mono 16-bit WAVs in `tests/fixtures/pauses/`
with `manifest.json` beside them (where each pause starts and how long it is, in samples at
16 kHz). Regenerate with `python -m testkit.pause_fixtures`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.base import Pcm
from models.pcm import resample
from testkit.turn_fixtures import RATE, pauses, read_wav, write_wav

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "pauses"
MANIFEST = FIXTURES / "manifest.json"
LEAD_S = 0.3
TRAIL_S = 0.3
# How much of Piper's own comma pause stays on each side of the inserted silence.
_KEEP_S = 0.06

# A "|" marks the pause: the comma before it is where Piper pauses and the clip is stretched.
SENTENCES: tuple[str, ...] = (
    "Remind me to call, | the dentist tomorrow morning.",
    "Can you tell me about, | the weather in Paris today?",
    "I was wondering if, | you could check my tasks.",
    "Add a note that, | the meeting moved to Friday.",
    "What did I say about, | the budget last week?",
    "Set a reminder for, | half past three this afternoon.",
    "Are there any tasks, | pending on me right now?",
    "Tell me what is on, | my schedule for tomorrow.",
)
# (length_scale, noise_scale, noise_w_scale): the default voice, a quicker and livelier one,
# a slower and flatter one.
VOICES: tuple[tuple[float, float, float], ...] = (
    (1.0, 0.667, 0.8),
    (0.85, 0.9, 1.0),
    (1.2, 0.45, 0.6),
)
# White noise RMS (of full scale): none, quiet room, a fan nearby.
NOISE_LEVELS: tuple[float, ...] = (0.0, 0.002, 0.006)


@dataclass(frozen=True)
class PauseClip:
    """One fixture: `pause_at` is the sample where the pause starts (the end of the first
    half's last word), `pause_samples` its length; both at 16 kHz."""

    name: str
    text: str
    length_scale: float
    noise_scale: float
    noise_w_scale: float
    noise_rms: float
    pause_at: int
    pause_samples: int

    @property
    def pause_ms(self) -> float:
        return self.pause_samples * 1000.0 / RATE

    @property
    def first_half(self) -> str:
        return self.text.split("|")[0].strip()


def _synthesize(voice: Any, text: str, scales: tuple[float, float, float]) -> Pcm:
    from piper import SynthesisConfig

    length, noise, noise_w = scales
    config = SynthesisConfig(length_scale=length, noise_scale=noise, noise_w_scale=noise_w)
    spoken = " ".join(text.replace("|", " ").split())
    parts = [c.audio_float_array for c in voice.synthesize(spoken, syn_config=config)]
    pcm = np.concatenate(parts).astype(np.float32)
    return resample(pcm, int(voice.config.sample_rate), RATE)


def render(
    voice: Any,
    text: str,
    scales: tuple[float, float, float],
    pause_s: float,
    noise: float,
    seed: int,
    which: int = 0,
) -> tuple[Pcm, int, int]:
    """The clip, where its pause starts and how long it is (samples); `which`: the pause to
    stretch, counted from 0 (a list's commas each make one). Retries a rendition that has
    too few comma pauses (Piper's duration noise sometimes nearly drops one)."""
    rng = np.random.default_rng(seed)
    for _ in range(5):
        speech = _synthesize(voice, text, scales)
        found = pauses(speech)
        if len(found) > which:
            break
    else:
        raise ValueError(f"no pause {which} heard in {text!r} at {scales}")
    start, end = found[which]
    keep = int(_KEEP_S * RATE)
    head = speech[: min(end, start + keep)]
    tail = speech[max(start, end - keep) :]
    kept = len(head) - start + (end - max(start, end - keep))
    inserted = np.zeros(max(0, int(pause_s * RATE) - kept), np.float32)
    lead = np.zeros(int(LEAD_S * RATE), np.float32)
    trail = np.zeros(int(TRAIL_S * RATE), np.float32)
    pcm = np.concatenate([lead, head, inserted, tail, trail]).astype(np.float32)
    if noise > 0:
        pcm = pcm + rng.normal(0.0, noise, pcm.size).astype(np.float32)
    pause_at = len(lead) + start
    return np.clip(pcm, -1.0, 1.0), pause_at, kept + len(inserted)


def plan() -> list[tuple[str, str, tuple[float, float, float], float, float]]:
    """(name, text, voice, pause seconds, noise) for every clip: each sentence in each voice,
    pauses spread over 400-900 ms, each noise level on a third of them."""
    rows = []
    i = 0
    pauses_s = np.linspace(0.4, 0.9, 6)
    for s, text in enumerate(SENTENCES):
        for v, scales in enumerate(VOICES):
            pause_s = float(pauses_s[(s + 2 * v) % len(pauses_s)])
            noise = NOISE_LEVELS[(s + v) % len(NOISE_LEVELS)]
            slug = "_".join(text.split("|")[0].lower().replace(",", "").split()[:4])
            rows.append((f"{i:02d}_{slug}_v{v}", text, scales, round(pause_s, 2), noise))
            i += 1
    return rows


def load(folder: Path = FIXTURES) -> list[PauseClip]:
    """The recorded clips' manifest."""
    data = json.loads((folder / "manifest.json").read_text())
    return [PauseClip(**row) for row in data["clips"]]


def read(clip: PauseClip, folder: Path = FIXTURES) -> Pcm:
    """A recorded clip as 16 kHz float32 in [-1, 1]."""
    return read_wav(folder / f"{clip.name}.wav")


def main() -> None:
    """Synthesize every clip, write the WAVs and the manifest, and print each pause."""
    from piper import PiperVoice

    from config import load_settings
    from models import resolve

    voice = PiperVoice.load(str(resolve("tts", load_settings()).path))
    clips: list[PauseClip] = []
    for seed, (name, text, scales, pause_s, noise) in enumerate(plan()):
        pcm, pause_at, pause_samples = render(voice, text, scales, pause_s, noise, seed)
        write_wav(FIXTURES / f"{name}.wav", pcm)
        clip = PauseClip(name, text, *scales, noise, pause_at, pause_samples)
        clips.append(clip)
        print(f"{name:40s} {len(pcm) / RATE:4.1f}s pause {clip.pause_ms:4.0f} ms noise {noise}")
    manifest = {"rate": RATE, "clips": [asdict(c) for c in clips]}
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
