"""Remembering without the model: after each turn, what the user stated becomes typed notes.

The rules of `context.noticed` read the user's words for facts, preferences, people, plans and
dates; each is written as a note of that kind through the same write path as a saved note
(`bot.tools.note_writes`), so it carries its provenance: the user's event it came from, the
time, and a confidence below a note the user or the model confirmed (`NOTICED`). What the
small model never saves is remembered all the same, and the state path's note answers, the
briefing and recall read it as they read any note.

- **Once.** The same words noted again add nothing (the current note stands). A statement that
  says more about the same subject than a current note ("my sister lives in Porto now" after
  "my sister lives in Porto") supersedes it; one that says less is known already and is not
  written.
- **Contradictions are raised, not settled.** A statement that gives another value for a
  subject a current note holds is the answer chain's to raise before the model runs
  (`bot.turn.answers.StatedFacts`, with the same rule and the same noticed notes); its yes
  writes the note. A turn the chain answered that way notes nothing here, and anything the
  rule still finds at write time is kept beside the old note, both marked disputed.
- **The model's note wins.** When the model saved a note in the turn, nothing is noticed: the
  confirmed note is the one to keep.
- **A plan ends.** A plan's note expires the day after the last day it names.

A failure to write is logged and loses nothing: the words are the turn's episode already.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime, timedelta

from bot.tools.note_writes import Origin, write_note
from context.noticed import Noticed, notice
from memory.db import StoreError
from memory.provenance import NOTICED, claim, disagree
from memory.rows import NoteRow
from memory.store import Store

log = logging.getLogger(__name__)
# The notes' `source`: noticed by rules, not saved by the model or the user.
SOURCE = "noticed"


def note_stated(
    store: Store,
    session_id: str,
    turn_id: str,
    event_id: str,
    text: str,
    now: datetime | None = None,
) -> list[str]:
    """Write the notes the user's words `text` state (its event is `event_id`); their ids."""
    found = notice(text, now or datetime.now().astimezone())
    if not found:
        return []
    try:
        if store.events.find(session_id, kinds=["note_write"], turn_id=turn_id):
            return []  # the model saved a note this turn
        origin = Origin(SOURCE, text, session_id, turn_id, event_id)
        return [i for item in found if (i := _write(store, item, origin)) is not None]
    except (StoreError, sqlite3.Error) as exc:
        log.warning("could not note what the user stated: %s", exc)
        return []


def _write(store: Store, item: Noticed, origin: Origin) -> str | None:
    old = _restated(store, item.text)
    if old is False:
        return None
    expires = (item.until + timedelta(days=1)).isoformat() if item.until else None
    out = write_note(
        store,
        item.text,
        kind=item.kind,
        origin=origin,
        embedding=None,  # embedded in idle time, off the voice path
        replaces=old.id if isinstance(old, NoteRow) else None,
        private=item.private,
        expires=expires,
        trust=NOTICED,
    )
    return str(out.data["id"]) if out.ok and out.data else None


def _restated(store: Store, text: str) -> NoteRow | bool | None:
    """The current note `text` restates with more words (to supersede), False when a current
    note says all it says already, None when neither."""
    new = claim(text)
    if new is None:
        return None
    hits = store.notes.search_fts(new.subject, limit=20, written_only=True)
    notes = store.provenance.of(h.id for h in hits)
    for hit in hits:
        note = notes.get(hit.id)
        current = note is not None and not note.superseded_by and not note.expired()
        old = claim(note.text) if note is not None and current else None
        if note is None or old is None or old.subject != new.subject or disagree(new, old):
            continue
        if set(new.value.split()) <= set(old.value.split()):
            return False
        return note
    return None
