"""Speech engines on the shipped models: Piper speaks, Whisper hears it, Silero finds it."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from bench.hearing import word_errors, words
from models.base import STT, TTS, VAD
from models.pcm import resample

SENTENCE = "Please remind me to call the dentist tomorrow morning at nine."


def to_16k(pcm: npt.NDArray[np.float32], rate: int) -> npt.NDArray[np.float32]:
    return resample(pcm, rate, 16000)


def speak(tts: TTS, text: str) -> npt.NDArray[np.float32]:
    chunks = list(tts.synthesize_iter(text))
    return np.concatenate([c.pcm for c in chunks]).astype(np.float32)


def word_error_rate(reference: str, hypothesis: str) -> float:
    return word_errors(reference, hypothesis) / max(1, len(words(reference)))


def test_word_error_rate_helper() -> None:
    assert word_error_rate("a b c d", "a b c d") == 0.0
    assert word_error_rate("a b c d", "a x c") == 0.5


async def test_tts_streams_one_chunk_per_sentence_of_plausible_length(tts: TTS) -> None:
    text = "Hello there. This is a longer second sentence with several more words in it!"
    chunks = [c async for c in tts.synthesize(text)]
    assert [c.text for c in chunks] == [
        "Hello there.",
        "This is a longer second sentence with several more words in it!",
    ]
    assert all(c.sample_rate == tts.sample_rate == 22050 for c in chunks)
    assert all(c.pcm.dtype == np.float32 and np.abs(c.pcm).max() <= 1.0 for c in chunks)
    durations = [len(c.pcm) / c.sample_rate for c in chunks]
    # Conversational speech runs at about 2 to 4 words per second.
    for chunk, seconds in zip(chunks, durations, strict=True):
        n = len(chunk.text.split())
        assert n / 5.0 <= seconds <= n / 1.2 + 1.0, (chunk.text, seconds)
    assert durations[1] > 2 * durations[0]


async def test_stt_transcribes_piper_speech(tts: TTS, stt: STT) -> None:
    pcm = to_16k(speak(tts, SENTENCE), tts.sample_rate)
    transcript = await stt.transcribe(pcm)
    assert word_error_rate(SENTENCE, transcript.text) <= 0.20, transcript.text
    assert transcript.segments
    assert abs(transcript.duration_s - len(pcm) / 16000) < 1e-6
    assert transcript.elapsed_s > 0


async def test_stt_of_silence_is_empty(stt: STT) -> None:
    # A second and a half of digital silence goes through Whisper (with the vocabulary
    # prompt, which must not be echoed back) and comes out as no words.
    transcript = await stt.transcribe(np.zeros(24_000, dtype=np.float32))
    assert transcript.text == ""
    assert transcript.segments == []
    assert transcript.duration_s == 1.5 and transcript.elapsed_s > 0
    empty = await stt.transcribe(np.zeros(0, dtype=np.float32))
    assert empty.text == "" and empty.segments == []


def speech_bounds(pcm: npt.NDArray[np.float32], rate: int) -> tuple[float, float]:
    """Where the voice is audible, from 10 ms frame energy (the ground truth for VAD)."""
    hop = rate // 100
    frames = pcm[: len(pcm) // hop * hop].reshape(-1, hop)
    loud = np.flatnonzero(np.sqrt((frames**2).mean(axis=1)) > 0.02)
    return loud[0] * hop / rate, (loud[-1] + 1) * hop / rate


def test_vad_finds_the_speech_span_within_150_ms(tts: TTS, vad: VAD) -> None:
    speech = to_16k(speak(tts, SENTENCE), tts.sample_rate)
    pad = np.zeros(16000, dtype=np.float32)
    audio = np.concatenate([pad, speech, pad, pad])
    start, end = speech_bounds(audio, 16000)

    stream = vad.new_stream()
    frame = stream.frame_samples
    probs = [stream.probability(audio[i : i + frame]) for i in range(0, len(audio) - frame, frame)]
    voiced = [i for i, p in enumerate(probs) if p >= 0.5]
    assert voiced
    found_start, found_end = voiced[0] * frame / 16000, (voiced[-1] + 1) * frame / 16000
    assert abs(found_start - start) <= 0.150, (found_start, start)
    assert abs(found_end - end) <= 0.150, (found_end, end)
    assert max(probs[: int(0.8 * 16000) // frame]) < 0.5  # leading silence is silence


def test_vad_streams_keep_separate_state(tts: TTS, vad: VAD) -> None:
    speech = to_16k(speak(tts, "Hello there, how are you?"), tts.sample_rate)
    a, b = vad.new_stream(), vad.new_stream()
    frame = a.frame_samples
    silence = np.zeros(frame, dtype=np.float32)
    chunks = [speech[i : i + frame] for i in range(0, len(speech) - frame, frame)]
    a_probs = [a.probability(c) for c in chunks]
    # Interleaving another stream must not change the first one's answers.
    a.reset()
    mixed = []
    for c in chunks:
        b.probability(silence)
        mixed.append(a.probability(c))
    assert np.allclose(a_probs, mixed)
    assert max(a_probs) > 0.5
