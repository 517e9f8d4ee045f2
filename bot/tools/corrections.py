"""Which saved note a correction replaces, so memory stays true after "actually, it's Ana".

Two ways, both deterministic. The model may name the note (`save_note(..., replaces="note-7")`,
an id it read from search or the briefing). Otherwise, when the user's words in this turn are
a correction (`compaction.protected.is_correction`), the note being saved replaces the current
note closest to it in meaning, provided that note is very close (cosine at least
`SUPERSEDE_MIN_SIMILARITY`: the same statement with one detail changed) and, when the user
said what was wrong ("…, not Anna"), that note contains the wrong word. Without an embedder
there is no similarity, and nothing is replaced by guesswork.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from compaction.protected import is_correction

if TYPE_CHECKING:
    from memory.rows import NoteRow
    from memory.store import Store

# With all-MiniLM-L6-v2 a restatement with one name, number or word changed scores about
# 0.77-0.95 ("my sister's name is Ana" / "... Anna": 0.82), while a different fact about the
# same person scores about 0.3-0.5 ("my sister lives in Porto": 0.29, "my brother's name is
# Tom": 0.51).
SUPERSEDE_MIN_SIMILARITY = 0.75
CANDIDATES = 3

# "…, not Anna" / "not Anna but Ana" / "instead of Anna": the word the user says was wrong.
_WRONG = re.compile(r"\b(?:not|instead of|rather than)\s+([\w'-]+)", re.IGNORECASE)


def user_words(store: Store, session_id: str, turn_id: str) -> str:
    """What the user said in this turn (the request the tool call answers)."""
    if not session_id or not turn_id:
        return ""
    events = store.events.find(session_id, kinds=["user"], turn_id=turn_id)
    return " ".join(e.content for e in events)


def wrong_words(text: str) -> list[str]:
    return [m.group(1).lower() for m in _WRONG.finditer(text)]


def corrected_note(store: Store, new_text: str, said: str, embedding: Any | None) -> NoteRow | None:
    """The current note that `new_text` corrects, when `said` is a correction; else None.

    `embedding` is `new_text`'s embedding (None: no embedder, so no match)."""
    if embedding is None or not is_correction(said):
        return None
    vector = np.asarray(embedding, dtype=np.float32).reshape(-1)
    hits = store.notes.search(
        new_text,
        limit=CANDIDATES,
        vector=vector,
        min_similarity=SUPERSEDE_MIN_SIMILARITY,
    )
    wrong = wrong_words(said)
    for hit in hits:
        words = set(re.findall(r"[\w'-]+", hit.text.lower()))
        if hit.text.strip() == new_text.strip():
            continue  # the same note again is a repeat, not a correction
        if wrong and not words.intersection(wrong):
            continue
        return store.notes.get(hit.id)
    return None
