"""The state path's candidate stage: intents proposed by nearest labelled examples.

The embedding model Annie already loads for notes (all-MiniLM-L6-v2) embeds the labelled
examples once (`context.intent_examples`), on first use. A question the anchored rules did
not place is embedded and compared with them; each label scores the mean cosine of its two
nearest examples, and the intents that beat the "none" label and a floor are proposed, best
first. Proposals are only candidates: `context.state_vocab` confirms or drops each one.
Embedding a question costs about 10 ms on a 2-core CPU, so `state_rules.match` asks only
when some intent's vocabulary covers the sentence (a set lookup); most turns bound for the
model are never embedded.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from context.intent_examples import EXAMPLES, Label
from context.state_rules import INTENTS, Intent, normalize
from memory.search import EmbedderLike

log = logging.getLogger(__name__)

# Tuned on the tuning half of the labelled set (testkit.status_set): below this a label's
# nearest examples are too far to mean anything, whatever "none" scores.
FLOOR = 0.4
# How far an intent must score above "none": a tie is a question the examples cannot tell
# apart from one that belongs to the model.
MARGIN = 0.02
# How many nearest examples of a label make its score: two, so one odd example cannot win.
NEAREST = 2
# How many recent questions' vectors are kept (384 floats each).
RECENT = 256


class IntentIndex:
    """Proposes status intents for normalized text; empty when none is likely.

    `embedder` is asked for on each call and may return None (not loaded, or it failed):
    then nothing is proposed and the anchored rules alone decide."""

    def __init__(
        self,
        embedder: Callable[[], EmbedderLike | None],
        examples: dict[Label, tuple[str, ...]] = EXAMPLES,
    ) -> None:
        self.embedder = embedder
        self.labels: list[Label] = [label for label, texts in examples.items() for _ in texts]
        self.texts = [normalize(t) for texts in examples.values() for t in texts]
        labels = np.asarray(self.labels)
        self._rows = {label: labels == label for label in examples}
        self._matrix: npt.NDArray[np.float32] | None = None
        self._lock = threading.Lock()
        # Recent questions' vectors: people repeat their status questions word for word.
        self._recent: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self.embeddings = 0  # questions embedded (not served from `_recent`), and the last cost
        self.last_embed_ms = 0.0

    def ready(self) -> bool:
        return self._matrix is not None

    def warm(self) -> bool:
        """Embed the examples now (about a second); False without an embedder."""
        model = self.embedder()
        return model is not None and self._examples(model) is not None

    def _examples(self, model: EmbedderLike) -> npt.NDArray[np.float32]:
        with self._lock:
            if self._matrix is None:
                self._matrix = np.asarray(model.embed(self.texts), dtype=np.float32)
            return self._matrix

    def scores(self, core: str) -> dict[Label, float]:
        """Each label's score for normalized text: the mean cosine of its nearest examples."""
        model = self.embedder()
        if model is None:
            return {}
        try:
            sims = self._examples(model) @ self._vector(model, core)
        except Exception as exc:
            # A failing model costs the candidates, never the turn: the rules still decide.
            log.warning("the state path's classifier failed: %s", exc)
            return {}
        out: dict[Label, float] = {}
        for label, rows in self._rows.items():
            out[label] = float(np.sort(sims[rows])[-NEAREST:].mean())
        return out

    def _vector(self, model: EmbedderLike, core: str) -> npt.NDArray[np.float32]:
        # Under the lock: sessions may ask from worker threads, and the model runs one
        # call at a time anyway.
        with self._lock:
            vector = self._recent.get(core)
            if vector is not None:
                self._recent.move_to_end(core)
                return vector
            t0 = time.perf_counter()
            vector = np.asarray(model.embed([core])[0], dtype=np.float32)
            self.last_embed_ms = (time.perf_counter() - t0) * 1000.0
            self.embeddings += 1
            self._recent[core] = vector
            if len(self._recent) > RECENT:
                self._recent.popitem(last=False)
            return vector

    def forget_recent(self) -> None:
        """Drop the remembered question vectors (benchmarks measure cold turns)."""
        self._recent.clear()

    def propose(self, core: str) -> list[Intent]:
        """Intents worth checking for `core`, best first."""
        scores = self.scores(core)
        if not scores:
            return []
        bar = max(FLOOR, scores.get("none", -1.0) + MARGIN)
        return sorted((i for i in INTENTS if scores.get(i, -1.0) >= bar), key=lambda i: -scores[i])
