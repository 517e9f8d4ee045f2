"""Writing a note with its provenance: the save_note tool's work, below its schema.

A note is saved with where it came from (the user's event in this turn, its time), how far it
is trusted (`memory.provenance`: the user's own words, or Annie's reading of them), its version
(one more than the note it corrects), its sensitivity and its expiry. Every write is also a
typed record of its own in the event log (`note_write`: the note, the source event, the time,
what it replaced or contradicts), so an audit never has to read it out of a reply.

A note that corrects another supersedes it (`bot.tools.corrections`). A note that contradicts
a current one without being a correction (same subject, another value: "my sister's name is
Ann" then "... Anna") is kept beside it, both are marked disputed, and the result tells the
model to ask the user which stands. Saving one side again, or naming the other with
`replaces`, settles it. A note the user asks to keep private ("keep this between us") is
marked private from their words, whatever the model passed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.tools.base import ToolOutput
from bot.tools.corrections import corrected_note
from memory.fts import STOPWORDS
from memory.provenance import INFERRED, SAID, asks_private, claim
from memory.rows import parse_when, to_iso, utc_now

if TYPE_CHECKING:
    from memory.rows import NoteRow
    from memory.store import Store

_WORD = re.compile(r"[a-z0-9]+")


def _content(text: str) -> set[str]:
    words = _WORD.findall(text.lower().replace("'s", ""))
    return {w[:5] for w in words if len(w) > 2 and w not in STOPWORDS and w != "user"}


def confidence(text: str, said: str) -> float:
    """SAID when most of the note's content words are the user's own this turn, else
    INFERRED (Annie's reading, or a note saved with no user words to compare)."""
    note = _content(text)
    if not note or not said:
        return INFERRED
    return SAID if len(note & _content(said)) >= len(note) / 2 else INFERRED


@dataclass(frozen=True)
class Origin:
    """Where a note write came from: the conversation, its turn, the user's words and event."""

    source: str
    said: str = ""
    session_id: str = ""
    turn_id: str = ""
    source_event: str = ""


def origin_of(store: Store, session_id: str, turn_id: str, source: str) -> Origin:
    """The user's words and their event in this turn (the note's source)."""
    if not session_id or not turn_id:
        return Origin(source, session_id=session_id, turn_id=turn_id)
    events = store.events.find(session_id, kinds=["user"], turn_id=turn_id)
    said = " ".join(e.content for e in events)
    return Origin(source, said, session_id, turn_id, events[-1].id if events else "")


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.lower().rstrip(".!").split()) == " ".join(b.lower().rstrip(".!").split())


def _current_twin(store: Store, text: str) -> NoteRow | None:
    """A current note with the same words (saving it again adds nothing). Only notes: the
    user's own words are an episode with the same text, and are no note yet."""
    hits = store.notes.search_fts(text, limit=10, written_only=True)
    ids = [h.id for h in hits if _same_text(h.text, text)]
    notes = store.provenance.of(ids)
    return next((n for i in ids if (n := notes.get(i)) and not n.superseded_by), None)


def _contradicted(store: Store, text: str) -> NoteRow | None:
    """The current note `text` contradicts by rule (same subject, another value), or None."""
    found = claim(text)
    if found is None:
        return None
    hits = store.notes.search_fts(found.subject, limit=20, written_only=True)
    notes = store.provenance.of(h.id for h in hits)
    return store.provenance.contradicted(text, [notes[h.id] for h in hits if h.id in notes])


def _log(store: Store, origin: Origin, note_id: str, text: str, meta: dict[str, Any]) -> None:
    if origin.session_id:
        record = {"note_id": note_id, "source_event": origin.source_event, **meta}
        record["at"] = to_iso(utc_now())
        store.events.append(
            origin.session_id, "note_write", text, turn_id=origin.turn_id, meta=record
        )


def write_note(
    store: Store,
    text: str,
    *,
    kind: str,
    origin: Origin,
    embedding: Any | None,
    replaces: str | None = None,
    private: bool = False,
    expires: str | None = None,
    trust: float | None = None,
) -> ToolOutput:
    """Save `text` with its provenance; see the module docstring. `trust` sets the confidence
    (by default it is read from how much of the note is the user's own words)."""
    try:
        expires_at = parse_when(expires)
    except ValueError as exc:
        return ToolOutput(f"error: {exc}; nothing was saved", ok=False)
    old = None
    if replaces:
        old = store.notes.get(replaces)
        if old is None:
            return ToolOutput(f"error: no note {replaces}; nothing was saved", ok=False)
        # An id read from an older context may name a note already corrected: the correction
        # applies to its current version.
        while old is not None and old.superseded_by:
            old = store.notes.get(old.superseded_by)
    else:
        old = corrected_note(store, text, origin.said, embedding)
    sensitivity = "private" if private or asks_private(origin.said) else "normal"
    if embedding is None and store.notes.embedder is not None:
        # Embedded before the transaction: the model's milliseconds hold no write lock.
        embedding = store.notes.embedder.embed([text.strip()])[0]
    # One transaction: a write that fails part way (a locked or full database) leaves no note
    # behind its error, so the model is never told "failed" about a note that was kept.
    with store.write():
        twin = _current_twin(store, text)
        if twin is not None:
            return _settle(store, twin, old, origin, sensitivity)
        note_id = store.notes.add(text, kind=kind, source=origin.source, embedding=embedding)
        prov = store.provenance.of([old.id]) if old is not None else {}
        version = prov[old.id].version + 1 if old is not None and old.id in prov else 1
        store.provenance.stamp(
            note_id,
            version=version,
            confidence=confidence(text, origin.said) if trust is None else trust,
            sensitivity=sensitivity,
            expires_at=expires_at or "",
            source_event=origin.source_event,
        )
        meta: dict[str, Any] = {"version": version, "sensitivity": sensitivity}
        data: dict[str, Any] = {"id": note_id}
        said = f"Saved {note_id}" + (" (private)" if sensitivity == "private" else "")
        if old is not None:
            store.notes.supersede(old.id, note_id)
            meta["replaces"] = data["replaces"] = old.id
            text_out = f"{said}; it replaces {old.id} ('{old.text[:80]}'), which is no longer used."
        elif (against := _contradicted(store, text)) is not None:
            store.provenance.flag(note_id, against.id)
            meta["contradicts"] = data["contradicts"] = against.id
            text_out = (
                f"{said}, but it contradicts {against.id} ('{against.text[:80]}'). Both are kept. "
                "Ask the user which one is right."
            )
        else:
            text_out = f"{said}."
        _log(store, origin, note_id, text, meta)
        return ToolOutput(text_out, data=data)


def _settle(
    store: Store, twin: NoteRow, old: NoteRow | None, origin: Origin, sensitivity: str
) -> ToolOutput:
    """The same words are saved already: no second copy. Saying them again settles a dispute
    they are part of (they stand), or replaces the note being corrected."""
    data: dict[str, Any] = {"id": twin.id}
    settled = store.provenance.resolve(twin.id)
    if old is not None and old.id != twin.id and old.id not in settled:
        store.notes.supersede(old.id, twin.id)
        settled.append(old.id)
    if sensitivity == "private" and not twin.private:
        store.provenance.stamp(twin.id, sensitivity="private")
    text = f"Already saved as {twin.id}."
    if settled:
        data["replaces"] = settled[0]
        text = f"Kept {twin.id}; it now replaces {', '.join(settled)}, which is no longer used."
    _log(store, origin, twin.id, twin.text, {"kept": True, "replaces": settled})
    return ToolOutput(text, data=data)
