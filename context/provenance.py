"""Provenance of what a turn recalls, and the rule that keeps private notes in.

Recalled notes carry their record's provenance into the envelope: their freshness is the
note's `updated_at` (not the moment the item was admitted), their sensitivity and expiry come
from the note, and a note past its expiry is not recalled at all. The conversation's scope
(its pending approval, the task it is working on) is read here for the envelope too.

The private-note rule: a note marked private enters a prompt only as per-turn evidence, and
only for a call in which no tool that can send data off the machine (`Tool.outside`: the web
tools) is loaded or allowed without asking. It never enters the session's fixed head (the
briefing and notes last the whole session, whatever is loaded later). When such a tool is
loaded or allowed after a private note was recalled, the note is withheld from view (cleared
to a placeholder naming its id) before the next call. `search_memory` follows the same rule.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from context.inputs import Evidence
from context.wording import count_words
from memory.rows import from_iso, utc_now

if TYPE_CHECKING:
    from context.conversation import Conversation
    from memory.store import Store

log = logging.getLogger(__name__)

PRIVATE = "private"


def withheld_placeholder(note_id: str, what: str = "note") -> str:
    return (
        f"[private {what} {note_id} withheld: a tool that can send data off this machine is "
        "loaded or allowed]"
    )


def withheld_count(n: int) -> str:
    """The line that says how many private notes a listing left out."""
    return (
        f"({count_words(n, 'private note')} left out while a tool that can send data off this "
        "machine is loaded or allowed.)"
    )


def with_provenance(
    store: Store, evidence: Sequence[Evidence], *, sends_out: bool, now: datetime | None = None
) -> list[Evidence]:
    """`evidence` with each note's record time, sensitivity and expiry; expired notes, and
    private ones when `sends_out`, are left out. Evidence that is not a stored note passes
    as it is. A store failure drops the notes it could not vouch for (never a private one
    by accident) and is logged."""
    if not evidence:
        return []
    at = now or utc_now()
    ids = [e.id for e in evidence if e.id.startswith("note-")]
    try:
        notes = store.provenance.of(ids)
    except Exception as exc:
        log.warning("note provenance could not be read; notes left out of this turn: %s", exc)
        return [e for e in evidence if not e.id.startswith("note-")]
    out: list[Evidence] = []
    for ev in evidence:
        note = notes.get(ev.id)
        if note is None:
            if not ev.id.startswith("note-"):
                out.append(ev)
            continue
        if note.superseded_by or note.expired(at) or (note.private and sends_out):
            continue
        out.append(
            replace(
                ev,
                observed_at=from_iso(note.updated_at).timestamp(),
                sensitivity=note.sensitivity,
                expires_at=from_iso(note.expires_at).timestamp() if note.expires_at else None,
            )
        )
    return out


def withhold_private(conv: Conversation) -> list[str]:
    """Clear every private item still in view (a tool that sends data out is now loaded or
    allowed); returns the ids of the notes withheld."""
    held: list[str] = []
    for item in conv.items:
        if item.cleared or item.meta.get("sensitivity") != PRIVATE:
            continue
        note_id = item.source_ids[0] if item.source_ids else item.id
        conv.clear([item], withheld_placeholder(note_id))
        held.append(note_id)
    return held


def scope_ids(store: Store, session_id: str) -> tuple[str | None, str | None]:
    """(active task id, pending approval id) for the envelope's scope; (None, None) when the
    store cannot say (the scope is then left unknown, never guessed)."""
    try:
        return store.projections.scope(session_id)
    except Exception as exc:
        log.warning("the conversation's scope could not be read: %s", exc)
        return None, None
