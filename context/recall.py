"""Per-turn recall: the notes related to what the user just said, for the evidence lane.

Before each model turn the request is run through the store's hybrid search, and the best
few notes whose cosine similarity to it reaches a floor become evidence items. The floor is
what keeps this from padding every turn with the nearest note: fused search scores are
ranks, so only the similarity says whether a note is relevant at all. With all-MiniLM-L6-v2,
paraphrased questions about a note score about 0.4-0.9 and unrelated requests ("tell me a
joke", "set a timer") under 0.32. The assembler then skips notes already in view (the
briefing, earlier evidence) and keeps the lane within its budget.

A question tied to a time ("what did I tell you last Tuesday about the boiler?", "before the
trip") is searched without its time phrase, first among the notes written in the window it
names (`context/when.py`; an event is dated by the note that mentions it), and those notes
rank ahead of any from other times, which only fill the places left. So the Tuesday note wins
over a newer one on the same subject, and a slightly wrong date still finds the note.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

import numpy as np
import numpy.typing as npt

from config import Settings
from context.inputs import Evidence
from context.when import When, parse
from memory.rows import Hit, from_iso
from memory.search import EmbedderLike
from memory.store import Store

log = logging.getLogger(__name__)

# Added to the fused score of a note written in the window the question names, so it ranks
# (and the evidence lane, which orders by score, admits it) ahead of every note from another
# time; scores are at most 1 + LEXICAL_WEIGHT, so a bonus over that would do.
IN_WINDOW_BONUS = 2.0
# Notes are ordered by cosine similarity plus this share of their relative bm25 (see
# `Notes.search`): enough to lift an exact name or number, too little to outvote the meaning.
LEXICAL_WEIGHT = 0.1
# A note this close (cosine) to one already recalled, none of whose words the recalled note
# lacks, adds nothing the lane does not hold: it is passed over, and the place goes to the next
# note. Closeness alone is not enough: "Mia is coming over on Tuesday for dinner" and "... on
# Friday ..." score above 0.9 and differ in the one word that matters, and recalling only one
# of them would be a confident wrong answer.
NEAR_DUPLICATE = 0.9
_WORD = re.compile(r"[a-z0-9]+")
# Candidates searched per place in the lane, so passing over near-duplicates still fills it.
POOL = 3


def recall(
    store: Store,
    text: str,
    settings: Settings,
    embedder: Callable[[], EmbedderLike | None],
    now: datetime | None = None,
) -> list[Evidence]:
    """Evidence for `text`, best first; empty when recall is off, nothing is stored, or it fails.

    `embedder` is asked for only when there are notes, so a store without any never loads
    one. Blocking (it embeds the query): call it from a worker thread on the voice path. A
    failure is logged and costs only the recall, never the turn. `now` (aware; the machine's
    local time by default) is what "yesterday" and "last Tuesday" count back from.
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
        when = parse(text, now or datetime.now().astimezone())
        query = when.rest if when is not None and when.rest.strip() else text
        hits = search(
            store,
            query,
            model.embed([query])[0],
            when,
            limit=ctx.evidence_hits,
            floor=ctx.evidence_min_similarity,
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


def search(
    store: Store,
    query: str,
    vector: npt.NDArray[np.float32],
    when: When | None,
    *,
    limit: int,
    floor: float,
) -> list[Hit]:
    """The notes for `query` above the similarity floor, those written within `when` first,
    near-duplicates of a better note passed over."""
    return _distinct(
        store, _ranked(store, query, vector, when, limit=POOL * limit, floor=floor), limit
    )


def _distinct(store: Store, hits: list[Hit], limit: int) -> list[Hit]:
    if len(hits) <= 1:
        return hits[:limit]
    vectors = store.notes.embeddings([h.id for h in hits])
    words = [set(_WORD.findall(h.text.lower())) for h in hits]
    kept: list[int] = []
    for i in range(len(hits)):
        close = [k for k in kept if float(vectors[k] @ vectors[i]) >= NEAR_DUPLICATE]
        if any(words[i] <= words[k] for k in close):
            continue
        kept.append(i)
        if len(kept) == limit:
            break
    return [hits[i] for i in kept]


def _ranked(
    store: Store,
    query: str,
    vector: npt.NDArray[np.float32],
    when: When | None,
    *,
    limit: int,
    floor: float,
) -> list[Hit]:
    if when is not None and when.anchor:
        when = _dated(store, when)
    if when is None or (when.since is None and when.until is None):
        return store.notes.search(
            query, limit=limit, vector=vector, min_similarity=floor, lexical_weight=LEXICAL_WEIGHT
        )
    inside = store.notes.search(
        query,
        since=when.since,
        until=when.until,
        limit=limit,
        vector=vector,
        min_similarity=floor,
        lexical_weight=LEXICAL_WEIGHT,
    )
    hits = [replace(h, score=h.score + IN_WINDOW_BONUS) for h in inside]
    if len(hits) < limit:
        seen = {h.id for h in hits}
        others = store.notes.search(
            query,
            limit=limit + len(hits),
            vector=vector,
            min_similarity=floor,
            lexical_weight=LEXICAL_WEIGHT,
        )
        hits += [h for h in others if h.id not in seen][: limit - len(hits)]
    return hits


def _dated(store: Store, when: When) -> When | None:
    """The window of "before the trip": the trip is dated by the note that best matches it."""
    found = store.notes.search_fts(when.anchor, limit=1)
    if not found:
        return None
    at = from_iso(found[0].timestamp)
    # "after the move" starts after the note about the move, which is not an answer itself.
    return when.bounded(at if when.relation == "before" else at + timedelta(microseconds=1))
