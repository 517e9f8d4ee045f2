"""Where each note came from and how far to trust it (`store.provenance`).

A note's text is written once (`store.notes`); its provenance lives beside it in the same row
and may change: the version (how many corrections stand behind it), the confidence, the
sensitivity ("private" notes never reach a prompt that a tool can send off the machine), an
expiry, the event whose words it came from, and a note it contradicts. Every change moves the
record's `updated_at`, which is the note's freshness wherever it is shown.

Contradictions are found by rules, not guessed: a note that states a value for a subject
("my sister's name is Ann", "the user's favourite colour is green") contradicts a current
note stating a different value for the same subject. Both are kept, both lose confidence, and
the new one names the old until the user says which stands (`resolve`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.db import NotFoundError, Records, StoreBase, guarded, where_in
from memory.rows import (
    NOTE_COLUMNS,
    SENSITIVITIES,
    NoteRow,
    make_id,
    note_row,
    parse_id,
    to_iso,
    utc_now,
)
from memory.search import Notes

# How far a note is trusted: the user's own words, Annie's reading of them, what rules noticed
# in the user's words with no one confirming it (`context.noticed`), or one side of an open
# contradiction.
SAID = 1.0
INFERRED = 0.7
NOTICED = 0.6
DISPUTED = 0.5


# The user asking that something stay between them and Annie.
_PRIVATE = re.compile(
    r"\b(?:private|privately|confidential|secret|between (?:us|you and me|the two of us)"
    r"|keep (?:it|this|that) to yourself|(?:don ?t|do not|never) (?:tell|share) (?:it|this|that"
    r"|anyone))\b",
    re.IGNORECASE,
)


def asks_private(said: str) -> bool:
    """Whether the user's words ask that what they say stay private (a note made from them,
    and the episode of the words themselves, are then private)."""
    return _PRIVATE.search(said.replace("'", "").replace("\u2019", "")) is not None


@dataclass(frozen=True)
class Claim:
    """A note read as "subject = value" (both normalized), when it has that shape."""

    subject: str
    value: str


# "X is/are/was Y", "X is called/named Y", "X lives in / works at Y". X must be somebody's
# or something's attribute (a possessive), so "the weather is nice" is no claim at all.
_CLAIM = re.compile(
    r"^(?P<subject>.+?)\s+(?P<verb>is called|is named|are called|lives in|works at|works for"
    r"|was born on|was born in|is|are|was)\s+(?P<value>.+)$"
)
_OWNER = re.compile(r"^(?:my|your|the user s|user s|our)\b|\b\w+ s\b")
# A value ends at a clause break: "Ann, and she lives in Porto" states Ann.
_VALUE_END = re.compile(r"\s*(?:,|;| and | but | who | which | because ).*$")
_LEAD = re.compile(r"^(?:the |a |an )")


def _plain(text: str) -> str:
    text = text.lower().replace("\u2019", "'")
    text = re.sub(r"'s\b", " s", text)
    text = re.sub(r"[^a-z0-9 ]+", " ", text)
    return " ".join(text.split())


def claim(text: str) -> Claim | None:
    """The subject and value a note states, or None when it states no single value."""
    plain = _plain(_VALUE_END.sub("", text.strip().rstrip(".!")))
    m = _CLAIM.match(plain)
    if m is None:
        return None
    subject = _LEAD.sub("", m.group("subject"))
    subject = re.sub(r"^(?:the user s|user s|your)\b", "my", subject)
    if _OWNER.search(subject) is None or len(subject.split()) > 6:
        return None
    verb = m.group("verb")
    if verb in ("is called", "is named", "are called"):
        subject += " s name"
    elif verb not in ("is", "are", "was"):
        subject += " " + verb
    value = _LEAD.sub("", m.group("value")).strip()
    if not value or value.startswith(("not ", "also ", "too ")):
        return None
    return Claim(subject, value)


def disagree(a: Claim, b: Claim) -> bool:
    """Same subject, different value; a value that merely adds words ("Ann" and "Ann Smith")
    is not a contradiction."""
    if a.subject != b.subject or a.value == b.value:
        return False
    x, y = set(a.value.split()), set(b.value.split())
    return not (x <= y or y <= x)


class Provenance(Records):
    """The provenance columns of the notes table."""

    table_name = "notes"

    def __init__(self, store: StoreBase, notes: Notes) -> None:
        super().__init__(store)
        self.notes = notes

    @guarded
    def get(self, note_id: str) -> NoteRow:
        rows = self.table.rows_where("n = ?", [parse_id("notes", note_id)], select=NOTE_COLUMNS)
        row = next(iter(rows), None)
        if row is None:
            raise NotFoundError(f"no note {note_id}")
        return note_row(row)

    @guarded
    def of(self, note_ids: Iterable[str]) -> dict[str, NoteRow]:
        """The notes named (unknown ids are left out), by id."""
        ns = sorted({parse_id("notes", i) for i in note_ids})
        if not ns:
            return {}
        rows = self.table.rows_where(where_in("n", ns), ns, select=NOTE_COLUMNS)
        return {make_id("notes", r["n"]): note_row(r) for r in rows}

    @guarded
    def stamp(
        self,
        note_id: str,
        *,
        version: int | None = None,
        confidence: float | None = None,
        sensitivity: str | None = None,
        expires_at: str | None = None,
        source_event: str | None = None,
        now: datetime | None = None,
    ) -> NoteRow:
        """Set any of a note's provenance fields; its `updated_at` becomes now."""
        fields: dict[str, Any] = {"updated_at": to_iso(now or utc_now())}
        if version is not None:
            if version < 1:
                raise ValueError("a note's version starts at 1")
            fields["version"] = int(version)
        if confidence is not None:
            if not 0.0 <= confidence <= 1.0:
                raise ValueError(f"confidence is between 0 and 1, not {confidence}")
            fields["confidence"] = float(confidence)
        if sensitivity is not None:
            if sensitivity not in SENSITIVITIES:
                raise ValueError(
                    f"sensitivity must be {' or '.join(SENSITIVITIES)}, not '{sensitivity}'"
                )
            fields["sensitivity"] = sensitivity
        if expires_at is not None:
            fields["expires_at"] = expires_at or None
        if source_event is not None:
            fields["source_event"] = source_event
        n = parse_id("notes", note_id)
        sets = ", ".join(f"{k} = ?" for k in fields)
        with self.store.write() as c:
            cur = c.execute(f"UPDATE notes SET {sets} WHERE n = ?", [*fields.values(), n])
        if not cur.rowcount:
            raise NotFoundError(f"no note {make_id('notes', n)}")
        return self.get(note_id)

    # --- contradictions -------------------------------------------------------------------

    @guarded
    def contradicted(self, text: str, candidates: Iterable[NoteRow]) -> NoteRow | None:
        """The current note among `candidates` that `text` contradicts, or None."""
        new = claim(text)
        if new is None:
            return None
        for note in candidates:
            if note.superseded_by:
                continue
            old = claim(note.text)
            if old is not None and disagree(new, old):
                return note
        return None

    @guarded
    def flag(self, new_id: str, old_id: str, now: datetime | None = None) -> None:
        """`new_id` contradicts `old_id`: both kept, both disputed, the new one names the old."""
        stamp = to_iso(now or utc_now())
        new, old = parse_id("notes", new_id), parse_id("notes", old_id)
        with self.store.write() as c:
            c.execute(
                "UPDATE notes SET contradicts = ?, confidence = ?, updated_at = ? WHERE n = ?",
                (old, DISPUTED, stamp, new),
            )
            c.execute(
                "UPDATE notes SET confidence = min(confidence, ?), updated_at = ? WHERE n = ?",
                (DISPUTED, stamp, old),
            )

    @guarded
    def disputes(self) -> list[tuple[NoteRow, NoteRow]]:
        """Open contradictions (new note, the note it contradicts), both still current."""
        rows = self.store.all(
            f"SELECT {NOTE_COLUMNS} FROM notes WHERE contradicts IS NOT NULL"
            " AND superseded_by IS NULL ORDER BY n"
        )
        news = [note_row(r) for r in rows]
        olds = self.of(n.contradicts for n in news)
        return [
            (n, olds[n.contradicts])
            for n in news
            if n.contradicts in olds and not olds[n.contradicts].superseded_by
        ]

    def resolve(self, keep_id: str, now: datetime | None = None) -> list[str]:
        """The user said `keep_id` stands: every current note in dispute with it is superseded
        by it (`store.notes.supersede`), and it is trusted again. Returns the ids superseded."""
        keep = self.get(keep_id)
        losers = {keep.contradicts} if keep.contradicts else set()
        rows = self.store.all(
            "SELECT n FROM notes WHERE contradicts = ? AND superseded_by IS NULL",
            [parse_id("notes", keep.id)],
        )
        losers |= {make_id("notes", r["n"]) for r in rows}
        losers.discard(keep.id)
        for loser in sorted(losers):
            self.notes.supersede(loser, keep.id)
        with self.store.write() as c:
            c.execute(
                "UPDATE notes SET contradicts = NULL, confidence = ?, updated_at = ? WHERE n = ?",
                (SAID, to_iso(now or utc_now()), parse_id("notes", keep.id)),
            )
        return sorted(losers)

    # --- private notes --------------------------------------------------------------------

    @guarded
    def private_among(self, note_ids: Iterable[str]) -> set[str]:
        """Which of `note_ids` are private."""
        return {i for i, n in self.of(note_ids).items() if n.private}

    @guarded
    def private_version(self) -> int:
        """A number the database moves on every change to a private note or episode (the
        egress check rebuilds its index only then; migration m010's triggers keep it)."""
        row = self.store.one("SELECT version FROM private_version WHERE id = 1")
        return int(row["version"]) if row is not None else 0

    @guarded
    def private_items(self) -> list[tuple[str, str]]:
        """Every private note and episode, superseded ones included: (id, text)."""
        rows = self.store.all("SELECT n, text FROM notes WHERE sensitivity = 'private'")
        return [(make_id("notes", r["n"]), r["text"]) for r in rows]

    def private_events(self, event_ids: Iterable[str]) -> set[str]:
        """Which of `event_ids` hold private words: a private episode or note was made from
        them (the user asked that they be kept, or Annie's answer to such words)."""
        return self._private_values("source_event", event_ids)

    def private_texts(self, texts: Iterable[str]) -> set[str]:
        """Which of `texts` are the text of a private note (a briefing quoting one from an old
        checkpoint must not show it)."""
        return self._private_values("text", texts)

    @guarded
    def _private_values(self, column: str, values: Iterable[str]) -> set[str]:
        """Which of `values` some private row holds in `column` (a fixed column name)."""
        wanted = sorted(set(values))
        if not wanted:
            return set()
        rows = self.store.all(
            f"SELECT DISTINCT {column} AS v FROM notes WHERE sensitivity = 'private' AND "
            f"{where_in(column, wanted)}",
            wanted,
        )
        return {r["v"] for r in rows}
