"""The chat model on llama.cpp (llama-cpp-python), with incremental evaluation.

One instance serves every session: calls queue on a FIFO lock and run on one worker thread.
Each call evaluates only what its prompt adds to the evaluated tokens (see `llm_cache`), and
fills `last_stats` with what it reused and what it cost. For the best reuse, a caller renders
the assistant's turn from the raw generated text, so the next prompt extends the last one.
"""

from __future__ import annotations

import codecs
import ctypes
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from config import Settings
from models import saved_state
from models.base import CallStats, ModelError, Resolved
from models.chat_template import ChatTemplate
from models.llama_open import open_llama
from models.llm_cache import BatchSizer, Plan, PromptCache, SavedState
from models.resolver import detect_device
from models.streaming import Push, StopMatcher, call_in_thread
from models.templated import ThreadedLLM
from models.tokenizer import gguf_token_text

log = logging.getLogger(__name__)
# The llama.cpp context's n_batch: the most one evaluation takes.
_WHOLE_BATCH = 512
# A user's turn evaluates its prompt in batches this many times a background one.
_TURN_SCALE = 4.0


@dataclass
class _State:
    """A llama.cpp context snapshot: its memory, plus the last token's logits.

    llama.cpp's state data does not bring back the logits of the last decode, so they are
    kept beside it; a prompt that ends exactly at a saved state can then be sampled at once.
    """

    buf: npt.NDArray[np.uint8]
    size: int
    logits: npt.NDArray[np.float32]


class LlamaLLM(ThreadedLLM):
    """A GGUF chat model: own template, exact tokenizer, cancellable streaming."""

    def __init__(
        self,
        resolved: Resolved,
        settings: Settings,
        n_ctx: int | None = None,
        batches: BatchSizer | None = None,
    ) -> None:
        """`batches` sizes the prompt's batches (by default from the measured rate)."""
        import llama_cpp

        self._lc = llama_cpp
        self.resolved = resolved
        self.path: Path = resolved.path
        self.settings = settings
        self.device = detect_device(settings)
        self.n_ctx = int(n_ctx or settings.context.window)
        cfg = settings.models
        t0 = time.perf_counter()
        self._llama = open_llama(
            self.path,
            "could not load the language model",
            "check the file (download it again), use a llama-cpp-python that knows its "
            "architecture, or set models.llm_path to another GGUF",
            n_ctx=self.n_ctx,
            n_batch=_WHOLE_BATCH,
            n_gpu_layers=cfg.llm_gpu_layers if self.device == "cuda" else 0,
            n_threads=cfg.llm_threads or None,
            seed=cfg.llm_seed,
        )
        self.load_s = time.perf_counter() - t0
        self._vocab = llama_cpp.llama_model_get_vocab(self._llama.model)
        metadata: dict[str, str] = dict(self._llama.metadata)
        self.template = ChatTemplate(
            metadata.get("tokenizer.chat_template"),
            gguf_token_text(metadata, self._llama, "bos"),
            gguf_token_text(metadata, self._llama, "eos"),
            name=f"the chat template of {self.path.name}",
        )
        bos = [self._llama.token_bos()] if llama_cpp.llama_vocab_get_add_bos(self._vocab) else []
        model = self._llama.model
        # A recurrent or hybrid model's state cannot be cut back to an earlier token.
        attention_only = not (
            llama_cpp.llama_model_is_recurrent(model) or llama_cpp.llama_model_is_hybrid(model)
        )
        self._cache = PromptCache(
            self.tokenize,
            capacity=cfg.llm_checkpoints,
            bos=bos,
            can_cut=attention_only,
            mark=self.template.message_mark,
        )
        self._batches = batches or BatchSizer()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm")
        self._init_shared()

    # -- text -------------------------------------------------------------------------

    def tokenize(self, text: str) -> list[int]:
        return list(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def detokenize(self, tokens: Sequence[int]) -> str:
        raw: bytes = self._llama.detokenize(list(tokens), special=True)
        return raw.decode("utf-8", errors="replace")

    @property
    def cache_bytes(self) -> int:
        # Read from the event loop while the worker may save or evict one: retry on a race.
        for _ in range(3):
            try:
                held = self._cache.held()
            except RuntimeError:
                continue
            return sum(s.state.buf.nbytes + s.state.logits.nbytes for s in held if s.state)
        return 0

    # -- engine (worker thread only) ------------------------------------------------------

    def _save_state(self) -> _State:
        ctx = self._llama.ctx
        size = int(self._lc.llama_state_get_size(ctx))
        # np.empty, not a ctypes array: that one is zero-filled first, and a 9B model's state
        # is about a gigabyte written between the first and second token of an answer.
        buf = np.empty(size, dtype=np.uint8)
        ptr = buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
        used = int(self._lc.llama_state_get_data(ctx, ptr, size))
        if used > size:
            raise ModelError("llama.cpp could not copy the model state")
        n_vocab = self._llama.n_vocab()
        ptr = self._lc.llama_get_logits_ith(ctx, -1)
        logits = np.ctypeslib.as_array(ptr, shape=(n_vocab,)).astype(np.float32, copy=True)
        return _State(buf, used, logits)

    def _load_state(self, state: _State, tokens: list[int]) -> None:
        ptr = state.buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
        if self._lc.llama_state_set_data(self._llama.ctx, ptr, state.size) != state.size:
            raise ModelError("llama.cpp could not restore a saved model state")
        self._llama.n_tokens = len(tokens)
        self._llama.input_ids[: len(tokens)] = tokens
        ptr = self._lc.llama_get_logits_ith(self._llama.ctx, -1)
        if ptr:
            ctypes.memmove(ptr, state.logits.ctypes.data, state.logits.nbytes)

    def _identity(self) -> list[str]:
        """What a saved state depends on besides its text (`models.saved_state`)."""
        stat = self.path.stat()
        return [
            str(self.path.resolve()),
            str(stat.st_size),
            str(stat.st_mtime_ns),
            str(self.n_ctx),
            self.device,
            str(self._lc.__version__),
        ]

    def _restore_saved(self, directory: Path, prompt: str, stats: CallStats) -> bool:
        t0 = time.perf_counter()
        path = saved_state.state_file(directory, self._identity(), prompt)
        got = saved_state.read(path, prompt)
        if got is None:
            return False
        tokens, boundaries, logits, buf = got
        state = _State(buf, buf.size, logits)
        try:
            # A context that has never decoded has no logits buffer for the saved logits to
            # go into: one token makes it, and loading the state replaces what it did.
            self._llama.reset()
            self._llama.eval(tokens[:1])
            self._load_state(state, tokens)
        except ModelError as exc:
            # Written by a build whose state layout differs, though its version string did not.
            log.warning("the saved model state %s does not load (%s); evaluating afresh", path, exc)
            path.unlink(missing_ok=True)
            self._llama.reset()
            self._cache.clear()
            return False
        saved = SavedState(prompt, tokens, state, boundaries)
        self._cache.start(Plan("restore", tokens, prompt, [], "", saved))
        self._cache.pin_saved(saved)
        stats.plan = "disk"
        stats.prompt_tokens = stats.reused_tokens = len(tokens)
        stats.prefill_s = time.perf_counter() - t0
        return True

    def _write_saved(self, directory: Path, saved: SavedState) -> None:
        state = saved.state
        path = saved_state.state_file(directory, self._identity(), saved.text)
        try:
            saved_state.write(
                path,
                saved.text,
                saved.tokens,
                saved.boundaries,
                state.logits,
                state.buf[: state.size],
            )
        except OSError as exc:  # a full or read-only disk: the next start evaluates again
            log.warning("could not save the model state to %s: %s", path, exc)

    def _save_turn(self) -> None:
        """Save the state at a turn boundary, unless one is saved for this text already."""
        if self._cache.tokens and not self._cache.has_saved(self._cache.text):
            self._cache.save(self._save_state())

    def _apply(
        self, plan: Plan, stats: CallStats, stop: threading.Event | None, background: bool = True
    ) -> None:
        """Bring the model to the plan's prompt; evaluate new tokens in cancellable batches:
        short ones for background work (a user's turn waits behind at most one of them),
        four times longer for a turn (small batches cost throughput), which still sees a
        barge-in or the next typed message within about 0.6 s."""
        t0 = time.perf_counter()
        if plan.kind == "restore" and plan.saved is not None:
            self._load_state(plan.saved.state, plan.keep_tokens)
        elif plan.kind == "cut":
            # `eval` drops the KV cache from `n_tokens` on before it evaluates the suffix.
            self._llama.n_tokens = len(plan.keep_tokens)
        elif plan.kind == "scratch":
            self._llama.reset()
        self._cache.start(plan)
        stats.plan = plan.kind
        stats.prompt_tokens = plan.prompt_tokens
        stats.reused_tokens = len(plan.keep_tokens)
        stats.full_reprefill = not plan.keep_tokens
        new, text, pieces = plan.new_tokens, plan.new_text, plan.pieces
        segments = [(new, text, pieces)]
        if plan.station is not None:
            # The shared head ends inside what is to be evaluated and is not kept yet: stop
            # there and keep it, so later sessions restore it (see `PromptCache.head`).
            at_text, at = plan.station
            segments = [
                (new[:at], text[:at_text], [p for p in pieces if p[1] < at]),
                (new[at:], text[at_text:], [(t - at_text, n - at) for t, n in pieces if n > at]),
            ]
        for i, (tokens, spelled, starts) in enumerate(segments):
            if i and stop is not None and stop.is_set():
                stats.cancelled = True
                break
            done = self._eval_batches(tokens, stats, stop, background, stats.evaluated_tokens)
            if done < len(tokens):
                # Cut short: the cache must spell its tokens exactly, so take the text from them.
                self._cache.evaluated(tokens[:done], self.detokenize(tokens[:done]))
                break
            self._cache.evaluated(tokens, spelled, starts)
            if i + 1 < len(segments):  # at the head's end
                self._cache.save(self._save_state())
                self._cache.pin(self._cache.text)
        stats.prefill_s = time.perf_counter() - t0

    def _eval_batches(
        self,
        new: list[int],
        stats: CallStats,
        stop: threading.Event | None,
        background: bool,
        before: int = 0,
    ) -> int:
        """Evaluate `new` in batches, stopping early once `stop` is set; how many were."""
        done = 0
        while done < len(new):
            take = self._batches.take(len(new) - done, 1.0 if background else _TURN_SCALE)
            batch = new[done : done + take]
            started = time.perf_counter()
            self._llama.eval(batch)
            self._batches.timed(len(batch), started)
            done += len(batch)
            stats.evaluated_tokens = before + done
            if done < len(new) and stop is not None and stop.is_set():
                stats.cancelled = True
                break
        return done

    def _sampler(self, grammar: str | None) -> Any:
        from llama_cpp import _internals

        cfg = self.settings.models
        sampler = _internals.LlamaSampler()
        if grammar:
            ptr = self._lc.llama_sampler_init_grammar(self._vocab, grammar.encode("utf-8"), b"root")
            if not ptr:
                raise ModelError("the GBNF grammar does not parse (it needs a 'root' rule)")
            self._lc.llama_sampler_chain_add(sampler.sampler, ptr)
        if cfg.llm_temperature <= 0:
            sampler.add_greedy()
        else:
            sampler.add_top_k(cfg.llm_top_k)
            sampler.add_top_p(cfg.llm_top_p, 1)
            sampler.add_temp(cfg.llm_temperature)
            sampler.add_dist(cfg.llm_seed)
        return sampler

    def _generate(
        self,
        prompt: str,
        max_tokens: int,
        stops: Sequence[str],
        grammar: str | None,
        flag: threading.Event,
        push: Push,
    ) -> None:
        t0 = time.perf_counter()
        stats = CallStats()
        self._stats = stats
        try:
            plan = self._cache.plan(prompt, self.n_ctx)
            sampler = self._sampler(grammar)
            self._apply(plan, stats, flag, background=False)
            if flag.is_set():
                stats.cancelled = True
                return
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            matcher = StopMatcher(stops)
            ctx = self._llama._ctx
            split_char = False
            for _ in range(max_tokens):
                if self._llama.n_tokens >= self.n_ctx:
                    break
                token = sampler.sample(ctx, -1)
                if self._lc.llama_vocab_is_eog(self._vocab, token):
                    break
                text = decoder.decode(self._llama.detokenize([token], special=True))
                stats.generated_tokens += 1
                out = matcher.feed(text)
                if out:
                    if not stats.first_token_s:
                        stats.first_token_s = time.perf_counter() - t0
                    push(out)
                # Save the state at the turn boundary now: the first piece is already on its
                # way, and the state still holds exactly the prompt.
                if stats.generated_tokens == 1:
                    self._save_turn()
                if matcher.hit:
                    break
                if flag.is_set():
                    stats.cancelled = True
                    break
                self._llama.eval([token])
                self._cache.evaluated([token], text)
                # Bytes of a character split across tokens are not text yet.
                split_char = bool(decoder.getstate()[0])
                if flag.is_set():
                    stats.cancelled = True
                    break
            if split_char:
                # The evaluated tokens end inside a character: mark the cache text so it
                # never claims to spell a prompt that it does not.
                self._cache.text += "\ufffd"
            rest = matcher.flush()
            if rest and not stats.cancelled:
                push(rest)
        finally:
            stats.total_s = time.perf_counter() - t0

    def _evaluate(self, prompt: str, stats: CallStats, stop: threading.Event | None) -> None:
        self._apply(self._cache.plan(prompt, self.n_ctx), stats, stop)
        if not stats.cancelled:  # a turn boundary only: a partial head is not saved
            self._save_turn()

    async def next_logits(self) -> tuple[list[int], npt.NDArray[np.float32]]:
        """The tokens the model holds and the logits it would sample the next one from.

        For checks that incremental evaluation, restores and cancellation leave the model
        exactly where a from-scratch evaluation of the same tokens would.
        """

        def read() -> tuple[list[int], npt.NDArray[np.float32]]:
            ptr = self._lc.llama_get_logits_ith(self._llama.ctx, -1)
            logits = np.ctypeslib.as_array(ptr, shape=(self._llama.n_vocab(),))
            return list(self._cache.tokens), logits.astype(np.float32, copy=True)

        result: tuple[list[int], npt.NDArray[np.float32]] = await call_in_thread(
            self._executor, self._locks.get(), read
        )
        return result

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self._cache.drop_all()
        self._llama.close()
