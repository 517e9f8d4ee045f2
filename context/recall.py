"""Per-turn recall: the notes related to what the user just said, for the evidence lane.

Before each model turn the request is run through the store's hybrid search, and the best
few notes whose cosine similarity to it reaches a floor become evidence items. The floor is
what keeps this from padding every turn with the nearest note: fused search scores are
ranks, so only the similarity says whether a note is relevant at all. With all-MiniLM-L6-v2,
paraphrased questions about a note score about 0.4-0.9 and unrelated requests ("tell me a
joke", "set a timer") under 0.32. The assembler then skips notes already in view (the
briefing, earlier evidence) and keeps the lane within its budget.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from config import Settings
from context.inputs import Evidence
from memory.rows import from_iso
from memory.search import EmbedderLike
from memory.store import Store

log = logging.getLogger(__name__)


def recall(
    store: Store,
    text: str,
    settings: Settings,
    embedder: Callable[[], EmbedderLike | None],
) -> list[Evidence]:
    """Evidence for `text`; empty when recall is off, nothing is stored, or it fails.

    `embedder` is asked for only when there are notes, so a store without any never loads
    one. Blocking (it embeds the query): call it from a worker thread on the voice path. A
    failure is logged and costs only the recall, never the turn.
    """
    ctx = settings.context
    if ctx.evidence_hits <= 0 or not text.strip():
        return []
    try:
        if not store.notes.any():
            return []
        model = store.notes.embedder or embedder()
        if model is None:
            return []  # no similarity, no relevance floor: search_memory still works
        hits = store.notes.search(
            text,
            limit=ctx.evidence_hits,
            vector=model.embed([text])[0],
            min_similarity=ctx.evidence_min_similarity,
        )
    except Exception as exc:
        log.warning("recall for the evidence lane failed: %s", exc)
        return []
    return [
        Evidence(
            id=hit.id,
            text=hit.text,
            source_type=f"{hit.kind} note" if hit.kind != "note" else "note",
            score=hit.score,
            observed_at=from_iso(hit.timestamp).timestamp(),
            query=text,
        )
        for hit in hits
    ]
